"""The retail shop in a database store, for tests: import tau2's db.json (or another
tau2-shaped file) and open the store, without the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orderbot.shops.retail.stream import missing_user, shop_records
from orderbot.shops.source import Source

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
SQL_KINDS = ("sqlite", "postgres")


def import_into(source: Source, path: Path = DB, *, replace: bool = False) -> int:
    """`orderbot orders import` of a tau2-shaped file, without the command line."""
    if source.kind == "sqlite":
        from orderbot.shops.retail.sqlite import import_shop
    else:
        from orderbot.shops.retail.postgres import import_shop
    return import_shop(source, shop_records(path), replace=replace, orphan=lambda order: missing_user(path, order))


def open_retail(source: Source, *, writable: bool = True):
    if source.kind == "sqlite":
        from orderbot.shops.retail.sqlite import SqliteRetailStore

        return SqliteRetailStore.open(source, writable=writable)
    from orderbot.shops.retail.postgres import PostgresRetailStore

    return PostgresRetailStore.open(source, writable=writable)


@dataclass
class RetailDatabase:
    """One retail shop in one database; `open()` opens it as a new process would."""

    kind: str
    source: Source
    _open: list = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.source.url

    def open(self, *, writable: bool = True):
        store = open_retail(self.source, writable=writable)
        self._open.append(store)
        return store

    def close(self) -> None:
        for store in self._open:
            store.close()
        self._open.clear()
