"""The PostgreSQL run store (psycopg 3, the extra `pip install 'orderbot[postgres]'`):
--runs postgresql://desk1@db.example/shop.

The operator is the role the connection logged in as (`session_user`), not the role the
session may have switched to (`current_user`: a `role` option in the URL or in PGOPTIONS,
a role default set with ALTER ROLE, SET ROLE in psql). A desk may switch to any role it is
a member of, the group that holds the grants included, so the role it acts as names nobody
in particular; a session whose two roles differ is refused, by orderbot and by the server,
for everything that writes a run, an approval or an audit entry.

The queue and the audit log are written by the server, never by a desk: a save's steps are
calls of the store owner's functions, which name the session's role, stamp the time and link
each entry themselves (orderbot.runs.postgres_sql says what each checks), and operators hold
no grant that writes either table (docs/team.md). What a desk writes is a run's record; what
it says about who decided is checked against the queue by `audit --verify`, and the server
carries out no call without its approval.

The URL's password is used to connect and nowhere else: messages name the store by the URL
without it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from orderbot.errors import ConfigError, OperatorRefused, Phrase, RecordError
from orderbot.runs.audit import NEWEST_KEYED, AuditEntry, entry_hash, from_row
from orderbot.runs.base import Step
from orderbot.runs.postgres_sql import AUDIT_LOCK, HAND_OVER, guards
from orderbot.runs.sql import SqlRunStore
from orderbot.runs.tokens import Token
from orderbot.shops.postgres_access import INSTALL_COMMAND, connect, native_sql, reconnected, transaction
from orderbot.shops.source import parse_source
from orderbot.text import cut

# Schema version 3's desks wrote the log and the queue themselves, checked by triggers: from
# 4 on the server writes both (orderbot.runs.postgres_sql); 5 adds the tokens of orderbot mcp,
# which only the owner's functions read and write. Replacing the owner's functions is the
# owner's to do: the store's owner opens it once after an upgrade.
GUARD_MIGRATIONS: dict[int, Callable[[str], list[str]]] = {
    3: lambda schema: [*guards(schema, with_tokens=False), HAND_OVER],
    4: guards,  # the tokens' functions, over their new table
}
STEP_CALLS = {
    "proposed": "SELECT run_propose(?, ?, ?, ?, ?, ?)",
    "approved": "SELECT run_decide(?, ?, true, NULL)",
    "rejected": "SELECT run_decide(?, ?, false, ?)",
    "executing": "SELECT run_execute(?, ?, ?, ?, ?)",
    "executed": "SELECT run_outcome(?, ?, true, ?)",
    "failed": "SELECT run_outcome(?, ?, false, ?)",
}


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise ConfigError("runs.needs_psycopg", command=INSTALL_COMMAND) from None
    return psycopg


class PostgresRunStore(SqlRunStore):
    key_type, real_type, seq_type = 'TEXT COLLATE "C"', "DOUBLE PRECISION", "BIGINT"

    def __init__(self, url: str, *, prune_after_days: float | None = None) -> None:
        source = parse_source(url)
        super().__init__(source.shown, prune_after_days=prune_after_days)
        self._psycopg = _psycopg()
        self._source = source
        self.connection: Any = connect(source)  # ConfigError, in one sentence without the password

    @classmethod
    def open(
        cls, url: str, *, prune_after_days: float | None = None, audit_key: bytes | None = None
    ) -> PostgresRunStore:
        """The store, made or migrated; `audit_key` (the settings') is what its owner gives
        once for a log the desks keyed before the server wrote it."""
        store = cls(url, prune_after_days=prune_after_days)
        store.audit_key = audit_key
        return store.with_schema()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    def _error(self, exc: Exception) -> RecordError:
        errors = self._psycopg.errors
        if isinstance(exc, errors.InsufficientPrivilege):
            diag = getattr(exc, "diag", None)
            said = _said(getattr(diag, "message_detail", None))
            if said is not None:  # the store's own refusal: this operator may not take this step
                return OperatorRefused("runs.store_refused", where=self.where, why=said)
            why = getattr(diag, "message_primary", None) or "permission denied"
            return RecordError("runs.store_refused", where=self.where, why=cut(why, 300))
        if isinstance(exc, self._psycopg.OperationalError):
            return RecordError("runs.store_lost", where=self.where)
        return RecordError("runs.store_failed", where=self.where, why=type(exc).__name__)

    def _execute(self, sql: str, params: tuple):
        return self.connection.execute(native_sql(sql), params or None)

    def _lost(self) -> RecordError:
        return RecordError("runs.store_lost", where=self.where)

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        self.connection = reconnected(self.connection, self._source, self._lost)
        try:
            return self._execute(sql, params).fetchall()
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            with transaction(self, self._source, self._lost):
                yield
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def _tx_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self._execute(sql, params).fetchall()

    def _tx_change(self, sql: str, params: tuple = ()) -> int:
        return self._execute(sql, params).rowcount

    def _lock_log(self) -> None:
        self._execute("SELECT pg_advisory_xact_lock(?)", (AUDIT_LOCK,))

    def _session_operator(self) -> str:
        """The role that logged in; refused when the session acts as another role."""
        logged_in, acting = self._rows("SELECT session_user, current_user")[0]
        if logged_in != acting:
            raise OperatorRefused("runs.role_switched", where=self.where, login=logged_in, role=acting)
        return logged_in

    def _extra_schema(self) -> list[str]:
        return guards(self._tx_rows("SELECT current_schema()")[0][0])

    def _migrate(self, version: int) -> None:
        super()._migrate(version)
        if version in GUARD_MIGRATIONS:
            for statement in GUARD_MIGRATIONS[version](self._tx_rows("SELECT current_schema()")[0][0]):
                self._tx_change(statement)
        if version == 3:
            self._keep_link_key()

    def _keep_link_key(self) -> None:
        """A log the desks linked with their audit key goes on being linked with it, by the
        server now: the owner's session gives the key once (its settings'), which must link
        one of the newest keyed entries; it is kept where only the owner's functions read it."""
        rows = self._tx_rows(NEWEST_KEYED)
        if not rows:
            return
        keyed = [from_row(row) for row in rows]
        first = self._tx_rows("SELECT min(seq) FROM run_audit WHERE hash LIKE 'hmac:%'")[0][0]
        if self.audit_key is None:
            raise ConfigError("runs.migration_needs_key", where=self.where, seq=first)
        if not any(entry_hash(entry, self.audit_key) == entry.hash for entry in keyed):
            raise ConfigError("runs.migration_other_key", where=self.where, seq=keyed[0].seq)
        self._tx_change("INSERT INTO run_link_key VALUES (?)", (self.audit_key,))

    # -- bearer tokens: only the owner's functions read or write them --

    def _add_token(
        self, token_id: str, secret_hash: str, customer: str | None, operator: str | None, expires_at: str | None
    ) -> bool:
        params = (token_id, secret_hash, customer, operator, expires_at)
        return bool(self._tx_rows("SELECT run_token_add(?, ?, ?, ?, ?)", params)[0][0])

    def token(self, secret_hash: str) -> Token | None:
        rows = self._rows("SELECT * FROM run_token_check(?)", (secret_hash,))
        return Token(*rows[0]) if rows else None

    def tokens(self) -> list[Token]:
        return [Token(*row) for row in self._rows("SELECT * FROM run_tokens_listed()")]

    def tokens_exist(self) -> bool:
        return bool(self._rows("SELECT run_tokens_exist()")[0][0])

    def _revoke_token(self, token_id: str) -> str:
        return str(self._tx_rows("SELECT run_token_revoke(?)", (token_id,))[0][0])

    # -- the queue and the log: the server's functions write them --

    def _take(self, step: Step) -> bool:
        call = step.call
        ids = (call.run_id, call.call_id)
        params = {
            "proposed": (*ids, call.tool, call.arguments, call.description, call.customer),
            "approved": ids,
            "rejected": (*ids, step.reason),
            "executing": (*ids, call.tool, call.arguments, call.customer),
            "executed": (*ids, step.result),
            "failed": (*ids, step.result),
        }[step.event]
        return bool(self._tx_rows(STEP_CALLS[step.event], params)[0][0])

    def keyed_links(self) -> Callable[[AuditEntry], bool] | None:
        """The server's check of keyed links, for a session without the key: None when the
        store holds no key (its log was never keyed, or not since the server writes it)."""
        if not self._rows("SELECT 1 FROM run_audit WHERE hash LIKE 'hmac:%' LIMIT 1"):
            return None  # nothing keyed to check (a role may read the log without the grant to ask)
        wrong = self._rows("SELECT run_audit_keyed_check()")[0][0]
        if wrong is None:
            return None
        not_linked = set(wrong)
        return lambda entry: entry.seq not in not_linked

    def _schema_version(self) -> int | None:
        if self._rows("SELECT to_regclass('run_schema')")[0][0] is None:
            return None
        return self._version(self._rows("SELECT version FROM run_schema"))

    def _schema_version_in_tx(self) -> int | None:
        if self._tx_rows("SELECT to_regclass('run_schema')")[0][0] is None:
            return None
        return self._version(self._tx_rows("SELECT version FROM run_schema"))


def _said(detail: str | None) -> Phrase | None:
    """The sentence a refusal of the store's functions carries in its DETAIL (`orderbot:` and
    its catalogue id and values as JSON); None for any other refusal."""
    if not detail or not detail.startswith("orderbot:"):
        return None
    try:
        said = json.loads(detail.removeprefix("orderbot:"))
        return Phrase(str(said["id"]), {str(k): str(v) for k, v in (said.get("params") or {}).items()})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
