"""A transition is a value that says itself.

Each kind of transition (orderbot.loop.state.Event) has one payload type here, a frozen
named tuple of typed values: what was asked, which call, its arguments as the model sent
them, dispatch's decision, the result the model saw, the stop reason. The engine makes
the value and nothing else; orderbot.ui.describe says it for a person. `as_json()` is its
JSON shape, the same for the record and `--json`, and `from_json()` reads it back, so
`runs show`, `resume` and `replay` work on the values, never on words.

    kind                        payload    what it holds
    started, resumed            Started    the question, the limits of this run or resumption
    proposed                    Proposed   the model request (Request): sizes, time, usage, calls, text
    executed, approved,         Called     the call, dispatch's decision, the envelope, the time it took
      rejected, refused
    awaiting_approval           Awaiting   the calls waiting for a person (PendingCall)
    signed_in                   SignIn   the customer and the lookup that named them
    returned                    Returned   how many results went back, how many were ok
    finished                    Finished   the stop reason, its detail (and catalogue id), the last request

`Recorded` stands in for a payload an older record no longer holds (dropped for its size):
it keeps the English words that record wrote beside it and shows them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic_core import from_json, to_json

from orderbot.errors import Phrase
from orderbot.loop.budget import Limits
from orderbot.loop.items import FunctionCall
from orderbot.loop.limits import StopReason
from orderbot.loop.state import Event, PendingCall, Phase, RunState, describe_call

MAX_ARGUMENTS = 2000  # of a call's arguments: longer ones are shown cut, never parsed whole
SHOWN_ARGUMENTS = 500  # what is kept of arguments that are too long or not JSON
MAX_TEXT = 2000  # of a turn's text kept with its request


class Call(NamedTuple):
    """One tool call as the model sent it: the arguments are its raw JSON text, parsed only
    when the call is shown."""

    call_id: str
    name: str
    arguments: str

    @classmethod
    def of(cls, call: FunctionCall) -> Call:
        return cls(call.call_id, call.name, call.arguments)

    def parsed(self) -> Any:
        """The arguments as JSON values; the start of the raw text when they are too long
        (a model that sends megabytes must not have them echoed, nor parsed, whole) or not JSON."""
        raw = self.arguments
        if len(raw) > MAX_ARGUMENTS:
            return raw[:SHOWN_ARGUMENTS] + "…"
        try:
            return from_json(raw)
        except ValueError:
            return raw[:SHOWN_ARGUMENTS]

    def line(self) -> str:
        """`name(key=value, ...)`, as tables and stop messages show a call."""
        raw = self.arguments
        if len(raw) > MAX_ARGUMENTS:
            return describe_call(self.name, raw)
        parsed = self.parsed()
        return describe_call(self.name, parsed if isinstance(parsed, dict) else raw)

    def as_json(self) -> dict:
        return {"call_id": self.call_id, "name": self.name[:100], "arguments": self.parsed()}

    @classmethod
    def from_json(cls, doc: dict) -> Call:
        arguments = doc["arguments"]
        text = arguments if isinstance(arguments, str) else to_json(arguments).decode()
        return cls(str(doc["call_id"]), str(doc["name"]), text)


class Request(NamedTuple):
    """One model request: what was sent (items, characters, tool names), how long it took,
    the usage the provider reported, and what came back (the calls, the text)."""

    items: int
    chars: int
    tools: tuple[str, ...]
    ms: float
    usage: tuple[int, int] | None  # (input tokens, output tokens); None: not reported
    calls: tuple[Call, ...]
    text: str | None
    received_bytes: int | None = None  # a streamed response: the bytes read before it ended, or was cut

    def as_json(self) -> dict:
        out = {
            "sent": {"items": self.items, "chars": self.chars, "tools": list(self.tools)},
            "request_ms": self.ms,
            "usage": None if self.usage is None else {"input_tokens": self.usage[0], "output_tokens": self.usage[1]},
            "proposed": [c.as_json() for c in self.calls],
            "text": self.text,
        }
        if self.received_bytes is not None:
            out["received_bytes"] = self.received_bytes
        return out

    @classmethod
    def from_json(cls, doc: dict) -> Request:
        sent, usage = doc["sent"], doc.get("usage")
        return cls(
            int(sent["items"]),
            int(sent["chars"]),
            tuple(map(str, sent.get("tools", ()))),
            float(doc["request_ms"]),
            None if usage is None else (int(usage["input_tokens"]), int(usage["output_tokens"])),
            tuple(Call.from_json(c) for c in doc.get("proposed", ())),
            doc.get("text"),
            doc.get("received_bytes"),
        )


class Started(NamedTuple):
    question: str
    limits: Limits

    def as_json(self) -> dict:
        return {"limits": self.limits.model_dump(), "question": self.question[:500]}

    @classmethod
    def from_json(cls, doc: dict) -> Started:
        return cls(str(doc["question"]), Limits(**doc["limits"]))


class Proposed(NamedTuple):
    request: Request

    def as_json(self) -> dict:
        return self.request.as_json()

    @classmethod
    def from_json(cls, doc: dict) -> Proposed:
        return cls(Request.from_json(doc))


class Called(NamedTuple):
    """What became of one call: run (executed, approved), rejected by a person, or refused
    by dispatch (the decision is then the refusal's code)."""

    call: Call
    decision: str
    result: dict  # the envelope the model saw, already cut to its cap
    ms: float | None = None  # how long the tool took; None when it did not run

    def as_json(self) -> dict:
        return {"call": self.call.as_json(), "decision": self.decision, "result": self.result, "ms": self.ms}

    @classmethod
    def from_json(cls, doc: dict) -> Called:
        result = doc["result"]
        if not isinstance(result, dict):
            raise ValueError("a call's result is an object")
        return cls(Call.from_json(doc["call"]), str(doc["decision"]), result, doc.get("ms"))


class Awaiting(NamedTuple):
    pending: tuple[PendingCall, ...]

    def as_json(self) -> dict:
        return {"pending": [p.model_dump() for p in self.pending]}

    @classmethod
    def from_json(cls, doc: dict) -> Awaiting:
        return cls(tuple(PendingCall.model_validate(p) for p in doc["pending"]))


class SignIn(NamedTuple):
    customer: str
    tool: str

    def as_json(self) -> dict:
        return {"customer": self.customer, "tool": self.tool}

    @classmethod
    def from_json(cls, doc: dict) -> SignIn:
        return cls(str(doc["customer"]), str(doc.get("tool", "")))


class Returned(NamedTuple):
    results: int
    ok: int

    def as_json(self) -> dict:
        return {"results": self.results, "ok": self.ok}

    @classmethod
    def from_json(cls, doc: dict) -> Returned:
        return cls(int(doc["results"]), int(doc["ok"]))


class Finished(NamedTuple):
    reason: StopReason
    detail: str  # outside text the stop carries (an answer's first line, a hand-off's summary); else ""
    message: Phrase | None = None  # why, when orderbot says it: a catalogue id and its values
    request: Request | None = None  # the model request the run stopped after, if it stopped after one

    def as_json(self) -> dict:
        out = {} if self.request is None else self.request.as_json()
        out["reason"], out["detail"] = str(self.reason), self.detail
        if self.message is not None:
            out["message"] = self.message.as_json()
        return out

    @classmethod
    def from_json(cls, doc: dict) -> Finished:
        """Older records also kept the English of orderbot's sentence as the detail: read as it
        is (orderbot.runs.record.upgrade drops it), shown only when the phrase cannot be said."""
        request = Request.from_json(doc) if "sent" in doc else None
        message = Phrase.from_json(doc.get("message"))
        return cls(StopReason(doc["reason"]), str(doc.get("detail", "")), message, request)


class Recorded(NamedTuple):
    """A transition of an older record whose payload was dropped (it was too large to
    keep): the English that record wrote, shown as it is."""

    event: str
    detail: str

    def as_json(self) -> dict:
        return {"dropped": True}


Payload = Started | Proposed | Called | Awaiting | SignIn | Returned | Finished | Recorded

# One payload type per kind.
PAYLOADS: dict[Event, type] = {
    Event.STARTED: Started,
    Event.RESUMED: Started,
    Event.PROPOSED: Proposed,
    Event.EXECUTED: Called,
    Event.APPROVED: Called,
    Event.REJECTED: Called,
    Event.REFUSED: Called,
    Event.AWAITING_APPROVAL: Awaiting,
    Event.SIGNED_IN: SignIn,
    Event.RETURNED: Returned,
    Event.FINISHED: Finished,
}


class Transition(NamedTuple):
    """One move of the run from phase to phase, as observers see it. A named tuple: a
    value nobody changes, made several times per step at a tuple's cost."""

    step: int
    from_: Phase
    to: Phase
    kind: Event
    payload: Payload
    elapsed: float  # seconds since this run (or this resumption) started
    steps_used: int  # budget used so far in this run or resumption
    calls_used: int
    limits: Limits  # of this run or resumption: with the counts above, what is left

    @property
    def stop_reason(self) -> StopReason | None:
        payload = self.payload
        return payload.reason if isinstance(payload, Finished) else None

    @property
    def budget_left(self) -> dict:
        limits = self.limits
        seconds = limits.timeout - self.elapsed
        return {
            "steps": limits.max_steps - self.steps_used,
            "tool_calls": limits.max_tool_calls - self.calls_used,
            "seconds": round(seconds, 3) if seconds > 0 else 0.0,
        }

    def as_dict(self) -> dict:
        """The JSON of `--json` and of the record: the values only (orderbot.ui.describe says
        them; records before this one also kept English words, read only for a payload they dropped)."""
        data = self.payload.as_json()
        if not isinstance(self.payload, Recorded):
            data["budget_left"] = self.budget_left
        return {
            "step": self.step,
            "from": str(self.from_),
            "to": str(self.to),
            "kind": str(self.kind),
            "elapsed_ms": round(self.elapsed * 1000, 1),
            "steps_used": self.steps_used,
            "calls_used": self.calls_used,
            "data": data,
        }

    @classmethod
    def from_json(cls, doc: dict, limits: Limits) -> Transition:
        """A transition as `as_dict` wrote it (the record adds the unrounded `elapsed`).
        A payload that cannot be read back (dropped for its size) keeps the recorded words."""
        kind = Event(doc["kind"])
        payload: Payload
        try:
            payload = PAYLOADS[kind].from_json(doc["data"])
        except (KeyError, TypeError, ValueError, AttributeError):  # pydantic's ValidationError is a ValueError
            payload = Recorded(str(doc.get("event", kind)), str(doc.get("detail", "")))
        return cls(
            int(doc["step"]),
            Phase(doc["from"]),
            Phase(doc["to"]),
            kind,
            payload,
            doc.get("elapsed", doc.get("elapsed_ms", 0.0) / 1000),
            doc.get("steps_used", 0),
            doc.get("calls_used", 0),
            limits,
        )


Observer = Callable[[Transition, RunState], None]


class Stop(NamedTuple):
    """A round's outcome when the run ends (or pauses) there: what its `finished`
    transition will carry."""

    reason: StopReason
    detail: str = ""  # outside text: an answer's first line, a hand-off's summary
    request: Request | None = None  # the model request the run stopped after
    message: Phrase | None = None  # why, when orderbot says it

    @classmethod
    def saying(cls, reason: StopReason, message_id: str, /, **params: object) -> Stop:
        """A stop whose why is one of orderbot's sentences, said where it is shown."""
        return cls(reason, message=Phrase(message_id, params))


# ---- comparing ------------------------------------------------------------------------


def key(transition: Transition) -> tuple:
    """What a transition is, without its wording, timings or sizes: what replay compares.
    Two runs that made the same moves with the same calls, arguments, results and stop
    have equal keys, whatever language or words described them."""
    p = transition.payload
    head = (transition.step, transition.from_, transition.to, transition.kind)
    if isinstance(p, Started):
        return (*head, p.question[:500])
    if isinstance(p, Proposed):
        return (*head, tuple((c.name, c.parsed()) for c in p.request.calls))
    if isinstance(p, Called):
        # The result's data is compared call by call, against the record's bounded copy.
        return (*head, p.call.name, p.call.parsed(), p.decision, p.result.get("ok"), p.result.get("code"))
    if isinstance(p, Awaiting):
        return (*head, tuple((c.name, c.arguments) for c in p.pending))
    if isinstance(p, SignIn | Returned):
        return (*head, *p)
    if isinstance(p, Finished):
        # An answer's detail is its first line: replay compares the answer itself.
        said = None if p.reason is StopReason.ANSWERED else (p.message.as_json() if p.message else p.detail)
        return (*head, p.reason, _json_key(said))
    return (*head, p.event, p.detail)


def _json_key(value: Any) -> str:
    return to_json(value).decode()
