"""Run records on disk, the default run store: save, load, list and prune them, the key that
tags each one, the audit log beside them (orderbot.runs.audit.AuditFile), and the approval
queue read from the records that wait.

See orderbot.runs.record for what a record holds and when it is written, and
orderbot.runs.base for what every run store offers."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from orderbot.atomic import atomic_write
from orderbot.errors import RecordError, UsageError
from orderbot.i18n import t
from orderbot.loop.limits import StopReason
from orderbot.runs import statedir
from orderbot.runs.audit import AUDIT_FILE, AuditEntry, AuditFile
from orderbot.runs.base import BaseRunStore, Waiting, operator_name
from orderbot.runs.index import INDEX_FILE, QUESTION_HEAD, RUN_ID, RunIndex, RunSummary, field_text
from orderbot.runs.record import (
    FORMAT,
    KEY_BYTES,
    KEY_FILE,
    READS,
    RUN_ID_LENGTH,
    TAG,
    TAG_PREFIX,
    RecordFile,
    RunRecord,
    decisions_in,
    upgrade,
    utc_iso,
)
from orderbot.text import cut, decode_error, first_error, json_error


class RunStore(BaseRunStore):
    """The records in `<state_dir>/runs`, newest first by run id (ids sort by time). Only
    the newest `keep` are kept; with `prune_after_days`, older ones keep only their summary."""

    def __init__(self, state_dir: Path, *, keep: int = 200, prune_after_days: float | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / "runs"
        self.where = str(self.dir)
        self.keep = keep
        self.prune_after_days = prune_after_days
        self._key: bytes | None = None
        self._operator: str | None = None
        self.index = RunIndex(self.dir, Path(state_dir) / INDEX_FILE, run_id_of=_record_id, summarize=read_summary)
        self.audit = AuditFile(self.state_dir / AUDIT_FILE)

    @property
    def operator(self) -> str:
        if self._operator is None:
            self._operator = operator_name()
        return self._operator

    @property
    def audit_key(self) -> bytes | None:
        return self.audit.key

    @audit_key.setter
    def audit_key(self, key: bytes | None) -> None:
        self.audit.key = key

    def prepare(self) -> None:
        """Make the state directory (private) or refuse it in one sentence: a command that
        records runs calls this before it shows anything (orderbot.runs.statedir)."""
        statedir.make(self.state_dir)

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.json"

    def _names(self) -> list[str]:
        statedir.refuse_unusable(self.state_dir)
        try:
            return os.listdir(self.dir)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RecordError(t("state.cannot_list", path=self.dir, reason=statedir.reason(exc))) from None

    def ids(self, limit: int | None = None) -> list[str]:
        """Run ids with a record, newest first; files not named like a run id are not ours."""
        return _run_ids(self._names())[:limit]

    # -- the integrity key and tag --

    def key(self, *, create: bool) -> bytes | None:
        """The state directory's record key; made once (0600) when `create` and missing."""
        if self._key is None:
            self._key = read_or_create_key(self.state_dir / KEY_FILE, create=create)
        return self._key

    def tag(self, body: bytes) -> bytes:
        """The record's bytes with its integrity tag as the last member."""
        key = self.key(create=True)
        assert key is not None
        return tag_record(key, body)

    def check_tag(self, raw: bytes) -> str | None:
        """Why the tag of these record bytes does not verify, or None when it does."""
        return tag_problem(self.key(create=False), raw)

    # -- reading and writing --

    def save(self, record: RunRecord, audit: Sequence[AuditEntry] = ()) -> Path:
        """Write `audit` to the log, then the record atomically (a reader sees the old file
        or the new one, never half), then its line in the runs index. The log goes first: a
        crash in between leaves an entry for a step the record does not show yet, never a
        step without its entry."""
        path = self.path(record.run_id)
        statedir.make(self.state_dir)  # records hold customers' orders: private
        self.audit.append(audit)
        try:
            atomic_write(path, self.tag(record.to_json().encode()), follow_links=False)
        except OSError as exc:
            raise RecordError(t("state.cannot_write_record", path=path, reason=statedir.reason(exc))) from None
        self.index.saved(record.summary(), path)  # a cache: a failure to update it is the next listing's to mend
        return path

    def resolve(self, run_id: str) -> str:
        """A full run id from an id or a unique prefix of one (at least 6 characters)."""
        run_id = run_id.strip()
        if run_id == "last":  # the run written most recently: the one a person just saw
            ids = self.ids()
            if not ids:
                raise RecordError(t("runs.none_in", where=self.dir))
            # Ids sort by the second they started in; two runs in one second need the clock of
            # the file. A run resumed since was written since: it is the last one too.
            return max(ids[:20], key=self._written_at)
        if RUN_ID.fullmatch(run_id):
            statedir.refuse_unusable(self.state_dir)
            try:
                exists = _exists(self.path(run_id))
            except OSError as exc:  # runs/ cannot be searched
                raise RecordError(t("state.cannot_list", path=self.dir, reason=statedir.reason(exc))) from None
            if not exists:
                raise RecordError(t("runs.no_such_run", run_id=run_id, where=self.dir))
            return run_id
        if len(run_id) < 6 or not re.fullmatch(r"[0-9a-f-]+", run_id):
            raise UsageError(t("runs.not_an_id", value=repr(cut(run_id, 40))))
        found = [i for i in self.ids() if i.startswith(run_id)]
        if not found:
            raise RecordError(t("runs.no_prefix", prefix=cut(run_id, 40), where=self.dir))
        if len(found) > 1:
            raise UsageError(t("runs.ambiguous", prefix=cut(run_id, 40), some=", ".join(found[:3])))
        return found[0]

    def _written_at(self, run_id: str) -> int:
        try:
            return self.path(run_id).stat().st_mtime_ns
        except OSError:  # pruned meanwhile
            return 0

    def load(self, run_id: str, *, allow_altered: bool = False) -> RunRecord:
        """The record of `run_id`, checked: its tag verifies and it is the run its file is
        named after. `allow_altered` (for display only) returns an unverified record with
        `altered` set instead of refusing it."""
        path = self.path(self.resolve(run_id))
        raw = _read(path)
        record = parse_record(path, raw)
        reason = self.check_tag(raw)
        if record.run_id != path.stem or record.state.run_id != path.stem:
            reason = f"the run inside is {cut(record.state.run_id, 40)!r}, not {path.stem}"
        if reason is not None:
            if not allow_altered:
                raise RecordError(t("runs.record_altered", run_id=path.stem, reason=reason))
            record.altered = reason
        return record

    def summaries(self, *, user: str | None = None, status: str | None = None) -> Iterator[RunSummary]:
        """Newest first, from the index (orderbot.runs.index); an unreadable record yields a
        summary with `error` set, which matches no filter."""
        # Most entries fail a filter: the index skips those without parsing them.
        wanted = [field_text(key, value) for key, value in (("user", user), ("status", status)) if value is not None]
        statedir.refuse_unusable(self.state_dir)
        try:
            entries = list(self.index.entries(containing=wanted))
        except OSError as exc:
            raise RecordError(t("state.cannot_list", path=self.dir, reason=statedir.reason(exc))) from None
        for entry in entries:
            try:
                summary = entry.summary()
            except (ValueError, TypeError):
                summary = RunSummary(run_id=entry.run_id, error="its line in the runs index is damaged")
            matches = summary.error is None and user in (None, summary.user) and status in (None, summary.status)
            if matches or not wanted:
                yield summary

    def document(self, run_id: str) -> dict:
        return json.loads(_read(self.path(run_id)))

    def prune(self, keep_id: str | None = None) -> list[str]:
        """Delete the oldest records past `keep`, with their lock and any temporary file a
        killed writer left. One directory listing; only names that are a run id's (a
        `0-my-notes.json` someone put here is not a record, and stays). The audit log is
        never pruned. With `prune_after_days`, older records then keep only their summary."""
        if self.prune_after_days is not None:
            self.prune_older(self.prune_after_days, now=time.time(), keep_id=keep_id)
        names = self._names()
        ids = _run_ids(names)
        if len(ids) <= self.keep:
            return []
        doomed = set(ids[self.keep :]) - {keep_id}
        for name in names:
            if _owner(name) in doomed:
                with contextlib.suppress(OSError):
                    (self.dir / name).unlink()
        return sorted(doomed, reverse=True)

    def prune_older(self, days: float, *, now: float, keep_id: str | None = None) -> int:
        """Records started more than `days` ago keep only their summary (RunRecord.prune);
        runs waiting for approval, records already pruned and records that fail their
        integrity check are left as they are."""
        cutoff = utc_iso(now - days * 86400)
        pruned = 0
        for summary in list(self.summaries()):
            if summary.error or summary.pruned_at or summary.run_id == keep_id:
                continue
            if summary.status == StopReason.AWAITING_APPROVAL or summary.created_at > cutoff:
                continue
            try:
                record = self.load(summary.run_id)
            except RecordError:
                continue
            record.prune(now)
            self.save(record)
            pruned += 1
        return pruned

    def waiting(self, *, limit: int = 1000) -> list[Waiting]:
        """From the records that wait for approval (found through the index)."""
        found: list[Waiting] = []
        for summary in self.summaries(status=str(StopReason.AWAITING_APPROVAL)):
            try:
                record = self.load(summary.run_id)
            except RecordError:
                continue  # altered or unreadable: `runs` shows it, nobody may approve it
            found.extend(waiting_calls(record))
        found.sort(key=lambda w: (w.requested_at, w.run_id))
        return found[:limit]

    def audit_entries(self) -> Iterator[AuditEntry | str]:
        return self.audit.read()

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """A lock held while a run is resumed, so two shells cannot resume it at once;
        filelock's Timeout when another holds it, RecordError when it cannot be taken (a
        read-only state directory): then nothing has been done."""
        from filelock import FileLock, Timeout  # ~20 ms to import: only a resume takes this lock

        statedir.make(self.state_dir)
        statedir.clear_planted(self.dir / f"{run_id}.lock")
        lock = FileLock(str(self.dir / f"{run_id}.lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise
        except OSError as exc:
            raise RecordError(
                t("state.cannot_lock", run_id=run_id, path=self.dir, reason=statedir.reason(exc))
            ) from None
        try:
            yield
        finally:
            lock.release()


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


def _exists(path: Path) -> bool:
    """Whether something is at `path`; OSError when that cannot be known (no permission)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _record_id(name: str) -> str | None:
    """The run a file in runs/ is the record of (`<run id>.json`), or None."""
    return name[:-5] if name.endswith(".json") and RUN_ID.fullmatch(name[:-5]) else None


def read_summary(path: Path, run_id: str) -> RunSummary | None:
    """What a listing shows of one record file, read whole; None when it vanished (pruned
    meanwhile). A record that cannot be read gives a summary with `error` set."""
    try:
        doc = json.loads(statedir.read_own(path))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("not an orderbot run record")
        state = doc["state"]
        return RunSummary(
            run_id=run_id,
            created_at=str(doc["created_at"]),
            user=state.get("user"),
            operator=doc.get("operator"),
            status=state.get("stop_reason") or "incomplete",
            steps=int(state["steps"]),
            tool_calls=int(state["tool_calls"]),
            question=str(state["question"])[:QUESTION_HEAD],
            history=tuple(str(s.get("stop_reason") or "incomplete") for s in doc["segments"]),
            decisions=decisions_in(
                [s.get("approve") for s in doc["segments"]] + list((doc.get("approvals") or {}).values())
            ),
            pruned_at=doc.get("pruned_at"),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # Bytes that are not UTF-8 are not JSON either; Python's words for them are not a listing's.
        not_json = isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError))
        reason = "not valid JSON" if not_json else str(exc) or type(exc).__name__
        return RunSummary(run_id=run_id, error=cut(reason, 120))


def _run_ids(names: list[str]) -> list[str]:
    return sorted((n[:-5] for n in names if n.endswith(".json") and RUN_ID.fullmatch(n[:-5])), reverse=True)


def _owner(name: str) -> str | None:
    """The run id a file in runs/ belongs to: `<id>.json`, `<id>.lock`, `.<id>.json.*.tmp`."""
    hidden = int(name.startswith("."))
    stem, rest = name[hidden : hidden + RUN_ID_LENGTH], name[hidden + RUN_ID_LENGTH :]
    if not RUN_ID.fullmatch(stem):
        return None
    if not hidden and rest in (".json", ".lock"):
        return stem
    if hidden and rest.startswith(".json.") and rest.endswith(".tmp"):
        return stem
    return None


def tag_record(key: bytes, body: bytes) -> bytes:
    """A record's bytes with the integrity tag made with `key` as their last member."""
    return body[:-1] + TAG_PREFIX + _digest(key, body).encode() + b'"}'


def tag_problem(key: bytes | None, raw: bytes, elsewhere: str | None = None) -> str | None:
    """Why the tag of these record bytes does not verify with `key`, or None when it does;
    `elsewhere` is where such a record may have come from (another state directory)."""
    found = TAG.search(raw)
    if found is None:
        return t("runs.no_tag")
    body = raw[: found.start()] + b"}"
    if key is None or not hmac.compare_digest(_digest(key, body).encode(), found.group(1)):
        return t("runs.tag_mismatch", elsewhere=elsewhere or t("runs.elsewhere_state_dir"))
    return None


def _digest(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def read_or_create_key(path: Path, *, create: bool) -> bytes | None:
    """The key in `path`; when missing and `create`, a new random one, written 0600 and
    linked into place so two processes racing to make it end up with the same key."""
    try:
        key = statedir.read_own(path)  # never through a planted link, never waiting on a FIFO
    except FileNotFoundError:
        key = None
    except OSError as exc:
        raise RecordError(t("runs.key_unreadable", path=path, reason=exc.strerror or exc)) from None
    if key is not None:
        if len(key) != KEY_BYTES:
            raise RecordError(t("runs.key_file_damaged", path=path))
        return key
    if not create:
        return None

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(KEY_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                os.link(temp, path)
        finally:
            os.unlink(temp)
    except OSError as exc:
        raise RecordError(t("runs.key_not_created", path=path, reason=exc.strerror or exc)) from None
    return read_or_create_key(path, create=False)


def _read(path: Path, *, own: bool = True) -> bytes:
    """A record's bytes; `own` (a record in the state directory): never through a link, and
    never waiting on a FIFO planted in its place."""
    try:
        return statedir.read_own(path) if own else path.read_bytes()
    except FileNotFoundError:
        raise RecordError(t("runs.no_such_record", path=path)) from None
    except OSError as exc:
        raise RecordError(t("runs.record_unreadable", path=path, reason=exc.strerror or exc)) from None


def read_record(path: Path) -> RunRecord:
    """Read one record file and check its shape (not its tag: RunStore.load does that);
    any problem is a RecordError naming the file."""
    return parse_record(path, _read(path, own=False))


def parse_record(path: Path, raw: bytes) -> RunRecord:
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError as exc:  # JSON is UTF-8 (or -16, -32): these bytes are none of them
        raise RecordError(t("runs.record_not_json", path=path, error=decode_error(exc))) from None
    except ValueError as exc:
        raise RecordError(t("runs.record_not_json", path=path, error=json_error(str(exc)))) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError(t("runs.not_a_record", path=path))
    if doc.get("version") not in READS:
        version = cut(repr(doc.get("version")), 20)
        raise RecordError(t("runs.version_unsupported", path=path, version=version, reads=", ".join(map(str, READS))))
    try:
        checked = RecordFile.model_validate(upgrade(doc))
    except ValidationError as exc:
        where, what = first_error(exc)
        where = cut(where or t("runs.the_record"), 80)
        raise RecordError(t("runs.record_damaged", path=path, where=where, what=what)) from None
    return RunRecord.from_file(checked)


# ---- recording a run ------------------------------------------------------------------
