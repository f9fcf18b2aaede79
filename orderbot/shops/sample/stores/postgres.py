"""The PostgreSQL store (psycopg 3, the optional extra `pip install 'orderbot[postgres]'`):
postgresql://user:password@host:5432/shop, also postgres://.

Same schema and semantics as SQLite (orderbot/shops/sample/stores/sql.py). Every statement a run makes
is bounded by what is left of the run (statement_timeout, set for that statement alone).
The URL's password is used to connect and nowhere else: messages, logs and run records
name the place by `Source.shown`, the URL without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from orderbot.errors import ConfigError, Phrase, ToolError
from orderbot.loop.model_text import to_model
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
from orderbot.shops.sample.model import Order
from orderbot.shops.sample.stores.sql import (
    INDEXES,
    ITEM_COLUMNS,
    ORDER_COLUMNS,
    SCHEMA_VERSION,
    SHIPPING_COLUMNS,
    TABLES,
    SqlStore,
    chunks,
    tables,
)
from orderbot.shops.sample.stores.sqlite import check_version

if TYPE_CHECKING:  # annotations only: a store module imports nothing it does not run
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

CHUNK = 10_000  # orders per COPY round during an import (and per progress report)
TIMED_OUT = to_model("orders_db_timed_out")
UNAVAILABLE = to_model("orders_db_unavailable")


def import_orders(
    source: Source,
    orders: Sequence[Order],
    *,
    replace: bool,
    progress: Callable[[int], None] | None = None,
    other_tables: Sequence[str] = (),
) -> int:
    """Write `orders` in one transaction (COPY, chunk by chunk): all of them or none.
    Refuses a database that already holds orders unless `replace`. `other_tables` are
    another shop's (a database keeps one shop): refused unless `replace`, else dropped too."""
    psycopg = load_psycopg()
    connection = connect(source)
    committing = False  # set once every statement ran: an error after it came from the COMMIT
    try:
        with connection.transaction():
            if connection.execute("SELECT to_regclass('orders') IS NOT NULL").fetchone()[0]:
                held = connection.execute("SELECT count(*) FROM orders").fetchone()[0]
                if held and not replace:
                    raise ConfigError("orders.holds_orders", where=source.shown, held=held)
            found = [t for t in other_tables if connection.execute("SELECT to_regclass(%s)", (t,)).fetchone()[0]]
            if found and not replace:
                raise ConfigError("orders.holds_other_shop", where=source.shown, table=found[0])
            for table in (*TABLES, *other_tables):
                connection.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
            for statement in tables("DOUBLE PRECISION", 'TEXT COLLATE "C"'):
                connection.execute(statement)
            done = 0
            with connection.cursor() as cursor:
                for order_rows, item_rows, shipping_rows in chunks(orders, CHUNK):
                    copy_rows(cursor, "orders", ORDER_COLUMNS, order_rows)
                    copy_rows(cursor, "line_items", ITEM_COLUMNS, item_rows)
                    copy_rows(cursor, "shipping", SHIPPING_COLUMNS, shipping_rows)
                    done += len(order_rows)
                    if progress:
                        progress(done)
            for statement in INDEXES:
                connection.execute(statement)
            connection.execute("INSERT INTO schema_version VALUES (%s)", (SCHEMA_VERSION,))
            committing = True
        return done
    except psycopg.Error as exc:
        log.error("postgres import %s: %s: %s", source.shown, type(exc).__name__, exc)
        why = _why_import_failed(exc, source, committing=committing)
        raise ConfigError("orders.at", where=source.shown, why=why) from None
    finally:
        connection.close()


class PostgresStore(SqlStore):
    def __init__(self, source: Source, connection: Any, *, writable: bool = True) -> None:
        super().__init__(source.shown, writable=writable)
        self.connection = connection
        self._source = source
        self._psycopg = load_psycopg()

    @classmethod
    def open(cls, source: Source, connection: Any = None, *, writable: bool = True) -> PostgresStore:
        """The store over the database, or over `connection` to it when the caller has one."""
        psycopg = load_psycopg()
        connection = connection or connect(source)
        try:
            version = connection.execute("SELECT version FROM schema_version").fetchone()
        except psycopg.errors.UndefinedTable:
            connection.close()
            raise ConfigError("orders.no_schema", where=source.shown, url=source.shown) from None
        except psycopg.Error as exc:
            connection.close()
            raise ConfigError("orders.cannot_read", source=source.shown, reason=type(exc).__name__) from None
        check_version(source.shown, version)
        return cls(source, connection, writable=writable)

    import_records = staticmethod(import_orders)  # the chooser's way in (orderbot.shops.choice.database_type)

    def close(self) -> None:
        self.connection.close()

    @staticmethod
    def _lost() -> ToolError:
        """What a tool is told when the server dropped the connection and is not back."""
        return ToolError(UNAVAILABLE, "store_unavailable")

    def _execute(self, sql: str, params: tuple, timeout: float | None):
        with tool_errors(self._psycopg, self.source, timed_out=TIMED_OUT, unavailable=UNAVAILABLE):
            if timeout is None:
                self.connection = reconnected(self.connection, self._source, self._lost)
                return self.connection.execute(native_sql(sql), params)
            with transaction(self, self._source, self._lost) as connection:
                # The run's remaining time bounds this statement alone (is_local = true).
                limit_statements(connection, timeout)
                return connection.execute(native_sql(sql), params)

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        return self._execute(sql, params, timeout).fetchall()

    def _change(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> int:
        return self._execute(sql, params, timeout).rowcount


def _why_import_failed(exc: Exception, source: Source, *, committing: bool) -> str:
    """One clause for a failed import, saying whether anything was written. A transaction
    the server never got the COMMIT of is rolled back by the server, even when the
    connection is lost; a connection lost during the COMMIT leaves it unknown."""
    psycopg = load_psycopg()
    lost = isinstance(exc, psycopg.OperationalError)  # the server went away or shut the connection
    if lost and committing:
        return Phrase("orders.import_lost_at_commit", {"target": source.shown})
    if lost:
        return Phrase("orders.import_lost")
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return Phrase("orders.import_failed", {"reason": "permission denied"})
    return Phrase("orders.import_failed", {"reason": type(exc).__name__})
