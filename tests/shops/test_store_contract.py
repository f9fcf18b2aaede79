"""What every store of every shop promises (orderbot/shops/store.py), checked on all six,
each opened through the one chooser (orderbot/shops/choice.py):

    shop    json            sqlite               postgres
    sample  JsonStore       SqliteStore          PostgresStore
    retail  JsonShopStore   SqliteRetailStore    PostgresRetailStore

The shops ask different questions of their stores (tests/shops/sample/test_stores.py and
tests/shops/retail/test_retail_store_contract.py hold each shop's own); here the part they
share: opened as its shop, a lookup, the one write (at most once per call key, refused when
computed from what another store has changed since, refused when read-only) and a source
that is not a shop refused in one sentence. Each store is private to its test: a copy of a
file, or a PostgreSQL database copied from a template.
"""

from __future__ import annotations

import ast
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from saying import raises

from orderbot.errors import ConfigError, ToolError
from orderbot.shops import choice
from orderbot.shops.choice import ShopName, open_retail_store, open_shop_store, store_type
from orderbot.shops.retail import actions
from orderbot.shops.source import Source, parse_source
from orderbot.shops.store import ShopStore

PACKAGE = Path(__file__).resolve().parents[2] / "orderbot"
TAU2_DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"


@dataclass(frozen=True)
class Questions:
    """One shop's lookup and write, asked of any of its stores."""

    lookup: Callable[[ShopStore, str], object | None]
    known: str
    unknown: str
    prepare: Callable[[ShopStore], object]  # the one write, computed from what the store holds now
    apply: Callable[[ShopStore, object, str], object]  # ... and made, under a call key
    written: Callable[[ShopStore], bool]  # whether that write shows in the store


def retail_cancel(store):
    order = store.order("#W6779827")
    return actions.cancel_pending_order(order, store.user(order.user_id), "no longer needed")


QUESTIONS: dict[ShopName, Questions] = {
    "sample": Questions(
        lookup=lambda store, order_id: store.get(order_id),
        known="ORD-1002",
        unknown="ORD-9999",
        prepare=lambda store: ("ORD-1002", "不想要了"),
        apply=lambda store, write, key: store.cancel(*write, key, user="C001"),
        written=lambda store: store.get("ORD-1002").status == "已取消",
    ),
    "retail": Questions(
        lookup=lambda store, order_id: store.order(order_id),
        known="#W6779827",
        unknown="#W0000000",
        prepare=retail_cancel,
        apply=lambda store, write, key: store.apply(write, key),
        written=lambda store: store.order("#W6779827").status == "cancelled",
    ),
}
CASES = [(shop, kind) for shop in ("sample", "retail") for kind in ("json", "sqlite", "postgres")]


@pytest.fixture(params=CASES, ids=[f"{shop}-{kind}" for shop, kind in CASES])
def case(request, tmp_path: Path):
    """(shop, the source of a private copy of it, its questions)."""
    from shopkit import make_shop

    shop, kind = request.param
    server = request.getfixturevalue("postgres_server") if kind == "postgres" else None
    if shop == "sample":
        template = request.getfixturevalue("postgres_template") if server else None
        made = make_shop(kind, tmp_path, server, template)
        yield shop, parse_source(made.source), QUESTIONS[shop]
        made.remove()
        return
    if kind == "json":
        shutil.copyfile(TAU2_DB, tmp_path / "shop.json")
        yield shop, parse_source(tmp_path / "shop.json"), QUESTIONS[shop]
        return
    if kind == "sqlite":
        shutil.copyfile(request.getfixturevalue("retail_sqlite_template"), tmp_path / "shop.db")
        yield shop, parse_source(f"sqlite:///{tmp_path / 'shop.db'}"), QUESTIONS[shop]
        return
    database = server.new_database(request.getfixturevalue("retail_postgres_template"))
    yield shop, parse_source(server.url(database)), QUESTIONS[shop]
    server.drop_database(database)


def opened(source: Source, **options) -> ShopStore:
    store = open_shop_store(source, **options)[1]
    assert store is not None
    return store


def test_the_chooser_opens_each_store_as_its_shop(case) -> None:
    shop, source, ask = case
    found, store = open_shop_store(source)
    try:
        assert found == shop
        assert type(store) is store_type(shop, source.kind)
        assert store.source == source.shown and store.writable
        assert store.count() > 0
        assert ask.lookup(store, ask.known) is not None
        assert ask.lookup(store, ask.unknown) is None
    finally:
        store.close()


def test_a_write_is_kept_and_a_repeat_of_its_call_writes_nothing(case) -> None:
    _, source, ask = case
    store = opened(source)
    try:
        write = ask.prepare(store)
        first = ask.apply(store, write, "run-1/call-1")
        assert ask.written(store)
    finally:
        store.close()
    again = opened(source)  # as another process opens it
    try:
        assert ask.written(again)
        assert ask.apply(again, write, "run-1/call-1") == first
    finally:
        again.close()


def test_a_write_another_store_overtook_is_refused(case) -> None:
    """Two stores open on one source, as two desks: under the file lock or in one
    transaction, the second write sees the first and is refused, whatever it had read."""
    _, source, ask = case
    first, second = opened(source), opened(source)
    try:
        late = ask.prepare(second)
        ask.apply(first, ask.prepare(first), "run-1/call-1")
        with pytest.raises(ToolError) as refused:
            ask.apply(second, late, "run-2/call-1")
        assert refused.value.code in ("not_cancellable", "changed_meanwhile")
    finally:
        first.close()
        second.close()


def test_a_store_sees_another_stores_write_once_refreshed(case) -> None:
    _, source, ask = case
    reader, writer = opened(source), opened(source)
    try:
        ask.apply(writer, ask.prepare(writer), "run-1/call-1")
        reader.refresh()
        assert ask.written(reader)
    finally:
        reader.close()
        writer.close()


def test_a_store_opened_read_only_refuses_to_write(case) -> None:
    _, source, ask = case
    store = opened(source, writable=False)
    try:
        assert not store.writable
        with pytest.raises(ToolError) as refused:
            ask.apply(store, ask.prepare(store), "run-1/call-1")
        assert refused.value.code == "read_only"
    finally:
        store.close()
    again = opened(source)
    try:
        assert not ask.written(again)
    finally:
        again.close()


def test_a_source_of_the_other_shop_is_told_apart_and_not_opened(case) -> None:
    shop, source, _ = case
    other: ShopName = "retail" if shop == "sample" else "sample"
    assert open_shop_store(source, wanted=other) == (shop, None)
    if shop == "sample":
        with raises(ConfigError, match="holds the sample shop"):
            open_retail_store(source)
    else:
        open_retail_store(source).close()


@pytest.mark.parametrize("kind", ["json", "sqlite", "postgres"])
def test_a_source_that_holds_no_shop_is_one_sentence(kind: str, tmp_path: Path, request) -> None:
    """Not a shop, not a database, no tables, a wrong password: each a ConfigError (exit 6)
    in one line, and never the password."""
    if kind == "json":
        (tmp_path / "broken.json").write_text('{"orders": [{"order_id": ', encoding="utf-8")
        (tmp_path / "shop.db").write_bytes(sqlite3_bytes(tmp_path))
        sources = [parse_source(tmp_path / "broken.json"), parse_source(tmp_path / "shop.db")]
    elif kind == "sqlite":
        (tmp_path / "text.db").write_text("not a database\n", encoding="utf-8")
        (tmp_path / "empty.db").write_bytes(sqlite3_bytes(tmp_path))
        sources = [parse_source(f"sqlite:///{tmp_path / name}") for name in ("text.db", "empty.db", "absent.db")]
    else:
        server = request.getfixturevalue("postgres_server")
        database = server.new_database()
        request.addfinalizer(lambda: server.drop_database(database))
        sources = [parse_source(server.url(database)), parse_source(server.url(database, password="wrong-secret"))]
    for source in sources:
        with pytest.raises(ConfigError) as refused:
            open_shop_store(source)
        message = str(refused.value)
        assert message and "\n" not in message, message
        assert "wrong-secret" not in message


def sqlite3_bytes(tmp_path: Path) -> bytes:
    """The bytes of a SQLite database with no tables in it."""
    path = tmp_path / "scratch.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (x)")
    connection.execute("DROP TABLE t")
    connection.commit()
    connection.close()
    return path.read_bytes()


STORE_CLASSES = {
    "JsonStore",
    "SqliteStore",
    "PostgresStore",
    "JsonShopStore",
    "SqliteRetailStore",
    "PostgresRetailStore",
}


def test_only_the_chooser_names_a_store_class_outside_its_own_module() -> None:
    """A store is chosen in one place: no other module imports a store class to open it."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(choice.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.relative_to(PACKAGE)}: {a.name}" for a in node.names if a.name in STORE_CLASSES]
    assert found == []
