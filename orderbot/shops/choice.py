"""Which shop a source holds, and which store class opens it: the one place that decides.

    a JSON file          tau2's shape ({"products": {...}, ...}): retail; {"orders": [...]}: the sample shop
    sqlite:///shop.db    a retail_schema table: retail; else the sample shop's tables
    postgresql://...     the same, asked on the one connection the store then keeps

    shop    json            sqlite               postgres
    sample  JsonStore       SqliteStore          PostgresStore
    retail  JsonShopStore   SqliteRetailStore    PostgresRetailStore

Nothing else looks at a source to tell the shops apart or to pick a store; the loop never
does. Every store class opens the same way (orderbot.shops.store.StoreType), the database
ones also import a shop (`database_type`). Each class is imported when it is chosen, as a
model provider is: a run opens one store, and the other shop's models, sqlite3 (~10 ms) or
psycopg (the postgres extra) cost start-up time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from orderbot.errors import ConfigError
from orderbot.shops.source import Kind, Source
from orderbot.shops.store import ShopStore, StoreType

if TYPE_CHECKING:
    from orderbot.shops.retail import store as retail
    from orderbot.shops.sample.stores import base as sample

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


@overload
def store_type(shop: Literal["sample"], kind: Kind) -> StoreType[sample.Store]: ...
@overload
def store_type(shop: Literal["retail"], kind: Kind) -> StoreType[retail.RetailStore]: ...
def store_type(shop: ShopName, kind: Kind) -> StoreType[ShopStore]:
    """The class of `shop`'s store on a `kind` of source: the table above."""
    if shop == "retail":
        if kind == "json":
            from orderbot.shops.retail.jsonstore import JsonShopStore

            return JsonShopStore
        if kind == "sqlite":
            from orderbot.shops.retail.sqlite import SqliteRetailStore

            return SqliteRetailStore
        from orderbot.shops.retail.postgres import PostgresRetailStore

        return PostgresRetailStore
    if kind == "json":
        from orderbot.shops.sample.stores.jsonfile import JsonStore

        return JsonStore
    if kind == "sqlite":
        from orderbot.shops.sample.stores.sqlite import SqliteStore

        return SqliteStore
    from orderbot.shops.sample.stores.postgres import PostgresStore

    return PostgresStore


@overload
def database_type(shop: Literal["sample"], target: Source) -> sample.DatabaseType: ...
@overload
def database_type(shop: Literal["retail"], target: Source) -> retail.DatabaseType: ...
def database_type(shop: ShopName, target: Source):
    """The class of `shop`'s store in the database `target`, which imports a shop into it."""
    if target.kind == "json":
        raise ValueError(f"not a database: {target.shown}")
    return store_type(shop, target.kind)


def open_shop_store(
    source: Source, *, writable: bool = True, wanted: ShopName | None = None
) -> tuple[ShopName, ShopStore | None]:
    """(which shop, its store) for a parsed source; ConfigError (exit 6) when it cannot be used.
    With `wanted`, a source that holds the other shop is told apart and not opened: (that
    shop, None), so that refusing it costs a JSON file's first bytes, not a read of the whole."""
    if source.kind == "json":
        if is_sqlite_file(source.path):  # `--orders shop.db`: a database given as a path
            raise ConfigError(
                "orders.is_sqlite", path=source.path, url=f"sqlite:///{source.path}"
            )  # untranslated: a URL
        shop: ShopName = "retail" if is_shop_file(source.path) else "sample"
        if wanted not in (None, shop):
            return shop, None
        return shop, store_type(shop, "json").open(source, writable=writable)
    if source.kind == "sqlite":
        import sqlite3

        from orderbot.shops.retail.sqlite import holds_retail
        from orderbot.shops.sample.stores.sqlite import connect

        if not source.path.is_file():
            return "sample", store_type("sample", "sqlite").open(source)  # which says there is no such database
        connection = connect(source.path)
        try:
            shop = "retail" if holds_retail(connection) else "sample"
        except sqlite3.Error as exc:
            connection.close()
            raise ConfigError("orders.not_sqlite", path=source.path, reason=exc) from None
    else:
        from orderbot.shops.postgres_access import connect
        from orderbot.shops.retail.postgres import holds_retail

        connection = connect(source)
        try:
            shop = "retail" if holds_retail(connection) else "sample"
        except Exception as exc:  # psycopg's errors: the module is optional, imported by connect
            connection.close()
            raise ConfigError("retail.shop_unreadable", source=source.shown, reason=type(exc).__name__) from None
    if wanted not in (None, shop):
        connection.close()
        return shop, None
    return shop, store_type(shop, source.kind).open(source, connection, writable=writable)


def open_retail_store(source: Source, *, writable: bool = True) -> retail.RetailStore:
    """The retail store at a source; ConfigError when the source holds the sample shop instead."""
    shop, store = open_shop_store(source, writable=writable)
    if shop != "retail" or store is None:
        if store is not None:
            store.close()
        raise ConfigError("retail.holds_sample", source=source.shown)
    return store
