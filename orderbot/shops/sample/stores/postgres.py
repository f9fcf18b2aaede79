"""The PostgreSQL store (psycopg 3, the optional extra `pip install 'orderbot[postgres]'`):
postgresql://user:password@host:5432/shop, also postgres://.

Same schema and semantics as SQLite (orderbot/shops/sample/stores/sql.py). Every statement a run makes
is bounded by what is left of the run (statement_timeout, set for that statement alone).
The URL's password is used to connect and nowhere else: messages, logs and run records
name the place by `Source.shown`, the URL without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from orderbot.errors import ConfigError, ToolError
from orderbot.i18n import t
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

if TYPE_CHECKING:  # at run time the package imports this module (open_store): no circle
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

INSTALL = "PostgreSQL orders need psycopg, which is not installed: pip install 'orderbot[postgres]'"
CONNECT_SECONDS = 5
CHUNK = 10_000  # orders per COPY round during an import (and per progress report)
TIMED_OUT = "the orders database did not answer within the run's time limit; nothing was changed"
UNAVAILABLE = "the orders database cannot be used right now; nothing was changed"


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise ConfigError(INSTALL) from None
    return psycopg


@lru_cache(maxsize=64)
def _native(sql: str) -> str:
    """orderbot's SQL uses sqlite3's `?`; psycopg wants `%s`."""
    return sql.replace("?", "%s")


def connect(source: Source) -> Any:
    """A connection in autocommit mode, or ConfigError with one sentence that never holds
    the password."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(
            source.url, autocommit=True, connect_timeout=CONNECT_SECONDS, application_name="orderbot"
        )
    except psycopg.ProgrammingError:
        raise ConfigError(f"{source.shown}: not a valid PostgreSQL URL (postgresql://user@host:5432/db)") from None
    except psycopg.Error as exc:
        hint = t("orders.encode_password") if source.unencoded_credentials else ""
        raise ConfigError(f"{source.shown}: {_why_not_connected(exc)}{hint}") from None


def _why_not_connected(exc: Exception) -> str:
    state = getattr(exc, "sqlstate", None)
    text = str(exc)
    if state in ("28P01", "28000") or "password authentication failed" in text or "no password supplied" in text:
        return "the server refused the user name or password"
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return "no such database on that server"
    if "Connection refused" in text:
        return "cannot connect: nothing answers at that host and port (is the server running?)"
    if "timeout expired" in text:
        return f"cannot connect: no answer within {CONNECT_SECONDS} s"
    if "translate host name" in text or "Name or service not known" in text:
        return "cannot connect: unknown host name"
    return "cannot connect to the PostgreSQL server"


def limit_statements(connection: Any, seconds: float) -> None:
    """Bound the transaction's next statements by `seconds` (is_local: this transaction only)."""
    milliseconds = max(1, int(seconds * 1000))
    connection.execute("SELECT set_config('statement_timeout', %s, true)", (str(milliseconds),))


@contextmanager
def tool_errors(psycopg: Any, where: str, *, timed_out: str, unavailable: str) -> Iterator[None]:
    """psycopg's errors in a tool's statements as ToolErrors saying nothing was changed:
    a statement cancelled at the run's time limit (`timed_out`), anything else logged and
    `unavailable`. Both shops' stores translate them here, each in its own words."""
    try:
        yield
    except psycopg.errors.QueryCanceled:
        raise ToolError(timed_out, "timeout") from None
    except psycopg.Error as exc:
        log.error("postgres %s: %s: %s", where, type(exc).__name__, exc)
        raise ToolError(unavailable, "store_unavailable") from None


class PostgresStore(SqlStore):
    def __init__(self, source: Source, connection: Any) -> None:
        super().__init__(source.shown)
        self.connection = connection
        self._psycopg = _psycopg()

    @classmethod
    def open(cls, source: Source, connection: Any = None) -> PostgresStore:
        """The store over the database, or over `connection` to it when the caller has one."""
        psycopg = _psycopg()
        connection = connection or connect(source)
        try:
            version = connection.execute("SELECT version FROM schema_version").fetchone()
        except psycopg.errors.UndefinedTable:
            connection.close()
            raise ConfigError(
                f"{source.shown}: holds no orderbot orders (no schema_version table); "
                f"import them with: orderbot orders import orders.json --to {source.shown}"
            ) from None
        except psycopg.Error as exc:
            connection.close()
            raise ConfigError(f"{source.shown}: cannot read the orders ({type(exc).__name__})") from None
        check_version(source.shown, version)
        return cls(source, connection)

    def close(self) -> None:
        self.connection.close()

    def _execute(self, sql: str, params: tuple, timeout: float | None):
        with tool_errors(self._psycopg, self.source, timed_out=TIMED_OUT, unavailable=UNAVAILABLE):
            if timeout is None:
                return self.connection.execute(_native(sql), params)
            with self.connection.transaction():
                # The run's remaining time bounds this statement alone (is_local = true).
                limit_statements(self.connection, timeout)
                return self.connection.execute(_native(sql), params)

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        return self._execute(sql, params, timeout).fetchall()

    def _change(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> int:
        return self._execute(sql, params, timeout).rowcount


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
    psycopg = _psycopg()
    connection = connect(source)
    committing = False  # set once every statement ran: an error after it came from the COMMIT
    try:
        with connection.transaction():
            if connection.execute("SELECT to_regclass('orders') IS NOT NULL").fetchone()[0]:
                held = connection.execute("SELECT count(*) FROM orders").fetchone()[0]
                if held and not replace:
                    raise ConfigError(f"{source.shown} already holds {held:,} orders; pass --replace to replace them")
            found = [t for t in other_tables if connection.execute("SELECT to_regclass(%s)", (t,)).fetchone()[0]]
            if found and not replace:
                raise ConfigError(
                    f"{source.shown} already holds another shop (table {found[0]}); pass --replace to replace it"
                )
            for table in (*TABLES, *other_tables):
                connection.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
            for statement in tables("DOUBLE PRECISION", 'TEXT COLLATE "C"'):
                connection.execute(statement)
            done = 0
            with connection.cursor() as cursor:
                for order_rows, item_rows, shipping_rows in chunks(orders, CHUNK):
                    _copy(cursor, "orders", ORDER_COLUMNS, order_rows)
                    _copy(cursor, "line_items", ITEM_COLUMNS, item_rows)
                    _copy(cursor, "shipping", SHIPPING_COLUMNS, shipping_rows)
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
        raise ConfigError(f"{source.shown}: {_why_import_failed(exc, source, committing=committing)}") from None
    finally:
        connection.close()


def _why_import_failed(exc: Exception, source: Source, *, committing: bool) -> str:
    """One clause for a failed import, saying whether anything was written. A transaction
    the server never got the COMMIT of is rolled back by the server, even when the
    connection is lost; a connection lost during the COMMIT leaves it unknown."""
    psycopg = _psycopg()
    lost = isinstance(exc, psycopg.OperationalError)  # the server went away or shut the connection
    if lost and committing:
        return t("orders.import_lost_at_commit", target=source.shown)
    if lost:
        return t("orders.import_lost")
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return t("orders.import_failed", reason="permission denied")
    return t("orders.import_failed", reason=type(exc).__name__)


def _copy(cursor, table: str, columns: Sequence[str], rows) -> None:
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
