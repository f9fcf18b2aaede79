"""The retail shop in PostgreSQL (psycopg 3, the optional extra `pip install 'orderbot[postgres]'`):
postgresql://user:password@host:5432/shop, also postgres://.

Same schema and semantics as SQLite (orderbot/shops/retail/sql.py). Every statement is
bounded by what is left of the run (statement_timeout, set for the statement's own
transaction and renewed before each statement of a write). A write reads the rows it
compares with SELECT ... FOR UPDATE, so a concurrent writer of the same record waits and
then sees the new one; two writes of the same call key meet on the ledger's primary key.
The URL's password is used to connect and nowhere else (orderbot.shops.postgres_access.connect).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from orderbot.errors import ConfigError, Phrase, ToolError
from orderbot.shops.postgres_access import (
    connect,
    copy_rows,
    limit_statements,
    load_psycopg,
    native_sql,
    reconnected,
    tool_errors,
    transaction,
)
from orderbot.shops.retail.data import Order, Product, User, Variant
from orderbot.shops.retail.sql import (
    ITEM_COLUMNS,
    LEDGER_ROWS,
    ORDER_COLUMNS,
    PRODUCT_COLUMNS,
    SCHEMA_TABLE,
    TABLES,
    TIMED_OUT,
    UNAVAILABLE,
    USER_COLUMNS,
    SqlRetailStore,
    fill,
)
from orderbot.shops.retail.sqlite import check_version
from orderbot.shops.sample.stores.sql import TABLES as SAMPLE_TABLES  # an import replaces the sample shop too

if TYPE_CHECKING:
    from orderbot.shops.retail.store import ShopRecord
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

COPIES = {
    Product: ("retail_products", PRODUCT_COLUMNS),
    Variant: ("retail_items", ITEM_COLUMNS),
    User: ("retail_users", USER_COLUMNS),
    Order: ("retail_orders", ORDER_COLUMNS),
    LEDGER_ROWS: ("retail_ledger", ("call_key", "result")),
}


def holds_retail(connection: Any) -> bool:
    """Whether the database holds a retail shop (its schema table), whatever its version."""
    return connection.execute("SELECT to_regclass(%s) IS NOT NULL", (SCHEMA_TABLE,)).fetchone()[0]


def import_shop(
    source: Source,
    records: Iterable[ShopRecord],
    *,
    replace: bool,
    orphan: Callable[[str], NoReturn],
    ledger: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write the records in one transaction (COPY, chunk by chunk; sql.fill): all of them
    or none. Refuses a database that already holds a shop (retail or the sample's orders)
    unless `replace`."""
    psycopg = load_psycopg()
    connection = connect(source)
    try:
        with connection.transaction(), connection.cursor() as cursor:
            held = held_records(connection)
            if held and not replace:
                raise ConfigError("retail.holds", where=source.shown, held=held)
            for table in (*TABLES, *SAMPLE_TABLES):
                connection.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
            return fill(
                lambda sql, params: connection.execute(native_sql(sql), params),
                lambda kind, rows: copy_rows(cursor, *COPIES[kind], rows),
                records,
                key_type='TEXT COLLATE "C"',
                orphan=orphan,
                ledger=ledger,
                progress=progress,
            )
    except psycopg.Error as exc:
        log.error("postgres import %s: %s: %s", source.shown, type(exc).__name__, exc)
        reason = "permission denied" if isinstance(exc, psycopg.errors.InsufficientPrivilege) else type(exc).__name__
        raise ConfigError(
            "orders.at", where=source.shown, why=Phrase("orders.import_failed", {"reason": reason})
        ) from None
    finally:
        connection.close()


class PostgresRetailStore(SqlRetailStore):
    LOCK = " FOR UPDATE"

    def __init__(self, source: Source, connection: Any, *, writable: bool = True) -> None:
        super().__init__(source.shown, writable=writable)
        self.connection = connection
        self._source = source
        self._psycopg = load_psycopg()

    @classmethod
    def open(cls, source: Source, connection: Any = None, *, writable: bool = True) -> PostgresRetailStore:
        """The store over the database, or over `connection` to it when the caller has one."""
        psycopg = load_psycopg()
        connection = connection or connect(source)
        try:
            version = connection.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchone()
        except psycopg.errors.UndefinedTable:
            connection.close()
            raise ConfigError("retail.no_schema", where=source.shown, table=SCHEMA_TABLE, url=source.shown) from None
        except psycopg.Error as exc:
            connection.close()
            raise ConfigError("retail.shop_unreadable", source=source.shown, reason=type(exc).__name__) from None
        try:
            check_version(source.shown, version)
        except ConfigError:
            connection.close()
            raise
        return cls(source, connection, writable=writable)

    import_records = staticmethod(import_shop)  # the chooser's way in (orderbot.shops.choice.database_type)

    def close(self) -> None:
        self.connection.close()

    def _errors(self) -> AbstractContextManager[None]:
        return tool_errors(self._psycopg, self.source, timed_out=TIMED_OUT, unavailable=UNAVAILABLE)

    @staticmethod
    def _lost() -> ToolError:
        """What a tool is told when the server dropped the connection and is not back."""
        return ToolError(UNAVAILABLE, "store_unavailable")

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        with self._errors():
            if timeout is None:
                self.connection = reconnected(self.connection, self._source, self._lost)
                return self.connection.execute(native_sql(sql), params).fetchall()
            with transaction(self, self._source, self._lost) as connection:
                limit_statements(connection, timeout)
                return connection.execute(native_sql(sql), params).fetchall()

    @contextmanager
    def _transaction(self, timeout: float | None) -> Iterator[Callable]:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._errors(), transaction(self, self._source, self._lost) as connection:

            def run(sql: str, params: tuple):
                if deadline is not None:  # what is left now, not what was left when the write began
                    limit_statements(connection, deadline - time.monotonic())
                return connection.execute(native_sql(sql), params)

            yield run

    def export(self) -> Iterator[ShopRecord]:
        """In one repeatable-read transaction: a consistent picture even while others write."""
        with self._errors(), transaction(self, self._source, self._lost) as connection:
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield from super().export()


def held_records(connection: Any) -> Phrase | None:
    """What the database already holds ("1,000 retail orders"), or None."""
    counts = []
    for table, what in (("retail_orders", "retail.held_retail"), ("orders", "retail.held_sample")):
        if connection.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]:
            count = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            counts.append(Phrase(what, {"count": count}))
    if len(counts) == 2:
        return Phrase("retail.held_both", {"first": counts[0], "second": counts[1]})
    return counts[0] if counts else None
