"""The audit log: one entry for every side effect proposed, approved, rejected, executed or
failed, each carrying the link of the entry before it, so that `orderbot audit --verify`
finds an entry that was changed or removed.

An entry's link (its `hash`) is SHA-256 over the previous entry's link and the entry's own
fields (its sequence number included), as one line of canonical JSON. The first entry
follows GENESIS. Changing an entry breaks its own link; recomputing that link breaks the
next entry's; removing one leaves a gap in the numbers and a broken link.

Who writes the entries decides what the chain can show. The run store writes them from what
happened to each call, naming the session's operator itself (orderbot.runs.base); with
PostgreSQL its owner's functions write them on the server, with the same hashing in SQL, and
no operator can write the table at all (orderbot.runs.postgres). Whoever can write the table
directly (a SQLite file's users; a PostgreSQL store's owner, a superuser) can also compute
links, and so append or re-chain entries that verify. With an audit key each link is an
HMAC-SHA256 instead, written as `hmac:` and 64 hex digits: without the key nobody can make
one that verifies. A SQLite store's desks hold the key (ORDERBOT_AUDIT_KEY, or a key file);
a PostgreSQL store keeps it where only its functions read it, for a log keyed before the
server wrote it. A log may be keyed from some entry on; every entry after the first keyed one
must be keyed too, and the keyed entry anchors every unkeyed one before it.

What a chain alone cannot show is the newest entries removed together: `--verify --head`
checks that a head noted earlier is still in the log, and a SQL store cross-checks the log
against its queue both ways (`against_queue`): every approval has its proposal, decision and
outcome in the log, and every entry agrees with the approval it is about.

Stores read entries back as `AuditEntry` values, which `verify` and `matches` check and
filter. No store ever rewrites or deletes an entry: pruning runs leaves the log alone.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from orderbot.errors import Phrase, RecordError
from orderbot.text import cut

GENESIS = "0" * 64
KEYED = "hmac:"  # how a link made with the audit key begins
EVENTS = ("proposed", "approved", "rejected", "executed", "failed")
# The fields an entry is hashed over, in this order; SQL stores keep one column for each.
FIELDS = (
    "seq",
    "at",
    "event",
    "run_id",
    "call_id",
    "tool",
    "arguments",
    "customer",
    "requested_by",
    "decided_by",
    "result",
    "reason",
)
MAX_ARGUMENTS, MAX_RESULT, MAX_REASON = 2000, 1000, 500  # characters kept per entry
# The SQL stores' table of the log (orderbot.runs.sql): an entry's columns, its insert, and the
# newest entries linked with a key (a session continues a keyed log only with a key that links one).
COLUMNS = ", ".join((*FIELDS, "prev", "hash"))
INSERT = f"INSERT INTO run_audit ({COLUMNS}) VALUES ({', '.join('?' * (len(FIELDS) + 2))})"
NEWEST_KEYED = f"SELECT {COLUMNS} FROM run_audit WHERE hash LIKE 'hmac:%' ORDER BY seq DESC LIMIT 20"


class AuditEntry(NamedTuple):
    """One line of the audit log. `seq`, `prev` and `hash` are set when it is appended.

    The log's values are named tuples, as the engine's are (orderbot.loop.model): a frozen
    dataclass costs ten times as much to define, which every command that opens a run store
    paid at import, and a store reads them back by the thousand."""

    at: str  # UTC, ISO 8601 with milliseconds: entries sort by it as text
    event: str  # one of EVENTS
    run_id: str
    call_id: str
    tool: str
    arguments: str  # the call's canonical arguments, as the approval was bound to them
    customer: str | None  # whom the run is about
    requested_by: str | None  # the operator whose run proposed the call
    decided_by: str | None = None  # who approved or rejected it (and so carried it out)
    result: str | None = None  # executed or failed: the result envelope, as compact JSON
    reason: str | None = None  # rejected: why, as the operator wrote it
    seq: int = 0
    prev: str = ""
    hash: str = ""

    @classmethod
    def new(cls, **fields) -> AuditEntry:
        """An entry with its texts bounded (a record's bounds apply to the log too)."""
        entry = cls(**fields)
        return entry._replace(
            arguments=cut(entry.arguments, MAX_ARGUMENTS),
            result=None if entry.result is None else cut(entry.result, MAX_RESULT),
            reason=None if entry.reason is None else cut(entry.reason, MAX_REASON),
        )

    def chained(self, seq: int, prev: str, key: bytes | None = None) -> AuditEntry:
        """This entry as number `seq`, following the entry whose link is `prev` (an HMAC
        with `key` when there is one)."""
        linked = self._replace(seq=seq, prev=prev, hash="")
        return linked._replace(hash=entry_hash(linked, key))

    def values(self) -> tuple:
        """The hashed fields, in FIELDS order (a SQL row without prev and hash)."""
        return tuple(getattr(self, name) for name in FIELDS)

    def as_dict(self) -> dict:
        return self._asdict()

    @property
    def operators(self) -> tuple[str, ...]:
        return tuple(o for o in (self.requested_by, self.decided_by) if o)


def entry_hash(entry: AuditEntry, key: bytes | None = None) -> str:
    line = json.dumps(entry.values(), ensure_ascii=False, separators=(",", ":"))
    data = f"{entry.prev}\n{line}".encode()
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return KEYED + hmac.new(key, data, hashlib.sha256).hexdigest()


def next_link(last: AuditEntry | None, keyed: Sequence[AuditEntry], key: bytes | None) -> tuple[int, str]:
    """The number and `prev` of the entry that follows `last` (None: an empty log); `keyed`,
    the newest entries linked with a key, newest first (none: the log is not keyed). A keyed
    log is continued only by a session whose key links one of them: without a key, or with
    another, a RecordError says so and nothing is written, rather than entries `--verify`
    would report as appended by someone without the key. One entry that does not verify
    (a row written by hand) stops nobody: the next entry links on from it, and `--verify`
    names it."""
    if last is None:
        return 0, GENESIS
    if keyed:
        if key is None:
            raise RecordError("audit.key_needed_to_append")
        if not any(entry_hash(entry, key) == entry.hash for entry in keyed):
            raise RecordError("audit.other_key_to_append", seq=keyed[0].seq)
    return last.seq, last.hash


def from_row(row: Sequence) -> AuditEntry:
    """An entry from a SQL row: the FIELDS, then prev and hash."""
    values = dict(zip((*FIELDS, "prev", "hash"), row, strict=True))
    return AuditEntry(**values)


class Problem(NamedTuple):
    """One thing `verify` found wrong: a catalogue id (`audit.*`) and its values, said as any
    phrase is (orderbot.i18n.say)."""

    id: str
    params: dict


class AuditCheck(NamedTuple):
    """What `verify` found: how many entries, the last link, and every problem (by entry);
    `keyed_from`, the first entry linked with the audit key (None: none, or no key given)."""

    entries: int
    head: str
    problems: tuple[Problem, ...]
    more: int = 0  # problems found past the ones kept
    keyed_from: int | None = None

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(
    entries: Iterable[AuditEntry | str],
    *,
    key: bytes | None = None,
    keyed_links: Callable[[AuditEntry], bool] | None = None,
    head: str | None = None,
    limit: int = 20,
) -> AuditCheck:
    """Walk the chain from the first entry: numbers 1, 2, ... with no gap, each linked to the
    one before, each link what its fields give. A `str` in `entries` is a line that could not
    be read as an entry at all. With `key` (or, without one, `keyed_links`: the store's own
    check of a keyed link, orderbot.runs.base), keyed links are checked and, once one is,
    every later entry must be keyed too; with neither a keyed log cannot be checked (a
    problem, not a pass). `head`: a link noted earlier, which must still be in the log. At
    most `limit` problems are kept (the count is exact)."""
    if key is not None:
        keyed_links = lambda entry: entry_hash(entry, key) == entry.hash  # noqa: E731
    problems: list[Problem] = []
    count, expected, prev = 0, 1, GENESIS
    more = 0
    keyed_from = unchecked = None
    wrong_key: list[int] = []  # keyed entries whose HMAC is not this key's
    head_seen = head is None or head == GENESIS  # the head of an empty log is in every log

    def problem(message_id: str, **params) -> None:
        nonlocal more
        if len(problems) < limit:
            problems.append(Problem(message_id, params))
        else:
            more += 1

    for entry in entries:
        count += 1
        if isinstance(entry, str):
            problem("audit.unreadable", seq=expected)
            expected += 1
            prev = ""
            continue
        if entry.seq != expected:
            if entry.seq > expected:
                if entry.seq == expected + 1:
                    problem("audit.missing_one", seq=expected)
                else:
                    problem("audit.missing", first=expected, last=entry.seq - 1)
            else:
                problem("audit.out_of_order", seq=entry.seq)
        if entry.prev != prev and prev != "":
            problem("audit.broken_link", seq=entry.seq)
        keyed = entry.hash.startswith(KEYED)
        if keyed and keyed_links is None:
            unchecked = unchecked or entry.seq
        elif keyed and not keyed_links(entry):
            wrong_key.append(entry.seq)
        elif not keyed and entry_hash(entry) != entry.hash:
            problem("audit.changed", seq=entry.seq)
        elif keyed:
            keyed_from = keyed_from or entry.seq
        elif keyed_links is not None and keyed_from is not None:
            problem("audit.not_keyed", seq=entry.seq)
        head_seen = head_seen or entry.hash == head
        expected, prev = entry.seq + 1, entry.hash
    if wrong_key and keyed_from is None:  # not one keyed entry matches: most likely another key
        problem("audit.other_key", count=len(wrong_key))
    else:
        for seq in wrong_key:
            problem("audit.changed", seq=seq)
    if unchecked is not None:
        problem("audit.needs_key", seq=unchecked)
    if key is not None and count and keyed_from is None and not wrong_key:
        problem("audit.never_keyed")
    if not head_seen:
        problem("audit.head_missing", head=head)
    return AuditCheck(count, prev if count else GENESIS, tuple(problems), more, keyed_from)


def matches(
    entry: AuditEntry,
    *,
    customer: str | None = None,
    operator: str | None = None,
    tool: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> bool:
    """Whether `entry` passes the filters of `orderbot audit` (times as `at` spells them)."""
    return (
        (customer is None or entry.customer == customer)
        and (operator is None or operator in entry.operators)
        and (tool is None or entry.tool == tool)
        and (since is None or entry.at >= since)
        and (until is None or entry.at < until)
    )


# ---- the log against the queue --------------------------------------------------------

# The queue statuses each event agrees with (a SQL store's run_approvals.status).
AGREES = {
    "proposed": {"pending", "approved", "rejected", "executing", "committed", "failed"},
    "approved": {"approved", "executing", "committed", "failed"},
    "rejected": {"rejected"},
    "executed": {"committed"},
    "failed": {"failed"},
}
STAGE = {
    "proposed": "proposal",
    "approved": "decision",
    "rejected": "decision",
    "executed": "outcome",
    "failed": "outcome",
}


class QueueRow(NamedTuple):
    """One approval as the queue holds it (a SQL store's run_approvals row)."""

    run_id: str
    call_id: str
    tool: str | None
    arguments: str
    customer: str | None
    requested_by: str | None
    status: str
    decided_by: str | None


class Settled(NamedTuple):
    """What a run's record says of one of its calls that never waited in the queue (decided
    inline): who asked, who decided, and whether it was approved."""

    tool: str | None
    requested_by: str | None
    decided_by: str | None
    approved: bool | None


def against_queue(
    entries: Iterable[AuditEntry | str],
    rows: Iterable[QueueRow],
    recorded: Callable[[str, str], Settled | None],
) -> list[Problem]:
    """The log and the queue, each checked against the other. Every approval in the queue has
    its proposal in the log, and its decision and outcome once it has them (the newest entries
    removed are found here). Every entry agrees with the approval it is about: the call is in
    the queue (or, decided inline, in its run's record: `recorded`), the event agrees with its
    status, the names and the call are the same, and no stage is logged twice."""
    problems: list[Problem] = []
    logged: dict[tuple[str, str], list[AuditEntry]] = {}
    for entry in entries:
        if isinstance(entry, AuditEntry):
            logged.setdefault((entry.run_id, entry.call_id), []).append(entry)
    for row in rows:
        found = logged.pop((row.run_id, row.call_id), [])
        stages = {STAGE.get(e.event) for e in found}
        ids = {"run_id": row.run_id, "call_id": row.call_id}
        if "proposal" not in stages:
            problems.append(Problem("audit.proposal_missing", ids))
        if row.status != "pending" and "decision" not in stages:
            problems.append(Problem("audit.decision_missing", ids))
        if row.status in ("committed", "failed") and "outcome" not in stages:
            problems.append(Problem("audit.outcome_missing", ids))
        problems += _disagreements(found, row)
    for (run_id, call_id), found in logged.items():
        settled = recorded(run_id, call_id)
        if settled is None:
            unknown = ({"seq": e.seq, "run_id": run_id, "call_id": call_id} for e in found)
            problems += [Problem("audit.unknown_call", params) for params in unknown]
            continue
        status = {True: "approved", False: "rejected", None: "pending"}[settled.approved]
        as_row = QueueRow(run_id, call_id, settled.tool, "", None, settled.requested_by, status, settled.decided_by)
        problems += _disagreements(found, as_row, inline=True)
    return problems


def _disagreements(found: list[AuditEntry], row: QueueRow, *, inline: bool = False) -> list[Problem]:
    problems, seen = [], set()
    for entry in found:
        ids = {"seq": entry.seq, "event": entry.event, "run_id": row.run_id, "call_id": row.call_id}
        stage = STAGE.get(entry.event)
        statuses = AGREES.get(entry.event, set())
        if inline and entry.event in ("executed", "failed"):
            statuses = {"approved"}  # a record decided inline keeps no queue status
        if stage in seen:
            problems.append(Problem("audit.repeated", ids))
        seen.add(stage)
        if row.status not in statuses:
            problems.append(Problem("audit.event_disagrees", ids | {"status": row.status}))
            continue
        names = [("requested_by", entry.requested_by, row.requested_by), ("tool", entry.tool, row.tool)]
        if entry.event != "proposed":
            names.append(("decided_by", entry.decided_by, row.decided_by))
        if not inline:
            names += [
                ("customer", entry.customer, row.customer),
                ("arguments", entry.arguments, cut(row.arguments, MAX_ARGUMENTS)),
            ]
        for field, said, kept in names:
            if said != kept and not (inline and kept is None and field == "tool"):  # a pruned record names no tool
                shown = {"field": field, "said": cut(str(said), 60), "kept": cut(str(kept), 60)}
                problems.append(Problem("audit.names_disagree", ids | shown))
                break
    return problems


class Decided(NamedTuple):
    """What a run's record says of one of its calls once a person settled it."""

    run_id: str
    call_id: str
    approved: bool
    decided_by: str | None
    requested_by: str | None


def against_records(
    decided: Iterable[Decided], rows: Iterable[QueueRow], logged: set[tuple[str, str, str, str | None]]
) -> list[Problem]:
    """Every decision a run's record holds, borne out by the queue or the log: a record can be
    written by any operator, the queue and the log only by the store in the session's name, so
    a record saying someone approved what they never approved (a run copied under a new id and
    re-tagged, say) is found here. A decision made at the prompt before the store kept such
    calls in its queue is borne out by the log's entry (`logged`: run id, call id, event and
    decider of each decision in the log)."""
    queue = {(row.run_id, row.call_id): row for row in rows}
    problems = []
    for said in decided:
        event = "approved" if said.approved else "rejected"
        verb = Phrase("runs.verb_approved" if said.approved else "runs.verb_rejected")
        params = {"run_id": said.run_id, "call_id": said.call_id, "by": str(said.decided_by), "event": verb}
        row = queue.get((said.run_id, said.call_id))
        if row is None:
            if (said.run_id, said.call_id, event, said.decided_by) not in logged:
                problems.append(Problem("audit.record_unbacked", params))
            continue
        settled = row.status != "pending" and (row.status == "rejected") == (not said.approved)
        if not settled or (row.decided_by, row.requested_by) != (said.decided_by, said.requested_by):
            kept = {
                "status": row.status,
                "kept_by": str(row.decided_by),
                "asked": str(row.requested_by),
                "asked_said": str(said.requested_by),
            }
            problems.append(Problem("audit.record_disagrees", params | kept))
    return problems
