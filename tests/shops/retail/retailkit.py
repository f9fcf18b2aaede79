"""The retail shop in a database store, for tests: import tau2's db.json (or another
tau2-shaped file) and open the store, without the command line."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from orderbot.shops.choice import store_type
from orderbot.shops.retail.transfer import import_file
from orderbot.shops.source import Source, parse_source

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
SQL_KINDS = ("sqlite", "postgres")


def import_into(source: Source, path: Path = DB, *, replace: bool = False) -> dict[str, int]:
    """`orderbot orders import` of a tau2-shaped file, without the command line."""
    return import_file(path, source, replace=replace)


def copy_sqlite(template: Path, path: Path) -> Source:
    """A private copy of a SQLite shop made once (a copy costs milliseconds, an import ~0.2 s)."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{template}{suffix}").exists():
            shutil.copyfile(f"{template}{suffix}", f"{path}{suffix}")
    return parse_source(f"sqlite:///{path}")


def open_retail(source: Source, *, writable: bool = True):
    return store_type("retail", source.kind).open(source, writable=writable)


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
