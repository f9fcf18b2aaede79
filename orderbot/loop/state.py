"""The values of a run: its phases and events, each call, the state that is saved and
resumed. Plain data, no I/O; the engine (orderbot.loop.engine) moves a `RunState` through
them, and tells each move as a transition (orderbot.loop.transitions)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import from_json

from orderbot.loop.envelope import compact_json
from orderbot.loop.items import Item, user
from orderbot.loop.limits import StopReason
from orderbot.text import cut, whole_characters


class Phase(StrEnum):
    START = "start"
    PLAN = "plan"
    ACT = "act"
    OBSERVE = "observe"
    AWAITING = "awaiting_approval"
    FINISH = "finish"


class Event(StrEnum):
    """What a transition is. Views and records switch on this, never on the label text."""

    STARTED = "started"
    RESUMED = "resumed"
    PROPOSED = "proposed"  # the model proposed tool calls
    EXECUTED = "executed"  # a call ran
    APPROVED = "approved"  # a person approved a call, and it ran
    REJECTED = "rejected"  # a person rejected a call
    REFUSED = "refused"  # dispatch refused a call: unknown tool, invalid arguments, no access ...
    AWAITING_APPROVAL = "awaiting_approval"  # the run pauses until a person decides
    SIGNED_IN = "signed_in"  # a sign-in lookup named the run's customer
    RETURNED = "returned"  # the results went back to the model
    FINISHED = "finished"  # the run stopped; the label is the stop reason


# Where each kind of transition goes. A finish comes from PLAN, or from ACT when cancelled.
PHASES: dict[Event, tuple[Phase, Phase]] = {
    Event.STARTED: (Phase.START, Phase.PLAN),
    Event.RESUMED: (Phase.START, Phase.PLAN),
    Event.PROPOSED: (Phase.PLAN, Phase.ACT),
    Event.EXECUTED: (Phase.ACT, Phase.OBSERVE),
    Event.APPROVED: (Phase.ACT, Phase.OBSERVE),
    Event.REJECTED: (Phase.ACT, Phase.OBSERVE),
    Event.REFUSED: (Phase.ACT, Phase.OBSERVE),
    Event.AWAITING_APPROVAL: (Phase.ACT, Phase.AWAITING),
    Event.SIGNED_IN: (Phase.OBSERVE, Phase.OBSERVE),
    Event.RETURNED: (Phase.OBSERVE, Phase.PLAN),
    Event.FINISHED: (Phase.PLAN, Phase.FINISH),
}


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What became of one tool call the model proposed.

    A dataclass, not a pydantic model: the engine builds one for every call from values it
    has already checked (the call as the provider parsed it, dispatch's decision, the
    envelope the model was sent), so validating them again would only cost time on every
    call. A record read back from disk is still validated field by field, as part of
    `RunState` (pydantic validates a dataclass field like a model)."""

    step: int
    call_id: str
    name: str
    arguments: str
    decision: str  # executed, rejected, not_executed, unknown_tool, invalid_arguments, ...
    result: dict | None = None  # the envelope the model saw; None when nothing was sent back

    @property
    def executed(self) -> bool:
        return self.decision == "executed"


class PendingCall(BaseModel):
    """A side-effecting call waiting for a person, bound to exactly this call."""

    # Built when a side effect is first proposed or read back: a lookup never needs the validator.
    model_config = ConfigDict(defer_build=True)

    step: int
    call_id: str
    name: str
    version: str
    arguments: str  # canonical JSON of the validated arguments
    user: str | None
    # What a person is asked to approve: a Phrase as text (orderbot.errors.Phrase.as_text), said
    # in the reader's language where it is shown; a sentence in older records.
    description: str
    requested_at: float  # wall-clock time, for expiry checks on resume


def _new_list() -> list:
    return []


class RunState(BaseModel):
    """Everything a run needs to be inspected or resumed; plain JSON when saved."""

    run_id: str
    question: str
    user: str | None = None
    # True when `user` was named during the run by a sign-in lookup, not given by the session
    # (--user): a resume then needs no --user, and refuses another one.
    signed_in: bool = False
    # A new list for each instance from a Python function: pydantic inspects a default
    # factory's signature, and a builtin's (`list`) costs ~7 ms at startup (tokenize), while
    # a mutable default (`= []`) is deep-copied for each instance, ~1 µs per list per run.
    items: list[Item] = Field(default_factory=_new_list)
    steps: int = 0  # model requests made, over all resumptions
    tool_calls: int = 0  # tool calls dispatched, over all resumptions
    stop_reason: StopReason | None = None
    stop_detail: str = ""  # outside text the stop carries: an answer's first line, a hand-off's summary
    # Why the run stopped when orderbot says it: a Phrase as JSON (orderbot.errors.Phrase.as_json),
    # said in the reader's language where it is shown.
    stop_message: dict | None = None
    answer: str | None = None
    partial_answer: str | None = None  # the text of a response cut off at the token limit: not an answer
    calls: list[CallRecord] = Field(default_factory=_new_list)
    pending: list[PendingCall] = Field(default_factory=_new_list)
    # None until the provider reports usage (the offline model never does): "not reported",
    # in --json and the footer alike, rather than a 0 that looks measured.
    input_tokens: int | None = None
    output_tokens: int | None = None
    server_model: str | None = None  # the model the server says answered (the latest request)
    system_fingerprint: str | None = None  # its system_fingerprint, when the server sends one

    @classmethod
    def start(
        cls, question: str, *, user: str | None = None, history: Iterable[Item] = (), run_id: str | None = None
    ) -> RunState:
        question = whole_characters(question)  # typed or piped text may hold bytes that are not UTF-8
        state = cls(run_id=run_id or new_run_id(), question=question, user=user)
        # Added after validation, which would only check them again: the history is items of
        # earlier runs and the question's message was validated when it was made.
        state.items.extend(history)
        state.items.append(user_message(question))
        return state

    @property
    def observed(self) -> list[CallRecord]:
        """Calls whose results were gathered: what a person still sees after a limit stop."""
        return [c for c in self.calls if c.executed]


def user_message(text: str) -> Item:
    return user(text)


def new_run_id(now: float | None = None) -> str:
    """Short and sortable: UTC time to the second, then four random hex digits."""
    return time.strftime("%y%m%d-%H%M%S-", time.gmtime(now)) + os.urandom(2).hex()


# Returns True to run the call, False to reject it. None as the approver means nobody can
# be asked (no terminal): the run then pauses in awaiting_approval.
Approver = Callable[[PendingCall], bool]


# Made once: json.dumps with options builds a new encoder on every call.
_JSON = json.JSONEncoder(ensure_ascii=False)


def describe_call(name: str, arguments: Any, limit: int = 120) -> str:
    """`name(key=value, ...)`, one line, from raw or parsed arguments; the raw text when
    they are not a JSON object. Tables, traces and stop messages all show calls this way."""
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = from_json(arguments)
        except ValueError:
            parsed = arguments
    if isinstance(parsed, dict):
        inner = ", ".join(f"{k}={_JSON.encode(v)}" for k, v in parsed.items())
    else:
        inner = arguments if isinstance(arguments, str) else _JSON.encode(arguments)
    return cut(f"{name}({inner})", limit)


def summarize_result(envelope: dict, limit: int = 120) -> str:
    if envelope.get("ok"):
        text = "ok " + compact_json(envelope.get("data"))
    else:
        text = f"error {envelope.get('code')}: {envelope.get('error')}"
    return cut(text, limit)
