"""The audit log: one entry for every side effect proposed, approved, rejected, executed or
failed, each carrying the hash of the entry before it, so that `orderbot audit --verify`
finds an entry that was changed or removed.

An entry's hash is SHA-256 over the previous entry's hash and the entry's own fields (its
sequence number included), as one line of canonical JSON. The first entry follows
GENESIS. Changing an entry breaks its own hash; recomputing that hash breaks the next
entry's link; removing one leaves a gap in the numbers and a broken link. What a chain
alone cannot show is the newest entries removed together: `--verify` prints the head (the
last hash), which a person can note elsewhere and compare, and a SQL store also checks that
every settled approval still has its decision in the log (orderbot.runs.sql).

Stores append with `append` (the file store, below) or the same hashing in SQL; both read
back as `AuditEntry` values, which `verify` and `matches` check and filter. No store ever
rewrites or deletes an entry: pruning runs leaves the log alone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from orderbot.errors import RecordError
from orderbot.i18n import t
from orderbot.runs import statedir
from orderbot.text import cut

GENESIS = "0" * 64
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
AUDIT_FILE = "audit.log"  # the file store's log, in the state directory next to runs/


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log. `seq`, `prev` and `hash` are set when it is appended."""

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
        return replace(
            entry,
            arguments=cut(entry.arguments, MAX_ARGUMENTS),
            result=None if entry.result is None else cut(entry.result, MAX_RESULT),
            reason=None if entry.reason is None else cut(entry.reason, MAX_REASON),
        )

    def chained(self, seq: int, prev: str) -> AuditEntry:
        """This entry as number `seq`, following the entry whose hash is `prev`."""
        linked = replace(self, seq=seq, prev=prev, hash="")
        return replace(linked, hash=entry_hash(linked))

    def values(self) -> tuple:
        """The hashed fields, in FIELDS order (a SQL row without prev and hash)."""
        return tuple(getattr(self, name) for name in FIELDS)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def operators(self) -> tuple[str, ...]:
        return tuple(o for o in (self.requested_by, self.decided_by) if o)


def entry_hash(entry: AuditEntry) -> str:
    line = json.dumps(entry.values(), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{entry.prev}\n{line}".encode()).hexdigest()


def from_row(row: Sequence) -> AuditEntry:
    """An entry from a SQL row: the FIELDS, then prev and hash."""
    values = dict(zip((*FIELDS, "prev", "hash"), row, strict=True))
    return AuditEntry(**values)


@dataclass(frozen=True)
class Problem:
    """One thing `verify` found wrong: a catalogue id (`audit.*`) and its values."""

    id: str
    params: dict

    def text(self, lang: str | None = None) -> str:
        return t(self.id, lang=lang, **self.params)


@dataclass(frozen=True)
class AuditCheck:
    """What `verify` found: how many entries, the last hash, and every problem (by entry)."""

    entries: int
    head: str
    problems: tuple[Problem, ...]
    more: int = 0  # problems found past the ones kept

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(entries: Iterable[AuditEntry | str], *, limit: int = 20) -> AuditCheck:
    """Walk the chain from the first entry: numbers 1, 2, ... with no gap, each linked to the
    one before, each hash what its fields give. A `str` in `entries` is a line that could not
    be read as an entry at all. At most `limit` problems are kept (the count is exact)."""
    problems: list[Problem] = []
    count, expected, prev = 0, 1, GENESIS
    more = 0

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
        if entry_hash(entry) != entry.hash:
            problem("audit.changed", seq=entry.seq)
        expected, prev = entry.seq + 1, entry.hash
    return AuditCheck(count, prev if count else GENESIS, tuple(problems), more)


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


# ---- the file store's log ------------------------------------------------------------


class AuditFile:
    """`<state_dir>/audit.log`: one JSON line per entry, only ever appended to (O_APPEND,
    flushed to disk), under a lock so that two orderbots never number an entry twice."""

    TAIL = 1 << 16  # bytes read from the end to find the last entry; entries are far smaller

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entries: Sequence[AuditEntry]) -> list[AuditEntry]:
        if not entries:
            return []
        from filelock import FileLock  # ~20 ms to import: only a side effect's run appends

        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if statedir.is_planted(self.path):  # a link or FIFO in the log's place: not followed, not waited on
                raise OSError(errno.EINVAL, t("state.not_a_regular_file"))
            statedir.clear_planted(Path(str(self.path) + ".lock"))
            with FileLock(str(self.path) + ".lock", timeout=10):
                seq, prev = self._last()
                chained = []
                for entry in entries:
                    seq += 1
                    entry = entry.chained(seq, prev)
                    prev = entry.hash
                    chained.append(entry)
                data = "".join(_line(e) + "\n" for e in chained).encode()
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
                try:
                    os.write(fd, data)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise RecordError(t("audit.cannot_append", path=self.path, why=exc.strerror or exc)) from None
        return chained

    def _last(self) -> tuple[int, str]:
        """The number and hash of the last entry; (0, GENESIS) for an empty log. A last line
        that is not an entry is not repaired here: the chain goes on from the entry
        before it, and --verify reports it."""
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - self.TAIL))
                tail = handle.read()
        except FileNotFoundError:
            return 0, GENESIS
        lines = tail.splitlines()
        if size > self.TAIL:
            lines = lines[1:]  # the first may be cut
        for raw in reversed(lines):
            entry = _parse(raw)
            if isinstance(entry, AuditEntry):
                return entry.seq, entry.hash
        if size > self.TAIL:  # no whole entry in the tail: read it all
            last = [e for e in self.read() if isinstance(e, AuditEntry)]
            if last:
                return last[-1].seq, last[-1].hash
        return 0, GENESIS

    def read(self) -> Iterator[AuditEntry | str]:
        """Every line, oldest first: an entry, or why the line is not one."""
        if statedir.is_planted(self.path):  # never waiting on a FIFO, never reading through a link
            yield "unreadable"
            return
        with contextlib.suppress(FileNotFoundError), open(self.path, "rb") as handle:
            for raw in handle:
                if raw.strip():
                    yield _parse(raw)


def _line(entry: AuditEntry) -> str:
    return json.dumps(entry.as_dict(), ensure_ascii=False, separators=(",", ":"))


def _parse(raw: bytes) -> AuditEntry | str:
    try:
        doc = json.loads(raw)
        return AuditEntry(**{name: doc[name] for name in (*FIELDS, "prev", "hash")})
    except (ValueError, KeyError, TypeError):
        return "unreadable"
