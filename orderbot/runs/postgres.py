"""The PostgreSQL run store (psycopg 3, the extra `pip install 'orderbot[postgres]'`):
--runs postgresql://desk1@db.example/shop.

The operator is the role the connection logged in as (`session_user`), not the role the
session may have switched to (`current_user`: a `role` option in the URL or in PGOPTIONS,
a role default set with ALTER ROLE, SET ROLE in psql). A desk may switch to any role it is
a member of, the group that holds the grants included, so the role it acts as names nobody
in particular; a session whose two roles differ is refused, by orderbot and by the server,
for everything that writes a run, an approval or an audit entry.

Besides the grants (docs/team.md), the server itself guards what matters, so that it holds
for any client, psql included:
- run_audit takes INSERT only: UPDATE, DELETE and TRUNCATE are refused, and an entry must
  name the session's role as the one who proposed (or decided) what it records;
- an approval row keeps the call it was made for; it moves only forward (pending, then
  approved or rejected, then executing, then committed or failed); whoever settles it must be
  the session's role, on the run_approvers list when there is one, and with four eyes
  (run_policy) neither the one who asked nor the one who started the run.
A save that holds an audit entry first takes a transaction-level advisory lock, so that
entries are numbered and linked one after another whatever the number of operators.

The URL's password is used to connect and nowhere else: messages name the store by the URL
without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from orderbot.errors import ConfigError, OperatorRefused, RecordError
from orderbot.runs.sql import SqlRunStore
from orderbot.shops.postgres_access import INSTALL_COMMAND, connect, native_sql
from orderbot.shops.source import parse_source
from orderbot.text import cut

AUDIT_LOCK = int.from_bytes(b"orderbot") >> 1  # the advisory lock key of log appends (any fixed number)

REFUSE = "RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE ="
# Each guard function is created OR REPLACEd, so that the same statements also bring the
# guards of an older store up to date (GUARD_MIGRATIONS below).
GUARD_FUNCTIONS = [
    f"""CREATE OR REPLACE FUNCTION run_session_role() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF current_user <> session_user THEN
    {REFUSE} format('the session logged in as %s acts as %s: approvals and the audit log take only the role '
      'that logged in', session_user, current_user);
  END IF;
  RETURN session_user::text;
END $$""",
    f"""CREATE OR REPLACE FUNCTION run_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  {REFUSE} 'the audit log is append-only: its entries cannot be changed or removed';
END $$""",
    f"""CREATE OR REPLACE FUNCTION run_audit_names_the_session() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me text := run_session_role();
BEGIN
  IF NEW.event = 'proposed' AND NEW.requested_by IS DISTINCT FROM me THEN
    {REFUSE} format('an audit entry of %s names %s as the one who asked, not the session''s role %s',
      NEW.event, NEW.requested_by, me);
  END IF;
  IF NEW.event IN ('approved', 'rejected') AND NEW.decided_by IS DISTINCT FROM me THEN
    {REFUSE} format('an audit entry of %s names %s as the one who decided, not the session''s role %s',
      NEW.event, NEW.decided_by, me);
  END IF;
  RETURN NEW;
END $$""",
    f"""CREATE OR REPLACE FUNCTION run_approvals_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me text;
  starter text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    {REFUSE} 'an approval cannot be removed';
  END IF;
  me := run_session_role();
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'pending' OR NEW.requested_by IS DISTINCT FROM me THEN
      {REFUSE} 'an approval is requested as pending, by the session''s role';
    END IF;
    RETURN NEW;
  END IF;
  IF (NEW.run_id, NEW.call_id, NEW.tool, NEW.arguments, NEW.description, NEW.requested_at)
       IS DISTINCT FROM (OLD.run_id, OLD.call_id, OLD.tool, OLD.arguments, OLD.description, OLD.requested_at)
     OR NEW.customer IS DISTINCT FROM OLD.customer OR NEW.requested_by IS DISTINCT FROM OLD.requested_by THEN
    {REFUSE} 'an approval stays bound to the call it was requested for';
  END IF;
  IF NEW.status = OLD.status THEN
    RETURN NEW;
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected') THEN
    IF NEW.decided_by IS DISTINCT FROM me THEN
      {REFUSE} format('%s cannot settle an approval in the name of %s', me, NEW.decided_by);
    END IF;
    IF NEW.status = 'approved' THEN
      IF EXISTS (SELECT 1 FROM run_approvers)
         AND NOT EXISTS (SELECT 1 FROM run_approvers WHERE operator = me) THEN
        {REFUSE} format('%s is not on the list of operators who may approve (run_approvers)', me);
      END IF;
      IF EXISTS (SELECT 1 FROM run_policy WHERE name = 'four_eyes' AND lower(value) IN ('on', '1', 'true', 'yes')) THEN
        SELECT operator INTO starter FROM runs WHERE run_id = NEW.run_id;
        IF me = OLD.requested_by OR me = starter THEN
          {REFUSE} format('four eyes: %s asked for this action and cannot approve it', me);
        END IF;
      END IF;
    END IF;
    RETURN NEW;
  END IF;
  IF (OLD.status, NEW.status) IN (('approved', 'executing'), ('executing', 'committed'), ('executing', 'failed'))
     AND NEW.decided_by IS NOT DISTINCT FROM OLD.decided_by THEN
    RETURN NEW;
  END IF;
  {REFUSE} format('an approval cannot go from %s to %s', OLD.status, NEW.status);
END $$""",
]
GUARDS = [
    *GUARD_FUNCTIONS,
    "CREATE TRIGGER run_audit_append_only BEFORE UPDATE OR DELETE ON run_audit "
    "FOR EACH ROW EXECUTE FUNCTION run_audit_append_only()",
    "CREATE TRIGGER run_audit_no_truncate BEFORE TRUNCATE ON run_audit "
    "FOR EACH STATEMENT EXECUTE FUNCTION run_audit_append_only()",
    "CREATE TRIGGER run_audit_names_the_session BEFORE INSERT ON run_audit "
    "FOR EACH ROW EXECUTE FUNCTION run_audit_names_the_session()",
    "CREATE TRIGGER run_approvals_guard BEFORE INSERT OR UPDATE OR DELETE ON run_approvals "
    "FOR EACH ROW EXECUTE FUNCTION run_approvals_guard()",
]
# Version 1's guards named the role a session switched to (current_user): replaced, which
# only the functions' owner may do (the store's owner opens it once after an upgrade).
GUARD_MIGRATIONS: dict[int, list[str]] = {1: GUARD_FUNCTIONS}


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
        self.connection: Any = connect(source)  # ConfigError, in one sentence without the password

    @classmethod
    def open(cls, url: str, *, prune_after_days: float | None = None) -> PostgresRunStore:
        return cls(url, prune_after_days=prune_after_days).with_schema()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    def _error(self, exc: Exception) -> RecordError:
        errors = self._psycopg.errors
        if isinstance(exc, errors.InsufficientPrivilege):
            why = getattr(getattr(exc, "diag", None), "message_primary", None) or "permission denied"
            return RecordError("runs.store_refused", where=self.where, why=cut(why, 300))
        if isinstance(exc, self._psycopg.OperationalError):
            return RecordError("runs.store_lost", where=self.where)
        return RecordError("runs.store_failed", where=self.where, why=type(exc).__name__)

    def _execute(self, sql: str, params: tuple):
        return self.connection.execute(native_sql(sql), params or None)

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        try:
            return self._execute(sql, params).fetchall()
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            with self.connection.transaction():
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
        return GUARDS

    def _migration(self, version: int) -> list[str]:
        return super()._migration(version) + GUARD_MIGRATIONS.get(version, [])

    def _schema_version(self) -> int | None:
        if self._rows("SELECT to_regclass('run_schema')")[0][0] is None:
            return None
        return self._version(self._rows("SELECT version FROM run_schema"))

    def _schema_version_in_tx(self) -> int | None:
        if self._tx_rows("SELECT to_regclass('run_schema')")[0][0] is None:
            return None
        return self._version(self._tx_rows("SELECT version FROM run_schema"))
