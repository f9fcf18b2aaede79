"""Which shop a source holds, and its store opened: the one place that decides.

    a JSON file          tau2's shape ({"products": {...}, ...}): retail; {"orders": [...]}: the sample shop
    sqlite:///shop.db    a retail_schema table: retail; else the sample shop's tables
    postgresql://...     the same, asked on the one connection the store then keeps

Nothing else looks at a source to tell the shops apart; the loop never does. Each branch
imports only its own store: a run opens one, and the other shop's models cost start-up time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from orderbot.errors import ConfigError
from orderbot.i18n import t
from orderbot.shops.source import Source

ShopName = Literal["sample", "retail"]
HEAD_BYTES = 4096  # enough of a JSON file to see its first member
_FIRST_MEMBER = re.compile(rb'\s*\{\s*"(products|users|orders)"\s*:\s*([\[{])')


def is_shop_document(raw: bytes) -> bool:
    """Whether a file's bytes look like a tau2-shaped shop rather than orderbot's sample
    orders, from the first member alone (no parse: the sample store may hold a million
    orders): tau2's sections are objects by id, the sample's "orders" is a list. The full
    check is the retail shop's `data.parse_shop`."""
    first = _FIRST_MEMBER.match(raw[:HEAD_BYTES])
    return first is not None and (first.group(1) != b"orders" or first.group(2) == b"{")


def is_shop_file(path: Path) -> bool:
    """`is_shop_document` of a file's first bytes; False for a file that cannot be read
    (the sample store then says why in its own words)."""
    try:
        with path.open("rb") as handle:
            return is_shop_document(handle.read(HEAD_BYTES))
    except OSError:
        return False


SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database


def is_sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def open_shop_store(source: Source, *, writable: bool = True, wanted: ShopName | None = None) -> tuple[ShopName, Any]:
    """(which shop, its store) for a parsed source; ConfigError (exit 6) when it cannot be used.
    With `wanted`, a source that holds the other shop is told apart and not opened: (that
    shop, None), so that refusing it costs a JSON file's first bytes, not a read of the whole."""
    if source.kind == "json":
        if is_sqlite_file(source.path):  # `--orders shop.db`: a database given as a path
            raise ConfigError(t("orders.is_sqlite", path=source.path, url=f"sqlite:///{source.path}"))
        shop: ShopName = "retail" if is_shop_file(source.path) else "sample"
        if wanted not in (None, shop):
            return shop, None
        if shop == "retail":
            from orderbot.shops.retail.jsonstore import JsonShopStore

            return "retail", JsonShopStore.load(source.path, writable=writable)
        from orderbot.shops.sample.stores.jsonfile import JsonStore

        return "sample", JsonStore.load(source.path, writable=writable)
    if source.kind == "sqlite":
        import sqlite3

        from orderbot.shops.retail import sqlite as retail
        from orderbot.shops.sample.stores import sqlite as sample

        if not source.path.is_file():
            return "sample", sample.SqliteStore.open(source)  # which says there is no such database
        connection = sample.connect(source.path)
        try:
            holds_retail = retail.holds_retail(connection)
        except sqlite3.Error as exc:
            connection.close()
            raise ConfigError(t("orders.not_sqlite", path=source.path, reason=exc)) from None
        shop = "retail" if holds_retail else "sample"
        if wanted not in (None, shop):
            connection.close()
            return shop, None
        if holds_retail:
            return "retail", retail.SqliteRetailStore.open(source, connection, writable=writable)
        return "sample", sample.SqliteStore.open(source, connection)
    from orderbot.shops.postgres_access import connect
    from orderbot.shops.retail import postgres as retail
    from orderbot.shops.sample.stores import postgres as sample

    connection = connect(source)
    try:
        holds_retail = retail.holds_retail(connection)
    except Exception as exc:  # psycopg's errors: the module is optional, imported by connect
        connection.close()
        raise ConfigError(t("retail.shop_unreadable", source=source.shown, reason=type(exc).__name__)) from None
    shop = "retail" if holds_retail else "sample"
    if wanted not in (None, shop):
        connection.close()
        return shop, None
    if holds_retail:
        return "retail", retail.PostgresRetailStore.open(source, connection, writable=writable)
    return "sample", sample.PostgresStore.open(source, connection)


def open_retail_store(source: Source, *, writable: bool = True) -> Any:
    """The retail store at a source; ConfigError when the source holds the sample shop instead."""
    shop, store = open_shop_store(source, writable=writable)
    if shop != "retail":
        store.close()
        raise ConfigError(t("retail.holds_sample", source=source.shown))
    return store
