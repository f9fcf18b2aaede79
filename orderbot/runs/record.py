"""Run records: what a run store saves, loads, lists and prunes (the re-checks before a
resume are in orderbot.runs.resume).

Each run is one JSON document, kept by a run store (orderbot.runs.sql: the state
directory's `runs.db` by default, or a team's SQLite or PostgreSQL database), saved as a
whole at three kinds of moment: when a run (or a resumption) starts, so a process killed
at any moment still leaves a record, marked `incomplete`; before an approved side effect
runs, so it is `executing` in the store first; and when the run stops. A read-only run is
thus two saves, not one per transition: a killed read-only run has nothing kept that could
change what happens next, so the record of its last transitions is not worth a commit
each. The record holds what is needed to inspect the run (`orderbot runs show`), to resume
it (`orderbot resume`) and to replay it (`orderbot replay`): the run's state with the
conversation, each model turn, each transition, the tool versions, and any call waiting
for approval with its binding.

Records are bounded: long texts and results are shortened, the oldest entries are dropped
past fixed counts, and only the newest `keep` runs are kept (pruned by the store once a
run has finished, never one waiting for approval). No API key or token is ever written:
the record names the provider, the model and the base URL the requests went to, stripped
of any credentials, query and fragment (settings.public_base_url), so that a resume sends
the conversation back to the same server.

Each record ends with an integrity tag, an HMAC-SHA256 of the rest of the record made with a
key private to the state directory (`record.key`, created once, mode 0600, never printed
nor written into a record). A record whose tag does not verify (edited by another tool,
copied from another machine or state directory) or that is not the run its file is named
after is refused for resume and replay; `runs show` still shows it, marked as altered.
docs/threat-model.md says what this protects against and what it cannot.

The engine knows nothing of this module. A `Recorder` is an engine observer; it also wraps
the model (to keep each turn for replay) and the approver (to note a side effect as
`executing` in the store before it runs, so a crash mid-call can never lead to running it twice).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from orderbot.errors import Phrase
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits
from orderbot.loop.items import FunctionCallOutput, Item, ProviderItem
from orderbot.loop.model import Turn
from orderbot.loop.state import Event, Phase, RunState
from orderbot.loop.transitions import Transition
from orderbot.runs.summary import QUESTION_HEAD, RunSummary
from orderbot.settings import public_base_url
from orderbot.shops.source import source_fingerprint, source_identity
from orderbot.text import cut

FORMAT = "orderbot-run"
# 2: every transition names its kind, and its data is its kind's payload
# (orderbot.loop.transitions), a finish's stop reason and detail included.
# 3: codes and values only: no English words beside a transition, and a stop's detail is
# outside text alone (an answer's first line, a hand-off's summary), orderbot's own reason
# being its message (a Phrase as JSON). Older records are read through `upgrade`.
VERSION = 3
READS = (1, 2, 3)
RUN_ID_LENGTH = 18
KEY_FILE = "record.key"  # in the state directory, next to runs/
KEY_BYTES = 32
# The tag is the record's last member, so the bytes it covers are the file without it.
TAG_PREFIX = b',"integrity":"hmac-sha256:'
TAG = rb',"integrity":"hmac-sha256:([0-9a-f]{64})"\}\n?\Z'  # compiled by re when a record is first read back

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


def utc_iso_us(wall: float) -> str:
    """`utc_iso` to the microsecond: when a run started, which orders the listings (two runs
    started within one second are told apart by it, never by their ids' random part)."""
    whole = int(wall)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((wall - whole) * 1e6):06d}Z"


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
    operator: str | None = None  # who ran this segment (orderbot.runs.base.operator_name); absent in older records
    # The SHA-256 of the orders file as this segment began (None: a database, or an older
    # record): replay tells from it whether the data it is given is the data the run saw.
    orders_digest: str | None = None
    # The operator another program ran this segment for (an MCP client whose token names
    # one): with four eyes they may not approve what it asked for, as `operator` may not.
    # Written only when set.
    on_behalf_of: str | None = None


class Decision(BaseModel):
    """Who asked for one side effect and who settled it: the approval's people, kept in the
    record so that every store (and the audit log) names them the same way."""

    # Built when a side effect is first asked for or read back: a lookup's record has none.
    model_config = ConfigDict(defer_build=True)

    requested_by: str | None = None  # the operator whose run proposed the call
    requested_at: str | None = None
    approved: bool | None = None  # None: still waiting
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None  # a rejection's reason, as the operator gave it
    # The call's id in the store's queue and log when the model reused the id of an earlier
    # side effect of the run (some servers number calls afresh each turn): `call_0@2`, ...
    queued_as: str | None = None


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
    orders_identity: str | None = None  # orderbot.shops.source.Source.fingerprint: the same file, not only the path
    shop: str | None = None  # the shop the run worked on (orderbot.shops.shop.Shop.name); absent in older records
    operator: str | None = None  # who started the run; absent in records older than this field
    tool_versions: dict[str, str]
    segments: list[Segment]
    side_effects: dict[str, str] = {}
    approvals: dict[str, bool] = {}
    dropped: dict[str, int] = {}
    claims: list[dict] = []  # the claim check's findings on the answer (orderbot.answers.claims)
    decisions: dict[str, Decision] = {}  # by call id: who asked for each side effect, who settled it
    pruned_at: str | None = None  # when the conversation was dropped (orderbot runs prune): summary only
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
    shop: str | None = None
    claims: list[dict] = field(default_factory=list)
    operator: str | None = None
    decisions: dict[str, Decision] = field(default_factory=dict)
    pruned_at: str | None = None
    updated_at: str = ""
    turn_texts: list[str] = field(default_factory=list)
    transition_texts: list[str] = field(default_factory=list)
    # Why the record cannot be trusted (tag missing or wrong, renamed) when it was loaded
    # for display only; None for a record that verified or was made in this process.
    altered: Phrase | None = None
    # The revision a SQL run store read or last wrote of this record (orderbot.runs.sql): a
    # save lands only on it; None for a record not yet in the store. Never written.
    revision: int | None = None
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
        shop: str | None = None,
        operator: str | None = None,
        now: float | None = None,
    ) -> RunRecord:
        wall = time.time() if now is None else now
        return cls(
            operator=operator,
            run_id=state.run_id,
            created_at=utc_iso_us(wall),
            updated_at=utc_iso(wall),
            provider=provider,
            model=model,
            orders=None if orders is None else source_identity(orders),
            base_url=None if base_url is None else public_base_url(base_url),
            orders_identity=None if orders is None else source_fingerprint(orders),
            shop=shop,
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
            shop=doc.shop,
            tool_versions=doc.tool_versions,
            state=doc.state,
            segments=doc.segments,
            side_effects=doc.side_effects,
            approvals=doc.approvals,
            dropped=doc.dropped,
            claims=doc.claims,
            operator=doc.operator,
            decisions=doc.decisions,
            pruned_at=doc.pruned_at,
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

    def transition_values(self) -> list[tuple[int, Transition]]:
        """Each recorded transition as the engine's value, with the index of its segment (whose
        limits it was made under). One a damaged record no longer holds whole is left out."""
        limits = [_limits(s.limits) for s in self.segments] or [Limits()]
        out = []
        for doc in self.transitions:
            segment = doc.get("segment", 0)
            try:
                out.append((segment, Transition.from_json(doc, limits[min(segment, len(limits) - 1)])))
            except (KeyError, TypeError, ValueError):
                continue
        return out

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
            operator=self.operator,
            status=self.status,
            steps=state.steps,
            tool_calls=state.tool_calls,
            question=state.question[:QUESTION_HEAD],
            history=tuple(s.stop_reason or "incomplete" for s in self.segments),
            decisions=decisions_in([s.approve for s in self.segments] + list(self.approvals.values())),
            pruned_at=self.pruned_at,
        )

    # -- what the recorder adds --

    def begin(
        self,
        kind: str,
        limits: Limits,
        *,
        approve: bool | None = None,
        approver: bool = False,
        operator: str | None = None,
        now: float | None = None,
        orders_digest: str | None = None,
        on_behalf_of: str | None = None,
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
                operator=operator,
                orders_digest=orders_digest,
                on_behalf_of=on_behalf_of,
            )
        )

    def add_transition(self, transition: Transition) -> None:
        doc = transition.as_dict()
        doc["segment"] = len(self.segments) - 1
        doc["elapsed"] = transition.elapsed  # unrounded, so `runs show` redraws the same table
        text = _dumps(doc)
        if len(text) > MAX_TRANSITION:
            doc["data"] = _bound(doc.get("data"), 300)
            text = _dumps(doc)
            if len(text) > MAX_TRANSITION:  # still too big: keep the line, drop the data
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
        """A request that failed, kept so that replay fails it again: its error's class, its
        phrase and, for a time limit, the failure that was being retried (both as JSON)."""
        doc: dict[str, Any] = {"step": step, "error": type(exc).__name__}
        phrase = getattr(exc, "phrase", None)
        doc["message"] = _bound(phrase.as_json(), 500) if isinstance(phrase, Phrase) else cut(str(exc), 500)
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Phrase):
            doc["cause"] = _bound(cause.as_json(), 500)
        _append_bounded(self.turn_texts, _dumps(doc), MAX_TURNS, self.dropped, "turns")

    def prune(self, now: float) -> None:
        """Drop the conversation (messages, calls and their results, the answer, model turns,
        transitions), keeping what a listing shows, who decided what, and the side effects'
        outcomes: a pruned record is a summary, and is never resumed or replayed."""
        state = self.state
        self.state = state.model_copy(
            update={
                "question": state.question[:QUESTION_HEAD],
                "items": [],
                "calls": [],
                "answer": None,
                "partial_answer": None,
                "pending": [],
            }
        )
        self.turn_texts, self.transition_texts, self.claims = [], [], []
        self._items, self._calls = [], []
        self.pruned_at = utc_iso(now)

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
            "shop": self.shop,
            "operator": self.operator,
            "tool_versions": self.tool_versions,
            "segments": [s.model_dump(exclude=None if s.on_behalf_of else {"on_behalf_of"}) for s in self.segments],
            "side_effects": self.side_effects,
            "approvals": self.approvals,
            "dropped": self.dropped,
            "claims": self.claims,
            "decisions": {call_id: d.model_dump(exclude_none=True) for call_id, d in self.decisions.items()},
            "pruned_at": self.pruned_at,
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


def _limits(values: dict) -> Limits:
    try:
        return Limits(**values)
    except (TypeError, ValueError):  # a damaged segment: its transitions still show
        return Limits()


def upgrade(doc: dict) -> dict:
    """A record of an older version as this version writes it; the rest of this module
    reads only the current version."""
    if doc.get("version") == 1 and isinstance(doc.get("transitions"), list):
        doc = {**doc, "version": 2, "transitions": [_transition_v2(t) for t in doc["transitions"]]}
    if doc.get("version") == 2:
        doc = {**doc, "version": 3}
        if isinstance(doc.get("transitions"), list):
            doc["transitions"] = [_transition_v3(t) for t in doc["transitions"]]
        state = doc.get("state")
        if isinstance(state, dict) and state.get("stop_message"):
            doc["state"] = {**state, "stop_detail": ""}  # the English of the message, as version 2 kept it
    return doc


def _transition_v3(doc: Any) -> Any:
    """A version 2 transition without the English words beside it (kept only where its data
    was dropped: they are then all there is), and a finish whose reason orderbot said
    without that English as its detail."""
    if not isinstance(doc, dict):
        return doc
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("dropped") or "kind" not in doc:
        return doc
    doc = {k: v for k, v in doc.items() if k not in ("event", "detail")}
    if doc.get("kind") == Event.FINISHED and isinstance(data, dict) and data.get("message"):
        doc["data"] = {**data, "detail": ""}
    return doc


def _transition_v2(doc: Any) -> Any:
    """A version 1 transition: its kind (absent in the oldest records) worked out, and a
    finish's reason and detail, which version 1 kept only as the words of the row, put
    into its data."""
    if not isinstance(doc, dict) or not isinstance(doc.get("event"), str) or not isinstance(doc.get("detail"), str):
        return doc
    doc = dict(doc)
    if "kind" not in doc:
        kind = _older_kind(doc)
        if kind is None:
            return doc
        doc["kind"] = str(kind)
    data = doc.get("data")
    if doc["kind"] == Event.FINISHED and (data is None or (isinstance(data, dict) and not data.get("dropped"))):
        doc["data"] = {**(data or {}), "reason": doc["event"], "detail": doc["detail"]}
    elif doc["kind"] == Event.RETURNED and data is None:  # the oldest records kept only the words
        counted = re.fullmatch(V1_RETURNED, doc["detail"])
        if counted:
            doc["data"] = {"results": int(counted["results"]), "ok": int(counted["ok"])}
    return doc


def _older_kind(doc: dict) -> Event | None:
    """The kind of a transition recorded before transitions carried it: from its phases,
    and for a call's outcome from its label (version 1's English, read only here)."""
    to, source, label = doc.get("to"), doc.get("from"), doc["event"]
    if to == Phase.FINISH:
        return Event.FINISHED
    if to == Phase.AWAITING:
        return Event.AWAITING_APPROVAL
    if source == Phase.START:
        return Event.RESUMED if label == "resumed" else Event.STARTED
    if to == Phase.ACT:
        return Event.PROPOSED
    if to == Phase.PLAN:
        return Event.RETURNED
    if to != Phase.OBSERVE:
        return None
    return V1_CALL_LABELS.get(label, Event.REFUSED)


# How version 1 said a "returned" transition, for records that kept no data for it.
V1_RETURNED = r"(?P<results>\d+) results? to the model: (?P<ok>\d+) ok, \d+ failed"  # text: only old records have it
# The labels of call outcomes in version 1 records (a refusal's label was its code).
V1_CALL_LABELS = {
    "executed": Event.EXECUTED,
    "approved and executed": Event.APPROVED,
    "rejected by the person": Event.REJECTED,
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---- the store ------------------------------------------------------------------------


def decisions_in(said: list[bool | None]) -> tuple[str, ...]:
    """What people decided in a run, at the prompt or with resume --approve/--reject: from
    each segment's `approve` and the inline approvals."""
    return tuple(word for word, value in (("approved", True), ("rejected", False)) if value in said)
