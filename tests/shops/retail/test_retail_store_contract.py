"""What every retail store promises (orderbot/shops/retail/store.py), checked on each store.

A store is opened by an opener from a tau2-shaped JSON file: `OPENERS` maps a store kind to
a function (source file, scratch directory) -> store; PostgreSQL's needs the test cluster,
so the `opener` fixture makes it. Every test here runs on the JSON file, SQLite and PostgreSQL.
What every store of both shops promises (opened through the chooser, read-only, a source
that holds no shop) is tests/shops/test_store_contract.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from retailkit import import_into, open_retail
from saying import raises

from orderbot.errors import ToolError
from orderbot.shops.retail import actions, data
from orderbot.shops.retail.jsonstore import LEDGER, JsonShopStore
from orderbot.shops.retail.store import Change, RetailStore, Write
from orderbot.shops.source import Source, parse_source

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
ORIGINAL = json.loads(DB.read_text(encoding="utf-8"))


def open_json(source: Path, scratch: Path) -> RetailStore:
    path = scratch / "shop.json"
    shutil.copyfile(source, path)
    return JsonShopStore.load(path)


def reopen_json(store: JsonShopStore) -> RetailStore:
    return JsonShopStore.load(store.path)


SQL_SOURCES: dict[int, Source] = {}  # where each SQL store opened here came from, to open it again


def open_sql(target: Source, source: Path) -> RetailStore:
    import_into(target, source)
    store = open_retail(target)
    SQL_SOURCES[id(store)] = target
    return store


def open_sqlite(source: Path, scratch: Path) -> RetailStore:
    return open_sql(parse_source(f"sqlite:///{scratch / 'shop.db'}"), source)


def reopen_sql(store) -> RetailStore:
    return open_retail(SQL_SOURCES[id(store)])


OPENERS: dict[str, Callable[[Path, Path], RetailStore]] = {"json": open_json, "sqlite": open_sqlite}
REOPENERS: dict[str, Callable] = {"json": reopen_json, "sqlite": reopen_sql, "postgres": reopen_sql}


@pytest.fixture(params=[*sorted(OPENERS), "postgres"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def opener(kind: str, request):
    """OPENERS[kind]; PostgreSQL's imports into a new database on the test cluster, dropped after the test."""
    if kind != "postgres":
        yield OPENERS[kind]
        return
    server = request.getfixturevalue("postgres_server")
    made: list[str] = []

    def open_postgres(source: Path, scratch: Path) -> RetailStore:
        made.append(server.new_database())
        return open_sql(parse_source(server.url(made[-1])), source)

    yield open_postgres
    for database in made:
        server.drop_database(database)


@pytest.fixture
def store(opener, tmp_path: Path):
    opened = opener(DB, tmp_path)
    yield opened
    opened.close()


def small_shop(tmp_path: Path, users: list[dict]) -> Path:
    """A shop of tau2's shape holding only the given users (and no orders)."""
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"products": {}, "users": {u["user_id"]: u for u in users}, "orders": {}}))
    return path


def a_user(user_id: str, email: str, first: str, last: str, zip_code: str) -> dict:
    user = json.loads(json.dumps(ORIGINAL["users"]["noah_brown_6181"]))
    user.update(user_id=user_id, email=email, orders=[], name={"first_name": first, "last_name": last})
    user["address"]["zip"] = zip_code
    return user


# ---- reads ---------------------------------------------------------------------------------


def test_records_come_back_typed_and_equal_to_the_file(store: RetailStore) -> None:
    user = store.user("noah_brown_6181")
    assert isinstance(user, data.User) and data.dump(user) == ORIGINAL["users"]["noah_brown_6181"]
    order = store.order("#W2611340")
    assert isinstance(order, data.Order) and data.dump(order) == ORIGINAL["orders"]["#W2611340"]
    product = store.product("9523456873")
    assert isinstance(product, data.Product) and data.dump(product) == ORIGINAL["products"]["9523456873"]
    variant = store.item("9612497925")
    assert isinstance(variant, data.Variant)
    assert data.dump(variant) == ORIGINAL["products"]["9523456873"]["variants"]["9612497925"]
    assert store.user("nobody") is None and store.order("#W0") is None
    assert store.product("9612497925") is None  # an item id is not a product id
    assert store.item("9523456873") is None  # and the other way round
    assert store.count() == 1000


def test_product_types_are_every_product_by_name_sorted(store: RetailStore) -> None:
    types = store.product_types()
    assert types == dict(sorted((p["name"], p["product_id"]) for p in ORIGINAL["products"].values()))
    assert list(types) == sorted(types) and len(types) == 50


def test_lookups_follow_tau2s_matching(store: RetailStore) -> None:
    assert store.find_user_by_email("noah.brown7922@example.com") == "noah_brown_6181"
    assert store.find_user_by_email("Noah.Brown7922@EXAMPLE.com") == "noah_brown_6181"
    assert store.find_user_by_email(" noah.brown7922@example.com") is None
    assert store.find_user_by_email("noah.brown7922@example") is None
    assert store.find_user_by_name_zip("noah", "BROWN", "80279") == "noah_brown_6181"
    assert store.find_user_by_name_zip("Noah", "Brown", "80278") is None
    assert store.find_user_by_name_zip("Noah", "Brown", " 80279") is None


def test_a_lookup_finds_the_first_match_in_the_shops_order(opener, tmp_path: Path) -> None:
    source = small_shop(
        tmp_path,
        [
            a_user("zed_1", "Same@Example.com", "Ann", "Lee", "10001"),
            a_user("abe_2", "same@example.com", "ANN", "lee", "10001"),
        ],
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    small = opener(source, scratch)
    try:
        assert small.find_user_by_email("SAME@example.com") == "zed_1"
        assert small.find_user_by_name_zip("ann", "LEE", "10001") == "zed_1"
        assert [data.key_of(r) for r in small.export()] == ["zed_1", "abe_2"]
    finally:
        small.close()


def test_an_untouched_shop_exports_as_tau2s_document(store: RetailStore) -> None:
    exported = list(store.export())
    kinds = [data.SECTION_OF[type(record)] for record in exported]
    assert kinds == ["products"] * 50 + ["users"] * 500 + ["orders"] * 1000
    assert data.document(exported) == ORIGINAL
    assert [data.key_of(r) for r in exported if isinstance(r, data.Order)] == list(ORIGINAL["orders"])


# ---- the write --------------------------------------------------------------------------------


def cancel(store: RetailStore, order_id: str = "#W6779827") -> Write:
    order = store.order(order_id)
    return actions.cancel_pending_order(order, store.user(order.user_id), "no longer needed")


def test_a_write_replaces_its_records_and_says_what_the_tool_returns(kind: str, store: RetailStore) -> None:
    write = cancel(store)
    assert store.apply(write, "run-1/call-1") == write.result
    assert store.order("#W6779827").status == "cancelled"
    again = REOPENERS[kind](store)
    try:
        assert again.order("#W6779827") == write.changes[0].new
        document = data.document(again.export())
        assert document["orders"]["#W6779827"]["status"] == "cancelled"
        assert LEDGER not in document and "run-1/call-1" not in json.dumps(document)
        document["orders"]["#W6779827"] = ORIGINAL["orders"]["#W6779827"]
        for change in write.changes[1:]:
            document["users"][change.new.user_id] = ORIGINAL["users"][change.new.user_id]
        assert document == ORIGINAL  # nothing else changed
    finally:
        again.close()


def test_a_repeated_call_key_returns_the_first_result_and_writes_nothing(kind: str, store: RetailStore) -> None:
    first = cancel(store)
    store.apply(first, "run-1/call-1")
    other = actions.modify_user_address(
        store.user("noah_brown_6181"), data.Address(**{**ORIGINAL["users"]["noah_brown_6181"]["address"], "zip": "1"})
    )
    assert store.apply(other, "run-1/call-1") == first.result
    assert store.user("noah_brown_6181").address.zip == "80279"
    again = REOPENERS[kind](store)
    try:
        assert again.apply(other, "run-1/call-1") == first.result  # the ledger outlives the process
        assert again.user("noah_brown_6181").address.zip == "80279"
    finally:
        again.close()


def test_a_write_from_a_stale_record_is_refused_whole(store: RetailStore) -> None:
    order = store.order("#W6779827")
    user = store.user(order.user_id)
    renamed = user.model_copy(update={"email": "new@example.com"})
    stale = order.model_copy(update={"status": "processed"})
    write = Write((Change(user, renamed), Change(stale, order.model_copy(update={"status": "cancelled"}))), {"x": 1})
    with pytest.raises(ToolError) as refused:
        store.apply(write, "run-1/call-2")
    assert refused.value.code == "changed_meanwhile"
    assert store.user(order.user_id) == user and store.order("#W6779827") == order
    # the key was not used up by the refusal
    assert store.apply(cancel(store), "run-1/call-2")["status"] == "cancelled"


def test_a_write_sees_what_another_process_wrote(kind: str, store: RetailStore) -> None:
    stale_write = cancel(store)
    other = REOPENERS[kind](store)
    try:
        other.apply(cancel(other), "run-2/call-1")
    finally:
        other.close()
    with pytest.raises(ToolError) as refused:
        store.apply(stale_write, "run-1/call-1")
    assert refused.value.code == "changed_meanwhile"
    assert store.apply(stale_write, "run-2/call-1")["status"] == "cancelled"  # the other's key is known too


# ---- the JSON file ----------------------------------------------------------------------------


def test_the_json_file_keeps_tau2s_style_and_its_ledger_after_the_shop(tmp_path: Path) -> None:
    path = tmp_path / "shop.json"
    shutil.copyfile(DB, path)
    store = JsonShopStore.load(path)
    write = cancel(store)
    store.apply(write, "run/call")
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n    "products": {\n        "9523456873": {\n')
    document = json.loads(text)
    assert list(document) == ["products", "users", "orders", LEDGER]
    assert document[LEDGER] == {"run/call": write.result}
    assert not list(tmp_path.glob(".shop.json.*.tmp"))


def test_a_compact_json_file_stays_compact(tmp_path: Path) -> None:
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(ORIGINAL, separators=(",", ":")))
    store = JsonShopStore.load(path)
    store.apply(cancel(store), "run/call")
    assert "\n" not in path.read_text().strip()
    assert JsonShopStore.load(path).order("#W6779827").status == "cancelled"


def test_a_broken_ledger_is_a_clear_error(tmp_path: Path) -> None:
    from orderbot.errors import OrdersFileError

    path = tmp_path / "shop.json"
    path.write_text(json.dumps({**ORIGINAL, LEDGER: []}))
    with raises(OrdersFileError, match="orderbot_applied_calls: input should be an object"):
        JsonShopStore.load(path)
