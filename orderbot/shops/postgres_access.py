"""How orderbot's PostgreSQL stores reach the server (both shops' and the run store's):
psycopg loaded on demand, the connection, each statement's time limit, its errors, and COPY.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from orderbot.errors import ConfigError, LoginRefused, OrderbotError, Phrase, ToolError

if TYPE_CHECKING:
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

INSTALL_COMMAND = "pip install 'orderbot[postgres]'"
CONNECT_SECONDS = 5


def load_psycopg():
    """psycopg, imported only by a store that uses it (the optional extra); ConfigError without it."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError("orders.needs_psycopg", command=INSTALL_COMMAND) from None
    return psycopg


@lru_cache(maxsize=64)
def native_sql(sql: str) -> str:
    """orderbot's SQL uses sqlite3's `?`; psycopg wants `%s`."""
    return sql.replace("?", "%s")


def connect(source: Source) -> Any:
    """A connection in autocommit mode, or ConfigError with one sentence that never holds
    the password."""
    psycopg = load_psycopg()
    try:
        return psycopg.connect(
            source.url, autocommit=True, connect_timeout=CONNECT_SECONDS, application_name="orderbot"
        )
    except psycopg.ProgrammingError:
        raise ConfigError("orders.bad_postgres_url", source=source.shown) from None
    except psycopg.Error as exc:
        hint = Phrase("orders.encode_password") if source.unencoded_credentials else ""
        why = Phrase("text.then", {"first": _why_not_connected(exc), "second": hint})
        said = Phrase("orders.at", {"where": source.shown, "why": why})
        raise (LoginRefused if _login_refused(exc) else ConfigError)(said) from None


def reconnected(connection: Any, source: Source, lost: Callable[[], OrderbotError]) -> Any:
    """`connection`, or a new one when the server dropped it (it restarted, or ended the
    session): a long-lived process (`orderbot mcp --http`) outlives its database's restarts.
    Nothing is retried: the statement that found the connection dropped failed in its own
    words, and the next one goes on the new connection. `lost()` (the store's own words) when
    none can be made."""
    if not connection.broken:
        return connection
    log.warning("postgres %s: the server dropped the connection; connecting again", source.shown)
    try:
        return connect(source)
    except ConfigError as exc:
        log.error("postgres %s: %s", source.shown, exc)
        raise lost() from None


@contextmanager
def transaction(store: Any, source: Source, lost: Callable[[], OrderbotError]) -> Iterator[Any]:
    """A transaction on `store.connection`, which it yields. A BEGIN that finds the connection
    dropped (the server restarted while the store sat idle) is sent once more on a new one:
    nothing of the transaction had reached the server, so nothing runs twice. A connection
    lost later fails the transaction, in its store's words, as before."""
    psycopg = load_psycopg()
    store.connection = reconnected(store.connection, source, lost)
    with ExitStack() as stack:
        try:
            stack.enter_context(store.connection.transaction())
        except psycopg.OperationalError:
            if not store.connection.broken:
                raise
            store.connection = reconnected(store.connection, source, lost)
            stack.enter_context(store.connection.transaction())
        yield store.connection


def _login_refused(exc: Exception) -> bool:
    state = getattr(exc, "sqlstate", None)
    text = str(exc)
    return state in ("28P01", "28000") or "password authentication failed" in text or "no password supplied" in text


def _why_not_connected(exc: Exception) -> Phrase:
    state = getattr(exc, "sqlstate", None)
    text = str(exc)
    if _login_refused(exc):
        return Phrase("orders.pg_refused")
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return Phrase("orders.pg_no_database")
    if "Connection refused" in text:
        return Phrase("orders.pg_nothing_answers")
    if "timeout expired" in text:
        return Phrase("orders.pg_timeout", {"seconds": CONNECT_SECONDS})
    if "translate host name" in text or "Name or service not known" in text:
        return Phrase("orders.pg_unknown_host")
    return Phrase("orders.pg_cannot_connect")


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


def copy_rows(cursor: Any, table: str, columns: Sequence[str], rows) -> None:
    """`rows` into `table`'s `columns` with COPY: an import's bulk write."""
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
