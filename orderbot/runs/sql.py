"""What the SQLite and PostgreSQL run stores share: the tables, and every question and write
of a run store written once in SQL. Each database module supplies the connection, its
transactions and its driver's errors (orderbot.runs.sqlite, orderbot.runs.postgres). The
default run store, a SQLite database in the state directory, is this same code
(orderbot.runs.sqlite.SqliteRunStore.in_state_dir).

Tables (run_schema version 5), named so that they can share a database with the orders:

    run_schema     one row: the version of this layout; an older one is migrated, a newer
                   one refused
    run_key        one row: the key of the records' integrity tags (orderbot.runs.tagged); the
                   state directory's database keeps its key in a file instead (record.key)
    runs           one row per run: the record (tagged JSON, what `orderbot runs export`
                   writes), what a listing shows (summary JSON, customer, operator, status),
                   its revision
    run_approvals  one row per side effect a run paused for: what, for whom, requested by
                   and when, and how it was settled (pending, then rejected, or approved,
                   executing, committed or failed) by whom and when: the team's queue
    run_audit      the audit log (orderbot.runs.audit), one row per entry, only ever inserted,
                   by the store from what happened to each call, never as a caller words it
    run_approvers  who may approve (no rows: every operator); kept by the store's owner
    run_policy     the store's rules, set by its owner: four_eyes = on
    run_tokens     the bearer tokens of `orderbot mcp --http` (orderbot.runs.tokens): whom each
                   names, its dates, the SHA-256 of its secret (never the secret)

Every save is one transaction that lands only if the run's revision is still the one this
process read: a second approver, a second resume, finds the run changed and is told who
settled it, before anything runs (orderbot.runs.base). Its steps (a call asked for, decided,
about to run, run) are written into the queue and the log by the store in the session's name:
here for SQLite, whose file anyone who may write it can change anyway; by the server's own
functions for PostgreSQL (orderbot.runs.postgres). A table a later feature needs comes
with a new schema version and its step in MIGRATIONS.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Self

from orderbot.errors import ConfigError, OperatorRefused, Phrase, RecordError, UsageError
from orderbot.loop.limits import StopReason
from orderbot.runs.base import BaseRunStore, Policy, RunConflict, RunIdTaken, Step, Waiting
from orderbot.runs.record import COMMITTED, EXECUTING, FAILED, RunRecord, utc_iso
from orderbot.runs.summary import RUN_ID, RunSummary, started_key
from orderbot.runs.tagged import parse_record, tag_problem, tag_record
from orderbot.text import cut

# The audit log's code and the tokens' come in when a call is decided or a token is used: a
# run that only answers never loads them.
if TYPE_CHECKING:
    from orderbot.runs.audit import AuditEntry, Decided, QueueRow, Settled
    from orderbot.runs.tokens import Token

SCHEMA_VERSION = 5
# Listings are newest first by when a run started, to the microsecond (created_at, fixed-width
# text that sorts by time: orderbot.runs.summary.started_key), then by id.
RUN_INDEXES = [
    "CREATE INDEX IF NOT EXISTS runs_by_start ON runs (created_at, run_id)",
    "CREATE INDEX IF NOT EXISTS runs_by_customer ON runs (customer, created_at, run_id)",
    "CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, created_at, run_id)",
]
# The bearer tokens of `orderbot mcp --http` (orderbot.runs.tokens), from schema version 5.
TOKENS_TABLE = (
    "CREATE TABLE IF NOT EXISTS run_tokens (id {key} PRIMARY KEY, hash TEXT NOT NULL UNIQUE, customer TEXT, "
    "operator TEXT, created_by TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT, "
    "revoked_by TEXT, CHECK ((customer IS NULL) <> (operator IS NULL)))"
)
# Statements that take a store from version N to N + 1, applied in one transaction each (a
# database module adds its own: orderbot.runs.postgres). 1 -> 2 and 3 -> 4 changed
# PostgreSQL's guards only; version 2 kept starts to the second and listed by id; 4 -> 5 adds
# the tokens (a database module's key type: `{key}`).
MIGRATIONS: dict[int, list[str]] = {
    1: [],
    3: [],
    4: [TOKENS_TABLE],
    2: [
        "UPDATE runs SET created_at = substr(created_at, 1, 19) || '.000000Z' WHERE length(created_at) = 20",
        "DROP INDEX IF EXISTS runs_by_customer",
        "DROP INDEX IF EXISTS runs_by_status",
        *RUN_INDEXES,
    ],
}
PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
# The status an approval row moves to, and the one it must have had: approved (the claim)
# comes before executing (the mark written just before the call runs), so a connection lost
# in between leaves a call that certainly did not run, and the approver can carry it out.
SETTLED_FROM = {APPROVED: PENDING, REJECTED: PENDING, EXECUTING: APPROVED, COMMITTED: EXECUTING, FAILED: EXECUTING}
FIRST_BATCH, BATCH = 25, 200  # summaries fetched by a listing's first query (`runs` shows 20), then per query


def tables(key: str, real: str, seq: str) -> list[str]:
    """CREATE statements; `key` is the text type of ids (PostgreSQL's sorts them bytewise
    with COLLATE "C", as SQLite does), `real` the floating type, `seq` the log's numbers."""
    return [
        "CREATE TABLE run_schema (version INTEGER NOT NULL)",
        "CREATE TABLE run_key (key TEXT NOT NULL)",
        f"CREATE TABLE runs (run_id {key} PRIMARY KEY, created_at TEXT NOT NULL, written {real} NOT NULL, "
        f"customer {key}, operator {key}, status {key} NOT NULL, summary TEXT NOT NULL, record TEXT NOT NULL, "
        "revision INTEGER NOT NULL, pruned_at TEXT)",
        *RUN_INDEXES,
        "CREATE INDEX runs_by_written ON runs (written)",
        f"CREATE TABLE run_approvals (run_id {key} NOT NULL REFERENCES runs (run_id), call_id {key} NOT NULL, "
        "tool TEXT NOT NULL, arguments TEXT NOT NULL, description TEXT NOT NULL, customer TEXT, "
        f"requested_by TEXT, requested_at {key} NOT NULL, status TEXT NOT NULL, decided_by TEXT, decided_at TEXT, "
        "PRIMARY KEY (run_id, call_id))",
        "CREATE INDEX run_approvals_waiting ON run_approvals (requested_at, run_id) WHERE status = 'pending'",
        f"CREATE TABLE run_audit (seq {seq} PRIMARY KEY, at TEXT NOT NULL, event TEXT NOT NULL, "
        f"run_id {key} NOT NULL, call_id {key} NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, "
        "customer TEXT, requested_by TEXT, decided_by TEXT, result TEXT, reason TEXT, "
        "prev TEXT NOT NULL, hash TEXT NOT NULL)",
        "CREATE INDEX run_audit_by_call ON run_audit (run_id, call_id)",
        "CREATE TABLE run_approvers (operator TEXT PRIMARY KEY)",
        "CREATE TABLE run_policy (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        TOKENS_TABLE.format(key=key),
    ]


SUMMARY_COLUMNS = "run_id, summary, created_at"
NEWEST_FIRST = " ORDER BY created_at DESC, run_id DESC"
INSERT_RUN = (
    "INSERT INTO runs (run_id, created_at, written, customer, operator, status, summary, record, revision, pruned_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)"
)
INSERT_NEW_RUN = INSERT_RUN + " ON CONFLICT (run_id) DO NOTHING"
UPDATE_RUN = (
    "UPDATE runs SET written = ?, customer = ?, operator = ?, status = ?, summary = ?, record = ?, "
    "revision = revision + 1, pruned_at = ? WHERE run_id = ? AND revision = ?"
)
INSERT_APPROVAL = (
    "INSERT INTO run_approvals (run_id, call_id, tool, arguments, description, customer, requested_by, "
    "requested_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT (run_id, call_id) DO NOTHING"
)
SETTLE_APPROVAL = (
    "UPDATE run_approvals SET status = ?, decided_by = ?, decided_at = ? "
    "WHERE run_id = ? AND call_id = ? AND status = ?"
)
MOVE_APPROVAL = "UPDATE run_approvals SET status = ? WHERE run_id = ? AND call_id = ? AND status = ?"
QUEUE_COLUMNS = "run_id, call_id, tool, arguments, customer, requested_by, status, decided_by"
QUEUE_ROWS = f"SELECT {QUEUE_COLUMNS} FROM run_approvals ORDER BY run_id, call_id"
QUEUE_ROW = f"SELECT {QUEUE_COLUMNS} FROM run_approvals WHERE run_id = ? AND call_id = ?"


class SqlRunStore(BaseRunStore):
    """A run store in a SQL database. A subclass provides `_rows` (one statement, outside a
    transaction), `_transaction` (a context in which `_tx_rows` / `_tx_change` run, committed
    at its end, rolled back on any error), `_lock_log` (within a transaction: wait until no
    other process appends to the log) and `_operator`.

    `keep`: how many runs the store keeps, the newest (None: every run, as a team's store
    does); `shared`: whether several operators use it (listings then name who ran each run)."""

    key_type, real_type, seq_type = "TEXT", "REAL", "INTEGER"
    keeps_its_key = True  # the key is in run_key (else `_own_key` gives it: a file beside the database)

    def __init__(
        self, where: str, *, prune_after_days: float | None = None, keep: int | None = None, shared: bool = True
    ) -> None:
        self.where = where
        self.prune_after_days = prune_after_days
        self.keep = keep
        self.shared = shared
        self._key: bytes | None = None
        self._operator_name: str | None = None

    # -- what a database module provides --

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def _transaction(self) -> contextlib.AbstractContextManager:
        raise NotImplementedError

    def _tx_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def _tx_change(self, sql: str, params: tuple = ()) -> int:
        raise NotImplementedError

    def _lock_log(self) -> None:
        raise NotImplementedError

    def _session_operator(self) -> str:
        raise NotImplementedError

    def _extra_schema(self) -> list[str]:
        """Statements run after the tables are made (PostgreSQL's guards)."""
        return []

    # -- the schema --

    def with_schema(self) -> Self:
        """This store, its schema made or migrated (ensure_schema); closed again when that
        fails, so that a store nobody can use leaves no connection open. Each database's
        `open` ends with it."""
        try:
            self.ensure_schema()
        except BaseException:
            self.close()
            raise
        return self

    def ensure_schema(self) -> None:
        """Make the tables in an empty database, migrate an older layout, refuse a newer one."""
        version = self._schema_version()
        if version is None:
            with self._transaction():
                self._lock_log()  # two orderbots making the tables at once: one makes them
                if self._schema_version_in_tx() is None:
                    for statement in tables(self.key_type, self.real_type, self.seq_type) + self._extra_schema():
                        self._tx_change(statement)
                    self._tx_change("INSERT INTO run_schema VALUES (?)", (SCHEMA_VERSION,))
                    if self.keeps_its_key:
                        self._tx_change("INSERT INTO run_key VALUES (?)", (os.urandom(32).hex(),))
            version = SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise ConfigError("runs.schema_newer", where=self.where, found=version, reads=SCHEMA_VERSION)
        while version < SCHEMA_VERSION:
            if version not in MIGRATIONS:
                raise ConfigError("runs.schema_unknown", where=self.where, found=version, reads=SCHEMA_VERSION)
            try:
                with self._transaction():
                    self._migrate(version)
                    self._tx_change("UPDATE run_schema SET version = ?", (version + 1,))
            except RecordError as exc:  # a desk's role may not replace the owner's tables or guards
                raise ConfigError("runs.migration_refused", where=self.where, found=version, why=exc.phrase) from None
            version += 1

    def _migrate(self, version: int) -> None:
        """Within a transaction: take this store from `version` to the next."""
        for statement in MIGRATIONS[version]:
            self._tx_change(statement.replace("{key}", self.key_type))

    def _schema_version(self) -> int | None:
        raise NotImplementedError

    def _schema_version_in_tx(self) -> int | None:
        raise NotImplementedError

    def _version(self, rows: list[tuple]) -> int:
        if len(rows) != 1 or not isinstance(rows[0][0], int):
            raise ConfigError("runs.schema_damaged", where=self.where)
        return rows[0][0]

    # -- identity and the key --

    @property
    def operator(self) -> str:
        if self._operator_name is None:
            self._operator_name = self._session_operator()
        return self._operator_name

    def key(self, *, create: bool = False) -> bytes | None:
        """The key of the records' tags; a store that keeps it in a file makes it at its first
        save (`create`), and has none before (then no record verifies)."""
        if self._key is None:
            if not self.keeps_its_key:
                self._key = self._own_key(create=create)
                return self._key
            rows = self._rows("SELECT key FROM run_key")
            if len(rows) != 1:
                raise RecordError("runs.key_damaged", where=self.where)
            self._key = bytes.fromhex(rows[0][0])
        return self._key

    def _own_key(self, *, create: bool) -> bytes | None:
        raise NotImplementedError

    def policy(self) -> Policy:
        return self._policy(self._rows)

    @staticmethod
    def _policy(rows) -> Policy:
        four_eyes = rows("SELECT value FROM run_policy WHERE name = 'four_eyes'")
        approvers = frozenset(row[0] for row in rows("SELECT operator FROM run_approvers"))
        on = bool(four_eyes) and str(four_eyes[0][0]).strip().lower() in ("on", "1", "true", "yes")
        return Policy(four_eyes=on, approvers=approvers or None)

    # -- writing --

    def save(self, record: RunRecord, steps: Sequence[Step] = ()) -> None:
        key = self.key(create=True)
        assert key is not None
        raw = tag_record(key, record.to_json().encode()).decode()
        summary = record.summary()
        row = (
            time.time(),
            summary.user,
            summary.operator,
            summary.status,
            _summary_json(summary),
            raw,
            record.pruned_at,
        )
        run_id = record.run_id
        seen = record.revision
        try:
            with self._transaction():
                if steps:
                    self._lock_log()  # first: every writer takes the locks in one order
                if seen is None:
                    self._insert_run(record, row)
                elif self._tx_change(UPDATE_RUN, (*row, run_id, seen)) != 1:
                    raise _Conflict
                for step in steps:
                    if not self._take(step):
                        raise _Conflict
        except _Conflict:
            raise RunConflict(self._conflict(record)) from None
        except _Unsettled as exc:
            raise RecordError("runs.settled_outside", run_id=run_id, where=self.where, by=exc.by or "?") from None
        except _IdTaken:
            raise RunIdTaken("runs.id_taken", run_id=run_id, where=self.where) from None
        record.revision = 1 if seen is None else seen + 1

    def _insert_run(self, record: RunRecord, row: tuple) -> None:
        """A new run's row. Its id may already be taken (ids are the second a run started and
        16 random bits, and many processes start runs at once): the insert then writes
        nothing, whichever of two racing transactions commits first, and the recorder draws
        another id (its first save comes before anything is shown or run)."""
        written, *rest = row
        values = (record.run_id, started_key(record.created_at, record.run_id), written, *rest)
        if self._tx_change(INSERT_NEW_RUN, values) != 1:
            raise _IdTaken

    # -- the queue and the log, written in this session's name --
    #
    # Within a save's transaction. What PostgreSQL's functions do on the server
    # (orderbot.runs.postgres overrides `_take`), done here for SQLite: each step names the
    # session's operator, never one the caller gives; an approval's decider is the session
    # that approves; a call runs only under an approval this session gave, for that call; an
    # outcome is logged only by the session carrying the call out. False: the row is not
    # where the step needs it (someone settled it meanwhile), and nothing of the save lands.

    def _take(self, step: Step) -> bool:
        me, call = self.operator, step.call
        row = self._queue_row(call.run_id, call.call_id)
        if step.event == "proposed":
            if row is not None:
                return False
            self._tx_change(
                INSERT_APPROVAL,
                (call.run_id, call.call_id, call.tool, call.arguments, call.description, call.customer, me,
                 call.requested_at),
            )  # fmt: skip
            self._log(step, self._queue_row(call.run_id, call.call_id))
            return True
        if row is None:
            raise self._refused(Phrase("runs.refused_no_call", {"run_id": call.run_id, "call_id": call.call_id}))
        if step.event in (APPROVED, REJECTED):
            if row.status != PENDING:
                return False
            if step.event == APPROVED:
                self._may_approve(me, row)
            self._tx_change(SETTLE_APPROVAL, (step.event, me, step.at[:19] + "Z", call.run_id, call.call_id, PENDING))
        elif step.event == EXECUTING:
            if row.status == EXECUTING and row.decided_by == me:
                return True  # marked before: the record is saved again, nothing runs a second time
            if row.status != APPROVED or row.decided_by != me:
                raise self._refused(Phrase("runs.refused_no_approval", _ids(me, call)))
            if (row.tool, row.arguments, row.customer) != (call.tool, call.arguments, call.customer):
                raise self._refused(Phrase("runs.refused_other_call", _ids(me, call)))
            self._check_before_executing(row)
            self._tx_change(MOVE_APPROVAL, (EXECUTING, call.run_id, call.call_id, APPROVED))
            return True
        else:  # executed, failed
            if row.status != EXECUTING or row.decided_by != me:
                raise self._refused(Phrase("runs.refused_no_execution", _ids(me, call)))
            status = COMMITTED if step.event == "executed" else FAILED
            self._tx_change(MOVE_APPROVAL, (status, call.run_id, call.call_id, EXECUTING))
        self._log(step, self._queue_row(call.run_id, call.call_id))
        return True

    def _queue_row(self, run_id: str, call_id: str) -> QueueRow | None:
        from orderbot.runs import audit

        rows = self._tx_rows(QUEUE_ROW, (run_id, call_id))
        return audit.QueueRow(*rows[0]) if rows else None

    def _may_approve(self, me: str, row: QueueRow) -> None:
        """The store's rules, as they are now: the approver list, and four eyes (neither the
        one who asked nor the one who started the run)."""
        policy = self._policy(self._tx_rows)
        if policy.approvers is not None and me not in policy.approvers:
            raise self._refused(Phrase("runs.refused_not_an_approver", {"operator": me}))
        if policy.four_eyes:
            started = self._tx_rows("SELECT operator FROM runs WHERE run_id = ?", (row.run_id,))
            if me in (row.requested_by, started[0][0] if started else None):
                raise self._refused(Phrase("runs.refused_four_eyes", {"operator": me, "run_id": row.run_id}))

    def _check_before_executing(self, row: QueueRow) -> None:
        """The last gate before an approved call runs: the log must hold the decision its
        queue row names, and the store's rules must still let that operator approve it. A row
        settled by hand (sqlite3, psql with the triggers off) is never carried out."""
        logged = self._tx_rows(
            "SELECT 1 FROM run_audit WHERE run_id = ? AND call_id = ? AND event = 'approved' AND decided_by = ?",
            (row.run_id, row.call_id, row.decided_by),
        )
        if not logged:
            raise _Unsettled(row.decided_by)
        try:
            self._may_approve(row.decided_by or "", row)
        except OperatorRefused:
            raise _Unsettled(row.decided_by) from None

    def _refused(self, why: Phrase) -> OperatorRefused:
        return OperatorRefused("runs.store_refused", where=self.where, why=why)

    def _log(self, step: Step, row: QueueRow | None) -> None:
        """The log's entry of `step`, made from the queue row it is about (who asked, who
        decided, for whom, what), numbered and linked after the last entry."""
        from orderbot.runs import audit

        assert row is not None
        entry = audit.AuditEntry.new(
            at=step.at,
            event=step.event,
            run_id=row.run_id,
            call_id=row.call_id,
            tool=row.tool or "",
            arguments=row.arguments,
            customer=row.customer,
            requested_by=row.requested_by,
            decided_by=None if step.event == "proposed" else row.decided_by,
            result=step.result if step.event in ("executed", "failed") else None,
            reason=step.reason if step.event == REJECTED else None,
        )
        last = self._tx_rows(f"SELECT {audit.COLUMNS} FROM run_audit ORDER BY seq DESC LIMIT 1")
        keyed = self._tx_rows(audit.NEWEST_KEYED)
        newest = audit.from_row(last[0]) if last else None
        seq, prev = audit.next_link(newest, [audit.from_row(r) for r in keyed], self.audit_key)
        entry = entry.chained(seq + 1, prev, self.audit_key)
        self._tx_change(audit.INSERT, (*entry.values(), entry.prev, entry.hash))

    def _import(self, raw: bytes, record: RunRecord) -> None:
        """Within a transaction: a record brought in whole, as another store kept it (its
        tagged bytes unchanged), with a queue row for each call it waits for, at the status
        its decisions and side effects give; RunConflict when its id is taken."""
        if self._tx_rows("SELECT 1 FROM runs WHERE run_id = ?", (record.run_id,)):
            raise RunConflict("runs.id_taken", run_id=record.run_id, where=self.where)
        summary = record.summary()
        self._tx_change(
            INSERT_RUN,
            (
                record.run_id,
                started_key(record.created_at, record.run_id),
                time.time(),
                summary.user,
                summary.operator,
                summary.status,
                _summary_json(summary),
                raw.decode(),
                record.pruned_at,
            ),
        )
        for waiting in waiting_calls(record):
            decision = record.decisions.get(waiting.call_id)
            status, by, at = PENDING, None, None
            if decision is not None and decision.approved is not None:
                status = record.side_effects.get(waiting.call_id, APPROVED) if decision.approved else REJECTED
                by, at = decision.decided_by, decision.decided_at
            self._tx_change(
                "INSERT INTO run_approvals (run_id, call_id, tool, arguments, description, customer, requested_by, "
                "requested_at, status, decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*waiting.as_dict().values(), status, by, at),
            )

    def _import_entry(self, entry: AuditEntry) -> None:
        """Within a transaction: an audit entry as it was, its number and links unchanged."""
        from orderbot.runs import audit

        self._tx_change(audit.INSERT, (*entry.values(), entry.prev, entry.hash))

    def _conflict(self, record: RunRecord) -> Phrase:
        """Who got there first: the settlement of one of the run's calls, if there is one."""
        settled = self._rows(
            "SELECT tool, status, decided_by, decided_at FROM run_approvals WHERE run_id = ? AND status <> 'pending' "
            "ORDER BY decided_at DESC LIMIT 1",
            (record.run_id,),
        )
        if settled:
            tool, status, by, at = settled[0]
            verb = Phrase("runs.verb_rejected" if status == REJECTED else "runs.verb_approved")
            params = {"run_id": record.run_id, "tool": tool, "verb": verb, "by": by or "?", "at": at or "?"}
            return Phrase("runs.settled_first", params)
        return Phrase("runs.changed_elsewhere", {"run_id": record.run_id})

    # -- reading --

    def resolve(self, run_id: str) -> str:
        run_id = run_id.strip()
        if run_id == "last":
            rows = self._rows("SELECT run_id FROM runs ORDER BY written DESC LIMIT 1")
            if not rows:
                raise RecordError("runs.none_in", where=self.where)
            return rows[0][0]
        if RUN_ID.fullmatch(run_id):
            if not self._rows("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)):
                raise RecordError("runs.no_such_run", run_id=run_id, where=self.where)
            return run_id
        if len(run_id) < 6 or not all(c in "0123456789abcdef-" for c in run_id):
            raise UsageError("runs.not_an_id", value=repr(cut(run_id, 40)))
        found = [
            r[0]
            for r in self._rows(
                "SELECT run_id FROM runs WHERE run_id >= ? AND run_id <= ? ORDER BY run_id DESC LIMIT 4",
                (run_id, run_id + "~"),
            )
        ]
        if not found:
            raise RecordError("runs.no_prefix", prefix=cut(run_id, 40), where=self.where)
        if len(found) > 1:
            raise UsageError("runs.ambiguous", prefix=cut(run_id, 40), some=", ".join(found[:3]))
        return found[0]

    def load(self, run_id: str, *, allow_altered: bool = False) -> RunRecord:
        full = self.resolve(run_id)
        rows = self._rows("SELECT record, revision FROM runs WHERE run_id = ?", (full,))
        if not rows:
            raise RecordError("runs.no_such_run", run_id=full, where=self.where)
        kept, revision = rows[0]
        raw = _as_bytes(kept)
        record = parse_record(Phrase("runs.record_in", {"where": self.where, "run_id": full}), raw)
        reason = tag_problem(self.key(), raw, elsewhere=Phrase(self.elsewhere))
        if record.run_id != full or record.state.run_id != full:
            reason = Phrase("runs.other_run_inside", {"found": repr(cut(record.state.run_id, 40)), "run_id": full})
        if reason is not None:
            if not allow_altered:
                raise RecordError("runs.record_altered", run_id=full, reason=reason)
            record.altered = reason
        record.revision = revision
        return record

    elsewhere = "runs.elsewhere_store"  # where a record that does not verify may come from

    def export(self, run_id: str) -> bytes:
        rows = self._rows("SELECT record FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise RecordError("runs.no_such_run", run_id=run_id, where=self.where)
        return _as_bytes(rows[0][0])

    def document(self, run_id: str) -> dict:
        return json.loads(self.export(run_id))

    def ids(self, limit: int = 50) -> list[str]:
        return [r[0] for r in self._rows("SELECT run_id FROM runs" + NEWEST_FIRST + " LIMIT ?", (limit,))]

    def summaries(self, *, user: str | None = None, status: str | None = None) -> Iterator[RunSummary]:
        """Newest first, a batch at a time (keyset: each query starts below the last run's
        start and id)."""
        where, params = [], []
        for column, value in (("customer", user), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        below, batch = None, FIRST_BATCH
        while True:
            clause = where + (["(created_at, run_id) < (?, ?)"] if below is not None else [])
            sql = f"SELECT {SUMMARY_COLUMNS} FROM runs"
            if clause:
                sql += " WHERE " + " AND ".join(clause)
            rows = self._rows(sql + NEWEST_FIRST + " LIMIT ?", (*params, *(below or ()), batch))
            for run_id, summary_json, _ in rows:
                yield _summary(run_id, summary_json)
            if len(rows) < batch:
                return
            below, batch = (rows[-1][2], rows[-1][0]), BATCH

    def waiting(
        self, *, limit: int = 1000, customer: str | None = None, requested_by: str | None = None
    ) -> list[Waiting]:
        where, params = ["status = 'pending'"], []
        for column, value in (("customer", customer), ("requested_by", requested_by)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        rows = self._rows(
            "SELECT run_id, call_id, tool, arguments, description, customer, requested_by, requested_at "
            f"FROM run_approvals WHERE {' AND '.join(where)} ORDER BY requested_at, run_id LIMIT ?",
            (*params, limit),
        )
        return [Waiting(*row) for row in rows]

    def audit_entries(self) -> Iterator[AuditEntry | str]:
        from orderbot.runs import audit

        after = 0
        while True:
            rows = self._rows(f"SELECT {audit.COLUMNS} FROM run_audit WHERE seq > ? ORDER BY seq LIMIT 1000", (after,))
            for row in rows:
                yield _entry(row)
            if len(rows) < 1000:
                return
            after = rows[-1][0]

    def audit_problems(self) -> list:
        """The log against the queue, both ways (orderbot.runs.audit.against_queue); a call
        decided inline, which never waited in the queue, against its run's record."""
        from orderbot.runs import audit

        records: dict[str, RunRecord | None] = {}

        def recorded(run_id: str, call_id: str) -> Settled | None:
            if run_id not in records:
                try:
                    records[run_id] = self.load(run_id) if RUN_ID.fullmatch(run_id) else None
                except RecordError:
                    records[run_id] = None
            record = records[run_id]
            decision = None if record is None else record.decisions.get(call_id)
            if decision is None:
                return None
            tool = next((c.name for c in record.state.calls if c.call_id == call_id), None)
            return audit.Settled(tool, decision.requested_by, decision.decided_by, decision.approved)

        rows = [audit.QueueRow(*row) for row in self._rows(QUEUE_ROWS)]
        logged: set[tuple[str, str, str, str | None]] = set()

        def noting(entries: Iterator[AuditEntry | str]) -> Iterator[AuditEntry | str]:
            for entry in entries:
                if isinstance(entry, audit.AuditEntry) and entry.event in (APPROVED, REJECTED):
                    logged.add((entry.run_id, entry.call_id, entry.event, entry.decided_by))
                yield entry

        entries: Iterator[AuditEntry | str] = noting(self.audit_entries())
        if self.keep is not None:
            # Runs past `keep` were dropped whole; their entries stay in the chain, which
            # `verify` checks, but there is nothing left to hold them against.
            kept = {row[0] for row in self._rows("SELECT run_id FROM runs")}
            entries = (e for e in entries if isinstance(e, str) or e.run_id in kept)
        problems = audit.against_queue(entries, rows, recorded)
        return problems + audit.against_records(self._decided(), rows, logged)

    def _decided(self) -> Iterator[Decided]:
        """Every decision the runs' records hold (a record that is not JSON holds none: `runs
        show` names it)."""
        from orderbot.runs import audit

        after = ""
        while True:
            rows = self._rows("SELECT run_id, record FROM runs WHERE run_id > ? ORDER BY run_id LIMIT 200", (after,))
            for run_id, kept in rows:
                try:
                    decisions = json.loads(_as_bytes(kept)).get("decisions") or {}
                    for call_id, said in decisions.items():
                        if said.get("approved") is not None:
                            by, asked = said.get("decided_by"), said.get("requested_by")
                            queued = said.get("queued_as") or call_id  # a reused call id: its own row
                            yield audit.Decided(run_id, queued, bool(said["approved"]), by, asked)
                except (ValueError, AttributeError, TypeError):
                    continue
            if len(rows) < 200:
                return
            after = rows[-1][0]

    # -- bearer tokens (orderbot.runs.tokens); PostgreSQL: through its owner's functions --

    def add_token(
        self, secret_hash: str, *, customer: str | None, operator: str | None, expires_at: str | None
    ) -> Token:
        from orderbot.runs import tokens

        for _ in range(5):  # a new id drawn when one is taken (48 random bits: never, in practice)
            token_id = tokens.new_id()
            with self._transaction():
                added = self._add_token(token_id, secret_hash, customer, operator, expires_at)
            if added:
                found = self.token(secret_hash)
                assert found is not None
                return found
        raise RecordError("runs.store_busy", where=self.where)  # five ids taken in a row: try again

    def _add_token(
        self, token_id: str, secret_hash: str, customer: str | None, operator: str | None, expires_at: str | None
    ) -> bool:
        from orderbot.runs import tokens

        me = self.operator
        refused = tokens.maker_refused(me, operator)
        if refused is not None:
            raise self._refused(refused)
        row = (token_id, secret_hash, customer, operator, me, tokens.utc(time.time()), expires_at)
        return self._tx_change(tokens.INSERT, row) == 1

    def token(self, secret_hash: str) -> Token | None:
        from orderbot.runs import tokens

        rows = self._rows(tokens.BY_HASH, (secret_hash,))
        return tokens.Token(*rows[0]) if rows else None

    def tokens(self) -> list[Token]:
        from orderbot.runs import tokens

        return [tokens.Token(*row) for row in self._rows(tokens.LISTED)]

    def tokens_exist(self) -> bool:
        from orderbot.runs import tokens

        return bool(self._rows(tokens.ANY))

    def revoke_token(self, token_id: str) -> tuple[Token, bool]:
        with self._transaction():
            outcome = self._revoke_token(token_id)
        if outcome == "none":
            raise RecordError("tokens.no_such", id=cut(token_id, 40), where=self.where)
        (token,) = [t for t in self.tokens() if t.id == token_id]
        return token, outcome == "revoked"

    def _revoke_token(self, token_id: str) -> str:
        """Within a transaction: revoked, already (revoked before) or none (no such token)."""
        from orderbot.runs import tokens

        rows = self._tx_rows(tokens.BY_ID, (token_id,))
        if not rows:
            return "none"
        token = tokens.Token(*rows[0])
        if token.revoked_at is not None:
            return "already"
        refused = tokens.revoker_refused(self.operator, token)
        if refused is not None:
            raise self._refused(refused)
        self._tx_change(tokens.REVOKE, (tokens.utc(time.time()), self.operator, token_id))
        return "revoked"

    # -- pruning --

    def prune(self, keep_id: str | None = None) -> list[str]:
        """With `prune_after_days`, older runs keep only their summary; past `keep`, the
        oldest runs are dropped (never one waiting for approval, nor `keep_id`); a team's
        store keeps every run. The audit log is never pruned. The ids dropped."""
        if self.prune_after_days is not None:
            self.prune_older(self.prune_after_days, now=time.time(), keep_id=keep_id)
        if self.keep is None:
            return []
        rows = self._rows("SELECT run_id FROM runs" + NEWEST_FIRST + " LIMIT -1 OFFSET ?", (self.keep,))
        doomed = [run_id for (run_id,) in rows if run_id != keep_id]
        if not doomed:
            return []
        waiting = str(StopReason.AWAITING_APPROVAL)
        dropped = []
        with self._transaction():
            for run_id in doomed:
                if not self._tx_rows("SELECT 1 FROM runs WHERE run_id = ? AND status <> ?", (run_id, waiting)):
                    continue  # waiting, or dropped meanwhile by another orderbot
                self._tx_change("DELETE FROM run_approvals WHERE run_id = ?", (run_id,))
                self._tx_change("DELETE FROM runs WHERE run_id = ?", (run_id,))
                dropped.append(run_id)
        return dropped

    def prune_older(self, days: float, *, now: float, keep_id: str | None = None) -> int:
        # Run ids begin with their start time (to the second), so "started by then" is a range of the key.
        cutoff = time.strftime("%y%m%d-%H%M%S", time.gmtime(now - days * 86400)) + "~"
        pruned = 0
        rows = self._rows(
            "SELECT run_id FROM runs WHERE run_id < ? AND pruned_at IS NULL AND status <> ? ORDER BY run_id",
            (cutoff, str(StopReason.AWAITING_APPROVAL)),
        )
        for (run_id,) in rows:
            if run_id == keep_id:
                continue
            try:
                record = self.load(run_id)
                record.prune(now)
                self.save(record)
            except RecordError:
                continue  # altered, or written meanwhile by another orderbot: left as it is
            pruned += 1
        return pruned


def waiting_calls(record: RunRecord) -> list[Waiting]:
    """The calls a record waits for, with who asked (the operator of the run's last segment
    when the record does not say)."""
    asked_by = record.segments[-1].operator if record.segments else record.operator
    out = []
    for pending in record.state.pending:
        decision = record.decisions.get(pending.call_id)
        out.append(
            Waiting(
                run_id=record.run_id,
                call_id=pending.call_id,
                tool=pending.name,
                arguments=pending.arguments,
                description=pending.description,
                customer=pending.user,
                requested_by=(decision.requested_by if decision else None) or asked_by,
                requested_at=utc_iso(pending.requested_at),
            )
        )
    return out


class _Conflict(Exception):
    """The run is no longer as this process read it: the transaction is rolled back."""


class _Unsettled(Exception):
    """An approved call's row, log or policy does not bear its approval out: rolled back."""

    def __init__(self, by: str | None) -> None:
        self.by = by


class _IdTaken(Exception):
    """A new run's id is already another run's: the transaction is rolled back."""


def _ids(operator: str, call: Waiting) -> dict:
    return {"operator": operator, "run_id": call.run_id, "call_id": call.call_id}


def _entry(row: Sequence) -> AuditEntry | str:
    from orderbot.runs import audit

    try:
        return audit.from_row(row)
    except TypeError:
        return "unreadable"


def _as_bytes(kept: object) -> bytes:
    """A record as the database gave it back: text as orderbot wrote it, or whatever someone
    else put in its place (bytes, a number), which then fails as a record, never here."""
    if isinstance(kept, str):
        return kept.encode("utf-8", "surrogatepass")
    return kept if isinstance(kept, bytes) else b""


def _summary_json(summary: RunSummary) -> str:
    doc = summary.as_dict()
    del doc["run_id"]
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _summary(run_id: str, summary_json: str) -> RunSummary:
    try:
        doc: dict[str, Any] = json.loads(summary_json)
        doc["history"] = tuple(doc.get("history") or ())
        doc["decisions"] = tuple(doc.get("decisions") or ())
        return RunSummary(run_id=run_id, **doc)
    except (ValueError, TypeError):
        return RunSummary(run_id=run_id, error="damaged_summary")  # a code: runs.unreadable_<code>
