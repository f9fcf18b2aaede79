"""The retail shop in SQLite (the standard library's sqlite3): sqlite:///path/to/shop.db.

The database is in WAL mode, so readers never wait for the writer, and is read through a
memory map of the file. A write is one `BEGIN IMMEDIATE` transaction: it takes the
database's write lock before it reads the rows it compares, so two writers never both see
the old record; the second waits for the first (up to BUSY_SECONDS, or what is left of the
run). Every statement is bounded by what is left of the run: the wait for the lock by the
busy timeout, the statement itself by a progress handler that interrupts it once the time
is up.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from orderbot.errors import ConfigError, Phrase, ToolError
from orderbot.shops.retail.data import Order, Product, User, Variant
from orderbot.shops.retail.sql import (
    BUSY,
    LEDGER_ROWS,
    SCHEMA_TABLE,
    SCHEMA_VERSION,
    TABLES,
    TIMED_OUT,
    UNAVAILABLE,
    SqlRetailStore,
    fill,
)
from orderbot.shops.sample.stores.sql import TABLES as SAMPLE_TABLES  # an import replaces the sample shop too
from orderbot.shops.sample.stores.sqlite import connect, import_transaction

if TYPE_CHECKING:
    from orderbot.shops.retail.store import ShopRecord
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

BUSY_SECONDS = 5.0  # how long a write waits for another process's write to finish
# Reads go through a memory map of the file (up to this size) instead of a read() per page
# missing from SQLite's own small cache: at a million orders a lookup touches pages all over.
MMAP_BYTES = 1 << 32
CHECK_EVERY = 1_000  # SQLite virtual-machine steps between two looks at the clock
INSERTS = {
    Product: "INSERT INTO retail_products VALUES (?, ?, ?, ?)",
    Variant: "INSERT INTO retail_items VALUES (?, ?, ?)",
    User: "INSERT INTO retail_users VALUES (?, ?, ?, ?, ?, ?, ?)",
    Order: "INSERT INTO retail_orders VALUES (?, ?, ?, ?, ?)",
    LEDGER_ROWS: "INSERT INTO retail_ledger VALUES (?, ?)",
}


def holds_retail(connection: sqlite3.Connection) -> bool:
    """Whether the database holds a retail shop (its schema table), whatever its version."""
    row = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SCHEMA_TABLE,))
    return row.fetchone() is not None


def import_shop(
    source: Source,
    records: Iterable[ShopRecord],
    *,
    replace: bool,
    orphan: Callable[[str], NoReturn],
    ledger: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write the records into the database in one transaction: all of them or none
    (sql.fill). Refuses a database that already holds a shop (retail or the sample's
    orders) unless `replace`. A database file this call created is removed again when
    the import fails."""
    with import_transaction(source.path) as connection:
        held = held_records(connection)
        if held and not replace:
            raise ConfigError("retail.holds", where=source.path, held=held)
        for table in (*TABLES, *SAMPLE_TABLES):
            connection.execute(f"DROP TABLE IF EXISTS {table}")
        return fill(
            connection.execute,
            lambda kind, rows: connection.executemany(INSERTS[kind], rows),
            records,
            key_type="TEXT",
            orphan=orphan,
            ledger=ledger,
            progress=progress,
        )


class SqliteRetailStore(SqlRetailStore):
    def __init__(self, source: Source, connection: sqlite3.Connection, *, writable: bool = True) -> None:
        super().__init__(source.shown, writable=writable)
        self.path = source.path
        self.connection = connection

    @classmethod
    def open(
        cls, source: Source, connection: sqlite3.Connection | None = None, *, writable: bool = True
    ) -> SqliteRetailStore:
        """The store over the database, or over `connection` to it when the caller has one."""
        path = source.path
        if connection is None and not path.is_file():
            raise ConfigError("orders.no_sqlite_database", path=path, file="db.json", url=source.url)
        try:
            connection = connection or connect(path)
            version = connection.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchone()
        except sqlite3.Error as exc:
            if "no such table" in str(exc):
                raise ConfigError("retail.no_schema", where=path, table=SCHEMA_TABLE, url=source.url) from None
            raise ConfigError("orders.not_sqlite", path=path, reason=exc) from None
        check_version(str(path), version)
        connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        return cls(source, connection, writable=writable)

    import_records = staticmethod(import_shop)  # the chooser's way in (orderbot.shops.choice.database_type)

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def _bounded(self, timeout: float | None) -> Iterator[None]:
        """Statements within `timeout` seconds: the lock wait and the statement itself."""
        if timeout is None:
            yield
            return
        deadline = time.monotonic() + timeout
        wait = max(1, int(min(BUSY_SECONDS, max(0.0, timeout)) * 1000))
        self.connection.execute(f"PRAGMA busy_timeout = {wait}")
        self.connection.set_progress_handler(lambda: time.monotonic() > deadline, CHECK_EVERY)
        try:
            yield
        finally:
            self.connection.set_progress_handler(None, CHECK_EVERY)
            self.connection.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        try:
            with self._bounded(timeout):
                return self.connection.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise tool_error(exc, self.path) from None

    @contextmanager
    def _transaction(self, timeout: float | None) -> Iterator[Callable]:
        connection = self.connection
        try:
            with self._bounded(timeout):
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection.execute
                    connection.execute("COMMIT")
                except BaseException:
                    self._roll_back()
                    raise
        except sqlite3.Error as exc:
            raise tool_error(exc, self.path) from None

    def _roll_back(self) -> None:
        """Undo the open transaction, if SQLite has not already (an interrupted statement
        may end it), without the clock interrupting the undo itself."""
        self.connection.set_progress_handler(None, CHECK_EVERY)
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    def export(self) -> Iterator[ShopRecord]:
        """In one read transaction: a consistent picture even while others write."""
        self.connection.execute("BEGIN")
        try:
            yield from super().export()
        finally:
            self.connection.execute("COMMIT")


def check_version(where: str, row) -> None:
    if row is None or row[0] != SCHEMA_VERSION:
        found = Phrase("orders.schema_none") if row is None else row[0]
        raise ConfigError("retail.schema_version", where=where, found=found, reads=SCHEMA_VERSION)


def tool_error(exc: sqlite3.Error, path: Path) -> ToolError:
    text = str(exc)
    if "interrupted" in text:
        return ToolError(TIMED_OUT, "timeout")
    if "locked" in text or "busy" in text:
        return ToolError(BUSY, "busy")
    log.error("sqlite %s: %s", path, exc)
    return ToolError(UNAVAILABLE, "store_unavailable")


def held_records(connection: sqlite3.Connection) -> Phrase | None:
    """What the database already holds ("1,000 retail orders"), or None."""
    counts = []
    for table, what in (("retail_orders", "retail.held_retail"), ("orders", "retail.held_sample")):
        try:
            count = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        except sqlite3.OperationalError:
            continue
        counts.append(Phrase(what, {"count": count}))
    if len(counts) == 2:
        return Phrase("retail.held_both", {"first": counts[0], "second": counts[1]})
    return counts[0] if counts else None
