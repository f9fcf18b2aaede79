"""The SQLite store (the standard library's sqlite3): sqlite:///path/to/shop.db.

The database is in WAL mode, so readers never wait for the writer and a cancellation
never waits for readers; writers wait for each other up to BUSY_SECONDS. Each cancellation
is one conditional UPDATE, which SQLite runs as one transaction.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from orderbot.errors import ConfigError, Phrase, ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.sample.model import Order
from orderbot.shops.sample.stores.sql import INDEXES, ORDER_COLUMNS, SCHEMA_VERSION, TABLES, SqlStore, chunks, tables

if TYPE_CHECKING:  # annotations only: a store module imports nothing it does not run
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

BUSY_SECONDS = 5.0  # how long a statement waits for another process's write to finish
CHUNK = 10_000  # orders per executemany during an import (and per progress report)
INSERT_ORDER = f"INSERT INTO orders VALUES ({', '.join('?' * len(ORDER_COLUMNS))})"


def connect(path: Path, *, create: bool = False) -> sqlite3.Connection:
    mode = "rwc" if create else "rw"
    uri = f"file:{quote(str(path.absolute()))}?mode={mode}"
    # isolation_level=None: no implicit transactions; each statement commits by itself
    # unless one is opened explicitly (imports do).
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
    return connection


def import_orders(
    source: Source,
    orders: Sequence[Order],
    *,
    replace: bool,
    progress: Callable[[int], None] | None = None,
    other_tables: Sequence[str] = (),
) -> int:
    """Write `orders` into the database in one transaction: all of them or none. Refuses
    a database that already holds orders unless `replace`. `other_tables` are another
    shop's (a database keeps one shop): refused unless `replace`, else dropped too. A database file this call
    created is removed again when the import fails."""
    with import_transaction(source.path) as connection:
        return _write(
            connection, orders, where=str(source.path), replace=replace, progress=progress, other_tables=other_tables
        )


class SqliteStore(SqlStore):
    def __init__(self, source: Source, connection: sqlite3.Connection, *, writable: bool = True) -> None:
        super().__init__(source.shown, writable=writable)
        self.path = source.path
        self.connection = connection

    @classmethod
    def open(
        cls, source: Source, connection: sqlite3.Connection | None = None, *, writable: bool = True
    ) -> SqliteStore:
        """The store over the database, or over `connection` to it when the caller has one."""
        path = source.path
        if connection is None and not path.is_file():
            raise ConfigError("orders.no_sqlite_database", path=path, file="orders.json", url=source.url)
        try:
            connection = connection or connect(path)
            version = connection.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.Error as exc:
            if "no such table" in str(exc):
                raise ConfigError("orders.no_schema", where=path, url=source.url) from None
            raise ConfigError("orders.not_sqlite", path=path, reason=exc) from None
        check_version(str(path), version)
        return cls(source, connection, writable=writable)

    import_records = staticmethod(import_orders)  # the chooser's way in (orderbot.shops.choice.database_type)

    def close(self) -> None:
        self.connection.close()

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        try:
            return self.connection.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise _tool_error(exc, self.path) from None

    def _change(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> int:
        try:
            return self.connection.execute(sql, params).rowcount
        except sqlite3.Error as exc:
            raise _tool_error(exc, self.path) from None


def check_version(where: str, row: Sequence | None) -> None:
    if row is None or row[0] != SCHEMA_VERSION:
        found = Phrase("orders.schema_none") if row is None else row[0]
        raise ConfigError("orders.schema_version", where=where, found=found, reads=SCHEMA_VERSION)


def _tool_error(exc: sqlite3.Error, path: Path) -> ToolError:
    if "locked" in str(exc) or "busy" in str(exc):
        return ToolError(to_model("orders_db_busy"), "busy")
    log.error("sqlite %s: %s", path, exc)
    return ToolError(to_model("orders_db_unavailable"), "store_unavailable")


@contextmanager
def import_transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """The connection of an import, in one write transaction: committed when the block
    ends, rolled back when it raises. A database file this created is removed again when
    the import fails; an error of SQLite's is one sentence saying nothing was written.
    Shared by the sample shop's import and the retail shop's (orderbot.shops.retail.sqlite)."""
    created = not path.exists()
    connection = None
    try:
        connection = connect(path, create=True)
        connection.execute("PRAGMA journal_mode = WAL")  # kept by the file: every later opener uses it
        connection.execute("PRAGMA cache_size = -200000")  # 200 MB for building the indexes
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    except BaseException as exc:
        if connection is not None:
            with suppress(Exception):
                connection.close()
        if created:
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
                with suppress(OSError):
                    leftover.unlink()
        if isinstance(exc, sqlite3.Error):
            raise ConfigError("orders.at", where=path, why=Phrase("orders.import_failed", {"reason": exc})) from None
        raise


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    return (
        connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
        is not None
    )


def _write(
    connection: sqlite3.Connection, orders: Sequence[Order], *, where: str, replace: bool, progress, other_tables
) -> int:
    held = existing_orders(connection)
    if held and not replace:
        raise ConfigError("orders.holds_orders", where=where, held=held)
    found = [name for name in other_tables if _has_table(connection, name)]
    if found and not replace:
        raise ConfigError("orders.holds_other_shop", where=where, table=found[0])
    for table in (*TABLES, *other_tables):
        connection.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in tables("REAL", "TEXT"):
        connection.execute(statement)
    done = 0
    for order_rows, item_rows, shipping_rows in chunks(orders, CHUNK):
        connection.executemany(INSERT_ORDER, order_rows)
        connection.executemany("INSERT INTO line_items VALUES (?, ?, ?, ?, ?, ?)", item_rows)
        connection.executemany("INSERT INTO shipping VALUES (?, ?, ?, ?)", shipping_rows)
        done += len(order_rows)
        if progress:
            progress(done)
    for statement in INDEXES:
        connection.execute(statement)
    connection.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
    return done


def existing_orders(connection: sqlite3.Connection) -> int:
    """How many orders the database holds (0 when it has no orders table)."""
    try:
        return connection.execute("SELECT count(*) FROM orders").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
