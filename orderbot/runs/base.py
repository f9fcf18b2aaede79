"""What every run store offers, and the values they share: one interface, two databases
behind it (orderbot.runs.sql: SQLite, the state directory's by default or a team's file, and
PostgreSQL for a team that outgrows one machine).

A run store keeps, for one person or for a team:
- the run records (orderbot.runs.record), tagged (orderbot.runs.tagged) and checked when
  they are read back;
- what `orderbot runs` lists (one summary per run);
- the approval queue: every side effect a run waits for, who asked, who settled it;
- the `executing` mark written before an approved side effect runs, so that no crash,
  lost connection or second approver can ever have it run twice;
- the audit log (orderbot.runs.audit), appended to in the same write as the record it
  belongs to.

**The store writes the queue and the log, in its own name.** A save carries the record and the
steps its side effects took since the last save (`Step`: asked for, approved or rejected, about
to run, run or failed); the store writes each into the queue and the log itself, naming the
session's operator, stamping the time and linking the entry. The caller says what happened to
which call, never who did it: with PostgreSQL the server's functions do the writing
(orderbot.runs.postgres), and no operator can write a queue row or a log entry directly.

**Saving is the claim.** A store's `save` writes the record, its summary, its approvals and
its audit entries in one transaction, and only if the run is still as it was when this
process read it (its revision): of two operators approving one call at once, or two shells
resuming one run, exactly one save lands, and the other is told who settled it first,
before anything ran. The database's own locking is the only lock.

The operator is who runs orderbot, taken from the session and never from a flag or the
model: with PostgreSQL the role the connection logged in as (`session_user`; a session
switched to another role is refused, orderbot.runs.postgres), else the operating system's
login name (`operator_name`).
"""

from __future__ import annotations

import contextlib
import getpass
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from orderbot.errors import OperatorRefused, Phrase
from orderbot.runs.record import RunRecord
from orderbot.runs.summary import RunSummary

if TYPE_CHECKING:  # loaded when a call is decided or a token used, not by every run
    from orderbot.runs.audit import AuditEntry
    from orderbot.runs.tokens import Token


class RunConflict(OperatorRefused):
    """Another process settled or changed the run since this one read it: nothing of this
    save was written (its sentence names who settled it, when a store knows)."""


class RunIdTaken(RunConflict):
    """The id a new run drew is already another run's: nothing was written (the recorder
    draws another before the run is shown or goes on)."""


def operator_name() -> str:
    """The login name of this process's user, from the system's user database (not from
    $USER or $LOGNAME, which anyone can set to anything)."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):  # no pwd module (Windows), or a uid without an entry
        with contextlib.suppress(Exception):
            return getpass.getuser()
        return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"


class Waiting(NamedTuple):
    """One side effect a run waits for, as the approval queue shows it."""

    run_id: str
    call_id: str
    tool: str
    arguments: str  # canonical JSON, as the approval is bound to it
    description: str  # what the approval prompt shows ("Cancel ORD-1002 (处理中, ¥199.00), reason: …")
    customer: str | None
    requested_by: str | None
    requested_at: str  # UTC, ISO 8601

    def as_dict(self) -> dict:
        return self._asdict()


STEPS = ("proposed", "approved", "rejected", "executing", "executed", "failed")


class Step(NamedTuple):
    """What happened to one side effect, as a save tells the store: `proposed` (a person is
    asked), `approved` or `rejected` (this session decided; `reason` for a rejection),
    `executing` (it is about to run: only the one who approved it may say so, for the call
    that was approved), `executed` or `failed` (it ran: `result`). `call` names the call as the
    queue keeps it; its `requested_by` is not read, since the store names the session's
    operator itself. `at` is this process's clock, which a SQLite store writes (PostgreSQL
    stamps the server's)."""

    event: str  # one of STEPS
    call: Waiting
    at: str  # UTC, ISO 8601 with milliseconds, as the log spells times
    result: str | None = None
    reason: str | None = None


class Policy(NamedTuple):
    """What the store itself says about approvals (a SQL store's run_policy and run_approvers
    tables, set by whoever owns the store): four eyes, and who may approve (None: anyone)."""

    four_eyes: bool = False
    approvers: frozenset[str] | None = None

    def asks_at_the_prompt(self, operator: str, *, four_eyes: bool = False) -> bool:
        """Whether `operator` may approve a run's action where it runs (a terminal prompt, an
        MCP host's question): never with four eyes (`four_eyes`: the settings' own), since
        the run is theirs; when the store lists approvers, only if they are one. Otherwise
        the run pauses for the queue, where the store's rules are checked again."""
        if four_eyes or self.four_eyes:
            return False
        return self.approvers is None or operator in self.approvers


class Takeover(NamedTuple):
    """What a store brought over from an earlier orderbot's files (orderbot.runs.takeover):
    how many runs and audit entries, where the old files went, and what was left out (the
    file or line, and why)."""

    runs: int
    entries: int
    aside: Path | None
    left: tuple[tuple[str, Phrase], ...] = ()


class BaseRunStore(ABC):
    """A place that keeps runs. `where` names it in messages (never with a password);
    `operator` is this session's operator; `shared` is True for a store several operators
    use (listings then show who ran each run); `audit_key`, when set, keys the audit log's
    links (set by orderbot.runs.stores from the settings; never stored); `took_over`, what
    this process brought over from an earlier orderbot's files (orderbot.runs.takeover)."""

    where: str
    operator: str
    shared: bool = False
    audit_key: bytes | None = None  # the audit key (orderbot.runs.audit): links are HMACs with it
    took_over: Takeover | None = None

    def prepare(self) -> None:  # noqa: B027 - a store with nothing to make or check
        """Make the store ready for records, or refuse it in one sentence (RecordError),
        before a command shows anything."""

    @abstractmethod
    def save(self, record: RunRecord, steps: Sequence[Step] = ()) -> None:
        """Write the record, its summary and its `steps` (into the queue and the log)
        together. Raises RunConflict when another process changed the run since this one read
        it, OperatorRefused when a step is not this operator's to take, RecordError otherwise."""

    @abstractmethod
    def load(self, run_id: str, *, allow_altered: bool = False) -> RunRecord:
        """The record of `run_id` (an id, a unique prefix or `last`), its integrity checked;
        `allow_altered` (for display only) returns one that fails with `altered` set."""

    @abstractmethod
    def resolve(self, run_id: str) -> str:
        """A full run id from an id, a unique prefix of one (6 characters or more), or `last`."""

    @abstractmethod
    def ids(self, limit: int = 50) -> list[str]:
        """The newest run ids (shell completion)."""

    @abstractmethod
    def summaries(self, *, user: str | None = None, status: str | None = None) -> Iterator[RunSummary]:
        """Newest first; an unreadable record yields a summary with `error` set."""

    @abstractmethod
    def export(self, run_id: str) -> bytes:
        """The record of a full run id as stored: tagged JSON, what an earlier orderbot kept
        in `runs/<run id>.json` (`orderbot runs export`)."""

    @abstractmethod
    def document(self, run_id: str) -> dict:
        """The record of a full run id as stored, for `runs show --json`."""

    @abstractmethod
    def prune(self, keep_id: str | None = None) -> list[str]:
        """What a store drops after each run (the state directory's: runs past its count)."""

    @abstractmethod
    def prune_older(self, days: float, *, now: float, keep_id: str | None = None) -> int:
        """Drop the conversation of runs older than `days` (not waiting for approval),
        keeping each run's summary and the whole audit log; how many were pruned."""

    @abstractmethod
    def waiting(
        self, *, limit: int = 1000, customer: str | None = None, requested_by: str | None = None
    ) -> list[Waiting]:
        """The approval queue, oldest request first: every side effect a run waits for, or
        only those about one customer, or asked for by one operator."""

    # -- bearer tokens of orderbot mcp (orderbot.runs.tokens): their hashes, never the secret --

    @abstractmethod
    def add_token(
        self, secret_hash: str, *, customer: str | None, operator: str | None, expires_at: str | None
    ) -> Token:
        """Keep a new token's hash, naming one customer or one operator (only this
        operator's own name: OperatorRefused otherwise); what `tokens list` shows of it."""

    @abstractmethod
    def token(self, secret_hash: str) -> Token | None:
        """The token whose secret has this hash (revoked and expired ones too), or None."""

    @abstractmethod
    def tokens(self) -> list[Token]:
        """Every token, oldest first, without secret or hash."""

    @abstractmethod
    def tokens_exist(self) -> bool:
        """Whether any token was ever made (revoked or expired ones count)."""

    @abstractmethod
    def revoke_token(self, token_id: str) -> tuple[Token, bool]:
        """Revoke a token by its id: it and whether this call revoked it (False: it was
        already). RecordError for no such token, OperatorRefused for one not this operator's
        to revoke."""

    @abstractmethod
    def audit_entries(self) -> Iterator[AuditEntry | str]:
        """The audit log, oldest first (a str: an entry that cannot be read)."""

    def audit_problems(self) -> list:
        """Problems only the store can see beyond the chain (orderbot.runs.audit.Problem): a
        store with a queue checks the log against it, both ways."""
        return []

    def verify_limit(self) -> Phrase | None:
        """What `audit --verify` cannot rule out in this store even when the log is intact,
        said beside its verdict (None: nothing beyond what docs/team.md says of its owner)."""
        return None

    def keyed_links(self) -> Callable[[AuditEntry], bool] | None:
        """How to check an entry linked with an audit key this session does not hold: a store
        whose own functions hold the key checks it for the session (PostgreSQL); None when
        it cannot."""
        return None

    def policy(self) -> Policy:
        return Policy()

    def close(self) -> None:  # noqa: B027 - a store without a connection has nothing to close
        pass
