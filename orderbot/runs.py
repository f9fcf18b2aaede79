"""Run records on disk: save, load, list, prune (the re-checks before a resume are in
orderbot.resume).

Each run has one JSON file, `<state_dir>/runs/<run_id>.json`, replaced atomically
(orderbot.atomic: temporary file, fsync, rename) at three kinds of moment: when a run (or
a resumption) starts, so a process killed at any moment still leaves a record, marked
`incomplete`; before an approved side effect runs, so it is `executing` on disk first;
and when the run stops. A read-only run is thus two writes, not one per transition: a
killed read-only run has nothing on disk that could change what happens next, so the
record of its last transitions is not worth an fsync each. The record holds what is needed to
inspect the run (`orderbot runs show`), to resume it (`orderbot resume`) and to replay it
(`orderbot replay`): the run's state with the conversation, each model turn, each
transition, the tool versions, and any call waiting for approval with its binding.

Records are bounded: long texts and results are shortened, the oldest entries are
dropped past fixed counts, and only the newest `keep` runs are kept (pruned once a run has
finished, from one directory listing, and only files named like run ids). No API key or
token is ever written: the record names the provider, the model and the base URL the
requests went to, stripped of any credentials, query and fragment
(settings.public_base_url), so that a resume sends the conversation back to the same server.

Each record ends with an integrity tag, an HMAC-SHA256 of the rest of the file made with a
key private to the state directory (`record.key`, created once, mode 0600, never printed
nor written into a record). A record whose tag does not verify (edited by another tool,
copied from another machine or state directory) or that is not the run its file is named
after is refused for resume and replay; `runs show` still shows it, marked as altered.
docs/threat-model.md says what this protects against and what it cannot.

The engine knows nothing of this module. A `Recorder` is an engine observer; it also wraps
the model (to keep each turn for replay) and the approver (to note a side effect as
`executing` on disk before it runs, so a crash mid-call can never lead to running it twice).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from orderbot.atomic import atomic_write
from orderbot.engine import CALL_LABELS, Approver, Event, Limits, PendingCall, Phase, RunState, Transition
from orderbot.errors import ModelError, RecordError
from orderbot.items import FunctionCallOutput, Item, ProviderItem
from orderbot.models.base import Model, ModelRequest, Turn
from orderbot.run_index import INDEX_FILE, QUESTION_HEAD, RunIndex, RunSummary, field_text
from orderbot.settings import public_base_url
from orderbot.stores import source_fingerprint, source_identity
from orderbot.text import cut, first_error
from orderbot.tools import Toolbox

FORMAT = "orderbot-run"
VERSION = 1
RUN_ID = re.compile(r"^\d{6}-\d{6}-[0-9a-f]{4}$")
RUN_ID_LENGTH = 18
KEY_FILE = "record.key"  # in the state directory, next to runs/
KEY_BYTES = 32
# The tag is the record's last member, so the bytes it covers are the file without it.
TAG_PREFIX = b',"integrity":"hmac-sha256:'
TAG = re.compile(rb',"integrity":"hmac-sha256:([0-9a-f]{64})"\}\n?\Z')

# Per-entry bounds, in characters, and how many entries of each kind a record keeps (the
# oldest go first). Together they cap a record at roughly 3 MB; a typical run is a few KB.
MAX_TEXT = 4000  # a message, arguments or tool output kept in the conversation
MAX_RESULT = 2000  # one call's result envelope, as JSON
MAX_TRANSITION = 3000  # one transition, as JSON
MAX_TURN = 8000  # one model turn's text and arguments (a longer turn is replayed padded)
MAX_QUESTION = 2000
MAX_ANSWER = 8000
MAX_ITEMS, MAX_CALLS, MAX_TRANSITIONS, MAX_TURNS = 300, 200, 300, 100

# Status of an approved side effect, noted around the call.
EXECUTING, COMMITTED, FAILED = "executing", "committed", "failed"


def utc_iso(wall: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall))


# ---- the record -----------------------------------------------------------------------


class Segment(BaseModel):
    """One engine run over the record: the first `ask`, then each resumption."""

    kind: str  # "ask", "resume", "repl", ...
    started_at: str
    limits: dict
    approve: bool | None = None  # how pending calls were settled when this segment began
    approver: bool = False  # whether a person could be asked inline during this segment
    stop_reason: str | None = None  # how this segment ended
    utc_offset: int | None = None  # the machine's offset from UTC in seconds: replay stamps times with it


class RecordFile(BaseModel):
    """The shape of a record on disk, checked when it is read back."""

    # Built on the first read: a run that only writes its record never needs the validator.
    model_config = ConfigDict(defer_build=True)

    format: Literal["orderbot-run"]
    version: int
    run_id: str
    created_at: str
    updated_at: str
    provider: str
    model: str
    # Where the model's requests went, stripped of credentials, query and fragment; None:
    # the provider's own service (or offline). Absent in records older than this field.
    base_url: str | None = None
    orders: str | None = None
    orders_identity: str | None = None  # orderbot.stores.Source.fingerprint: the same file, not only the same path
    tool_versions: dict[str, str]
    segments: list[Segment]
    side_effects: dict[str, str] = {}
    approvals: dict[str, bool] = {}
    dropped: dict[str, int] = {}
    claims: list[dict] = []  # the claim check's findings on the answer (orderbot.claims)
    state: RunState
    turns: list[dict]
    transitions: list[dict]


@dataclass
class RunRecord:
    """A run's record in memory. Turns and transitions are kept as JSON text, each
    serialised once when it arrives, so rewriting the file after every transition costs
    one dump of the state plus string joins."""

    run_id: str
    created_at: str
    provider: str
    model: str
    orders: str | None
    tool_versions: dict[str, str]
    state: RunState
    base_url: str | None = None
    base_url_known: bool = True  # False for a record written before base URLs were kept
    segments: list[Segment] = field(default_factory=list)
    side_effects: dict[str, str] = field(default_factory=dict)
    approvals: dict[str, bool] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    orders_identity: str | None = None
    claims: list[dict] = field(default_factory=list)
    updated_at: str = ""
    turn_texts: list[str] = field(default_factory=list)
    transition_texts: list[str] = field(default_factory=list)
    # Why the record cannot be trusted (tag missing or wrong, renamed) when it was loaded
    # for display only; None for a record that verified or was made in this process.
    altered: str | None = None
    _items: list[tuple[Item, Item]] = field(default_factory=list, repr=False)  # (source, bounded)
    _calls: list[tuple[Any, Any]] = field(default_factory=list, repr=False)

    @classmethod
    def new(
        cls,
        state: RunState,
        *,
        provider: str,
        model: str,
        toolbox: Toolbox,
        base_url: str | None = None,
        orders: Path | str | None = None,
        now: float | None = None,
    ) -> RunRecord:
        stamp = utc_iso(time.time() if now is None else now)
        return cls(
            run_id=state.run_id,
            created_at=stamp,
            updated_at=stamp,
            provider=provider,
            model=model,
            orders=None if orders is None else source_identity(orders),
            base_url=None if base_url is None else public_base_url(base_url),
            orders_identity=None if orders is None else source_fingerprint(orders),
            tool_versions=dict(toolbox.versions),
            state=state,
        )

    @classmethod
    def from_file(cls, doc: RecordFile) -> RunRecord:
        record = cls(
            run_id=doc.run_id,
            created_at=doc.created_at,
            updated_at=doc.updated_at,
            provider=doc.provider,
            model=doc.model,
            base_url=doc.base_url,
            base_url_known="base_url" in doc.model_fields_set,
            orders=doc.orders,
            orders_identity=doc.orders_identity,
            tool_versions=doc.tool_versions,
            state=doc.state,
            segments=doc.segments,
            side_effects=doc.side_effects,
            approvals=doc.approvals,
            dropped=doc.dropped,
            claims=doc.claims,
        )
        record.turn_texts = [_dumps(t) for t in doc.turns]
        record.transition_texts = [_dumps(t) for t in doc.transitions]
        return record

    # -- what the record shows --

    @property
    def turns(self) -> list[dict]:
        return [json.loads(t) for t in self.turn_texts]

    @property
    def transitions(self) -> list[dict]:
        return [json.loads(t) for t in self.transition_texts]

    @property
    def status(self) -> str:
        """The stop reason, or `incomplete` when the process ended without one (killed)."""
        return str(self.state.stop_reason) if self.state.stop_reason else "incomplete"

    def summary(self) -> RunSummary:
        """What a listing shows of this run: the same as `read_summary` of its file."""
        state = self.state
        return RunSummary(
            run_id=self.run_id,
            created_at=self.created_at,
            user=state.user,
            status=self.status,
            steps=state.steps,
            tool_calls=state.tool_calls,
            question=state.question[:QUESTION_HEAD],
            history=tuple(s.stop_reason or "incomplete" for s in self.segments),
            decisions=_decisions([s.approve for s in self.segments] + list(self.approvals.values())),
        )

    # -- what the recorder adds --

    def begin(
        self,
        kind: str,
        limits: Limits,
        *,
        approve: bool | None = None,
        approver: bool = False,
        now: float | None = None,
    ) -> None:
        wall = time.time() if now is None else now
        self.segments.append(
            Segment(
                kind=kind,
                started_at=utc_iso(wall),
                limits=limits.model_dump(),
                approve=approve,
                approver=approver,
                utc_offset=time.localtime(wall).tm_gmtoff,
            )
        )

    def add_transition(self, transition: Transition) -> None:
        doc = transition.as_dict()
        doc["segment"] = len(self.segments) - 1
        doc["elapsed"] = transition.elapsed  # unrounded, so `runs show` redraws the same table
        text = _dumps(doc)
        if len(text) > MAX_TRANSITION:
            doc["data"] = _bound(doc.get("data"), 300)
            doc["detail"] = cut(doc["detail"], 500)
            text = _dumps(doc)
            if len(text) > MAX_TRANSITION:  # still too big: keep the line, drop the detail
                doc["data"] = {"dropped": True}
                text = _dumps(doc)
        _append_bounded(self.transition_texts, text, MAX_TRANSITIONS, self.dropped, "transitions")

    def add_turn(self, step: int, turn: Turn) -> None:
        items = [i for i in turn.items if not isinstance(i, ProviderItem)]  # replay needs no provider items
        doc: dict[str, Any] = {"step": step, "items": [i.model_dump(mode="json") for i in items]}
        if turn.usage is not None:
            doc["usage"] = {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens}
        if turn.size > MAX_TURN:
            # Only the size matters to the engine past the cap: keep the start, note the size.
            doc["size"] = turn.size
            for item in doc["items"]:
                for key in ("content", "arguments"):
                    if key in item:
                        item[key] = cut(item[key], MAX_TURN // max(1, len(items)))
        _append_bounded(self.turn_texts, _dumps(doc), MAX_TURNS, self.dropped, "turns")

    def add_turn_error(self, step: int, exc: BaseException) -> None:
        doc = {"step": step, "error": type(exc).__name__, "message": cut(str(exc), 500)}
        _append_bounded(self.turn_texts, _dumps(doc), MAX_TURNS, self.dropped, "turns")

    # -- serialisation --

    def to_json(self, now: float | None = None) -> str:
        self.updated_at = utc_iso(time.time() if now is None else now)
        head = {
            "format": FORMAT,
            "version": VERSION,
            "run_id": self.run_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "orders": self.orders,
            "orders_identity": self.orders_identity,
            "tool_versions": self.tool_versions,
            "segments": [s.model_dump() for s in self.segments],
            "side_effects": self.side_effects,
            "approvals": self.approvals,
            "dropped": self.dropped,
            "claims": self.claims,
        }
        state = self.state
        bounded = state.model_copy(
            update={
                "question": cut(state.question, MAX_QUESTION),
                "answer": None if state.answer is None else cut(state.answer, MAX_ANSWER),
                "stop_detail": cut(state.stop_detail, 1000),
                "items": self._bounded_items(state.items),
                "calls": self._bounded_calls(state.calls),
            }
        )
        return (
            _dumps(head)[:-1]
            + ',"state":'
            + bounded.model_dump_json()
            + ',"turns":['
            + ",".join(self.turn_texts)
            + '],"transitions":['
            + ",".join(self.transition_texts)
            + "]}"
        )

    def _bounded_items(self, items: list[Item]) -> list[Item]:
        out = _bounded_prefix(self._items, items, bound_item)
        if len(out) > MAX_ITEMS:
            out = out[-MAX_ITEMS:]
            while out and isinstance(out[0], FunctionCallOutput):  # never start with an orphan result
                out = out[1:]
        return out

    def _bounded_calls(self, calls: list) -> list:
        out = _bounded_prefix(self._calls, calls, bound_call)
        return out[-MAX_CALLS:]


def _bounded_prefix(cache: list[tuple[Any, Any]], source: list, bound: Callable[[Any], Any]) -> list:
    """Bound each entry once: the engine only appends, so entries already seen are reused."""
    same = 0
    while same < len(cache) and same < len(source) and cache[same][0] is source[same]:
        same += 1
    del cache[same:]
    cache.extend((entry, bound(entry)) for entry in source[same:])
    return [bounded for _, bounded in cache]


def bound_item(item: Item) -> Item:
    for key in ("content", "arguments", "output"):
        value = getattr(item, key, None)
        if isinstance(value, str) and len(value) > MAX_TEXT:
            return item.model_copy(update={key: cut(value, MAX_TEXT)})
    if isinstance(item, ProviderItem) and len(_dumps(item.data)) > MAX_TEXT * 4:
        return item.model_copy(update={"data": {"dropped": True}})
    return item


def bound_call(call):
    """A CallRecord with its result cut to MAX_RESULT characters of JSON."""
    if call.result is None:
        return call
    text = _dumps(call.result)
    if len(text) <= MAX_RESULT:
        return call
    result = {"ok": call.result.get("ok"), "truncated": True, "preview": cut(text, MAX_RESULT)}
    if "code" in call.result:
        result["code"] = call.result["code"]
    return replace(call, result=result)


def _bound(value: Any, limit: int, depth: int = 0) -> Any:
    """Shorten every string in a JSON-like value; cut long lists; stop at a small depth."""
    if isinstance(value, str):
        return cut(value, limit)
    if depth > 4:
        return "…"
    if isinstance(value, dict):
        return {k: _bound(v, limit, depth + 1) for k, v in list(value.items())[:30]}
    if isinstance(value, list):
        return [_bound(v, limit, depth + 1) for v in value[:10]]
    return value


def _append_bounded(texts: list[str], text: str, cap: int, dropped: dict[str, int], key: str) -> None:
    texts.append(text)
    if len(texts) > cap:
        del texts[0]
        dropped[key] = dropped.get(key, 0) + 1


def transition_from_dict(doc: dict) -> Transition:
    """A recorded transition back as the engine's value, for the renderers."""
    return Transition(
        doc["step"],
        Phase(doc["from"]),
        Phase(doc["to"]),
        doc["event"],
        doc["detail"],
        doc.get("elapsed", doc.get("elapsed_ms", 0.0) / 1000),
        doc.get("steps_used", 0),
        doc.get("calls_used", 0),
        doc.get("data"),
        kind=Event(doc["kind"]) if "kind" in doc else _older_kind(doc),
    )


def _older_kind(doc: dict) -> Event:
    """The kind of a transition recorded before transitions carried it: from its phases,
    and for a call's outcome from its label (the only place a label is read)."""
    to, label = doc["to"], doc["event"]
    if to == Phase.FINISH:
        return Event.FINISHED
    if to == Phase.AWAITING:
        return Event.AWAITING_APPROVAL
    if doc["from"] == Phase.START:
        return Event.RESUMED if label == "resumed" else Event.STARTED
    if to == Phase.ACT:
        return Event.PROPOSED
    if to == Phase.PLAN:
        return Event.RETURNED
    labels = {label: kind for kind, label in CALL_LABELS.items()}
    return labels.get(label, Event.REFUSED)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---- the store ------------------------------------------------------------------------


def _decisions(said: list[bool | None]) -> tuple[str, ...]:
    """What people decided in a run, at the prompt or with resume --approve/--reject: from
    each segment's `approve` and the inline approvals."""
    return tuple(word for word, value in (("approved", True), ("rejected", False)) if value in said)


class RunStore:
    """The records in `<state_dir>/runs`, newest first by run id (ids sort by time)."""

    def __init__(self, state_dir: Path, *, keep: int = 200) -> None:
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / "runs"
        self.keep = keep
        self._key: bytes | None = None
        self.index = RunIndex(self.dir, Path(state_dir) / INDEX_FILE, run_id_of=_record_id, summarize=read_summary)

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.json"

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.dir)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RecordError(f"{self.dir}: cannot be listed ({exc.strerror or exc})") from None

    def ids(self) -> list[str]:
        """Run ids with a record, newest first; files not named like a run id are not ours."""
        return _run_ids(self._names())

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
        return body[:-1] + TAG_PREFIX + _digest(key, body).encode() + b'"}'

    def check_tag(self, raw: bytes) -> str | None:
        """Why the tag of these record bytes does not verify, or None when it does."""
        found = TAG.search(raw)
        if found is None:
            return "it carries no integrity tag"
        key = self.key(create=False)
        body = raw[: found.start()] + b"}"
        if key is None or not hmac.compare_digest(_digest(key, body).encode(), found.group(1)):
            return "its integrity tag does not match (edited, or copied from another state directory)"
        return None

    # -- reading and writing --

    def save(self, record: RunRecord) -> Path:
        """Write the record atomically (a reader sees the old file or the new one, never
        half), then its line in the runs index."""
        path = self.path(record.run_id)
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # records hold customers' orders
            atomic_write(path, self.tag(record.to_json().encode()))
            self.index.saved(record.summary(), path)
        except OSError as exc:
            raise RecordError(f"cannot write the run record {path}: {exc.strerror or exc}") from None
        return path

    def resolve(self, run_id: str) -> str:
        """A full run id from an id or a unique prefix of one (at least 6 characters)."""
        run_id = run_id.strip()
        if run_id == "last":  # the run written most recently: the one a person just saw
            ids = self.ids()
            if not ids:
                raise RecordError(f"no runs recorded in {self.dir}")
            # Ids sort by the second they started in; two runs in one second need the clock of
            # the file. A run resumed since was written since: it is the last one too.
            return max(ids[:20], key=self._written_at)
        if RUN_ID.fullmatch(run_id):
            if not self.path(run_id).exists():
                raise RecordError(f"no run {run_id} in {self.dir}")
            return run_id
        if len(run_id) < 6 or not re.fullmatch(r"[0-9a-f-]+", run_id):
            raise RecordError(f"{cut(run_id, 40)!r} is not a run id (they look like 261130-050026-1a2b)")
        found = [i for i in self.ids() if i.startswith(run_id)]
        if not found:
            raise RecordError(f"no run starting with {cut(run_id, 40)} in {self.dir}")
        if len(found) > 1:
            raise RecordError(
                f"{cut(run_id, 40)} matches {len(found)} runs ({', '.join(found[:3])}, ...): give more of the id"
            )
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
                raise RecordError(
                    f"the record of run {path.stem} was altered: {reason}; it will not be resumed or replayed"
                )
            record.altered = reason
        return record

    def summaries(self, *, user: str | None = None, status: str | None = None) -> Iterator[RunSummary]:
        """Newest first, from the index (orderbot.run_index); an unreadable record yields a
        summary with `error` set, which matches no filter."""
        # Most entries fail a filter: the index skips those without parsing them.
        wanted = [field_text(key, value) for key, value in (("user", user), ("status", status)) if value is not None]
        for entry in self.index.entries(containing=wanted):
            try:
                summary = entry.summary()
            except (ValueError, TypeError):
                summary = RunSummary(run_id=entry.run_id, error="its line in the runs index is damaged")
            matches = summary.error is None and user in (None, summary.user) and status in (None, summary.status)
            if matches or not wanted:
                yield summary

    def prune(self, keep_id: str | None = None) -> list[str]:
        """Delete the oldest records past `keep`, with their lock and any temporary file a
        killed writer left. One directory listing; only names that are a run id's (a
        `0-my-notes.json` someone put here is not a record, and stays)."""
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

    def lock(self, run_id: str):
        """A lock held while a run is resumed, so two shells cannot resume it at once."""
        from filelock import FileLock

        self.dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.dir / f"{run_id}.lock"), timeout=0)


def _record_id(name: str) -> str | None:
    """The run a file in runs/ is the record of (`<run id>.json`), or None."""
    return name[:-5] if name.endswith(".json") and RUN_ID.fullmatch(name[:-5]) else None


def read_summary(path: Path, run_id: str) -> RunSummary | None:
    """What a listing shows of one record file, read whole; None when it vanished (pruned
    meanwhile). A record that cannot be read gives a summary with `error` set."""
    try:
        doc = json.loads(path.read_bytes())
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("not an orderbot run record")
        state = doc["state"]
        return RunSummary(
            run_id=run_id,
            created_at=str(doc["created_at"]),
            user=state.get("user"),
            status=state.get("stop_reason") or "incomplete",
            steps=int(state["steps"]),
            tool_calls=int(state["tool_calls"]),
            question=str(state["question"])[:QUESTION_HEAD],
            history=tuple(str(s.get("stop_reason") or "incomplete") for s in doc["segments"]),
            decisions=_decisions(
                [s.get("approve") for s in doc["segments"]] + list((doc.get("approvals") or {}).values())
            ),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = "not valid JSON" if isinstance(exc, json.JSONDecodeError) else str(exc) or type(exc).__name__
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


def _digest(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def read_or_create_key(path: Path, *, create: bool) -> bytes | None:
    """The key in `path`; when missing and `create`, a new random one, written 0600 and
    linked into place so two processes racing to make it end up with the same key."""
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = None
    except OSError as exc:
        raise RecordError(f"{path}: the record key cannot be read ({exc.strerror or exc})") from None
    if key is not None:
        if len(key) != KEY_BYTES:
            raise RecordError(f"{path}: the record key is damaged; remove it (records made with it will be refused)")
        return key
    if not create:
        return None
    import tempfile

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
        raise RecordError(f"{path}: the record key cannot be created ({exc.strerror or exc})") from None
    return read_or_create_key(path, create=False)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such run record") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_record(path: Path) -> RunRecord:
    """Read one record file and check its shape (not its tag: RunStore.load does that);
    any problem is a RecordError naming the file."""
    return parse_record(path, _read(path))


def parse_record(path: Path, raw: bytes) -> RunRecord:
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise RecordError(f"{path}: the run record is corrupt (not valid JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError(f"{path}: not an orderbot run record")
    if doc.get("version") != VERSION:
        raise RecordError(
            f"{path}: run record version {cut(repr(doc.get('version')), 20)} is not supported "
            f"(this orderbot reads {VERSION})"
        )
    try:
        checked = RecordFile.model_validate(doc)
    except ValidationError as exc:
        where, what = first_error(exc)
        raise RecordError(f"{path}: the run record is damaged ({cut(where or 'record', 80)}: {what})") from None
    return RunRecord.from_file(checked)


# ---- recording a run ------------------------------------------------------------------


class Recorder:
    """Keeps a run's record: an engine observer, plus wrappers for the model (to keep each
    turn) and the approver (to note side effects around the call). It writes the record
    when the run starts, when a side effect is about to run and when it has run, and (in
    `close`) when the run stops; other transitions are kept in memory until then.
    orderbot.runner wires all three into the engine; nothing else should."""

    def __init__(self, store: RunStore, record: RunRecord, *, wall_clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.record = record
        self.wall_clock = wall_clock
        self._written = False  # whether this recorder has saved the record yet

    @classmethod
    def start(
        cls,
        store: RunStore,
        state: RunState,
        *,
        provider: str,
        model: str,
        toolbox: Toolbox,
        limits: Limits,
        base_url: str | None = None,
        orders: Path | str | None = None,
        kind: str = "ask",
        interactive: bool = False,
        wall_clock: Callable[[], float] = time.time,
    ) -> Recorder:
        record = RunRecord.new(
            state, provider=provider, model=model, base_url=base_url, toolbox=toolbox, orders=orders, now=wall_clock()
        )
        record.begin(kind, limits, approver=interactive, now=wall_clock())
        return cls(store, record, wall_clock=wall_clock)

    def __call__(self, transition: Transition, state: RunState) -> None:
        record = self.record
        record.state = state
        record.add_transition(transition)
        settled = EXECUTING in record.side_effects.values() and self._settle(state)
        if settled or not self._written:  # the run's start, and a side effect's outcome, go to disk now
            self.save()

    def save(self) -> None:
        record = self.record
        if record.segments:
            reason = record.state.stop_reason
            record.segments[-1].stop_reason = None if reason is None else str(reason)
        self.store.save(record)
        self._written = True

    def close(self) -> None:
        """The final write (the stop reason is set after the last transition of a pause),
        then pruning: once the run has finished, never on its clock."""
        self.save()
        self.store.prune(keep_id=self.record.run_id)

    def wrap(self, model: Model) -> Model:
        return _RecordingModel(model, self)

    def guard(self, approver: Approver | None) -> Approver | None:
        """Note each inline decision; write `executing` to disk before a yes is carried out."""
        if approver is None:
            return None

        def decide(pending: PendingCall) -> bool:
            approved = bool(approver(pending))
            self.record.approvals[pending.call_id] = approved
            if approved:
                self.record.side_effects[pending.call_id] = EXECUTING
                self.save()
            return approved

        return decide

    def mark_executing(self, call_ids: list[str]) -> None:
        for call_id in call_ids:
            self.record.side_effects[call_id] = EXECUTING
        self.save()

    def _settle(self, state: RunState) -> bool:
        """Note how each `executing` side effect ended; True when one did."""
        outcome = {c.call_id: c for c in state.calls}
        settled = False
        for call_id, status in list(self.record.side_effects.items()):
            if status == EXECUTING and call_id in outcome:
                done = outcome[call_id]
                ok = done.executed and bool((done.result or {}).get("ok"))
                self.record.side_effects[call_id] = COMMITTED if ok else FAILED
                settled = True
        return settled


class _RecordingModel:
    """Passes requests through and keeps what came back, for replay."""

    def __init__(self, model: Model, recorder: Recorder) -> None:
        self.inner = model
        self.provider = model.provider
        self.name = model.name
        self.recorder = recorder

    def respond(self, request: ModelRequest) -> Turn:
        step = self.recorder.record.state.steps + 1
        try:
            turn = self.inner.respond(request)
        except ModelError as exc:
            self.recorder.record.add_turn_error(step, exc)
            raise
        self.recorder.record.add_turn(step, turn)
        return turn
