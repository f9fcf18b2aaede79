"""The bounded workflow: plan -> act -> observe -> ... -> finish, owned by the program.

The model only proposes the next step; this module decides whether it happens. Every
run is a small state machine with hard limits, and each state transition is a value
handed to observers (the renderer, the run record, the trace). The engine has no I/O of
its own: it takes a model, a toolbox, a clock and callbacks, and mutates a `RunState`
that can be saved as JSON and resumed.

Rules that keep the limits honest (the checks and their messages are in orderbot.budget):
- a tool call proposed at the last allowed step is never executed (nobody would read it);
- the deadline bounds the model request itself (the time left is its timeout);
- a stopped run makes no further model request.

The loop reads top to bottom in `Engine.run`: each round (`_step`) returns its outcome as a
value, a `Stop` when the run ends or pauses there, None to plan again.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field
from pydantic_core import from_json

from orderbot.budget import Budget, LimitExceeded, Limits
from orderbot.errors import ModelError, ModelTimeout
from orderbot.i18n import t
from orderbot.items import FunctionCall, FunctionCallOutput, Item, text_chars, user
from orderbot.limits import StopReason
from orderbot.models.base import Model, ModelRequest, Turn
from orderbot.text import cut, one_line, plural
from orderbot.tools import Prepared, Refused, Toolbox, ToolContext, capped, compact_json, envelope_text, fail


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
    Event.RETURNED: (Phase.OBSERVE, Phase.PLAN),
    Event.FINISHED: (Phase.PLAN, Phase.FINISH),
}


# The labels of call outcomes, as tables and records show them; a refusal shows its decision.
CALL_LABELS = {
    Event.EXECUTED: "executed",
    Event.APPROVED: "approved and executed",
    Event.REJECTED: "rejected by the person",
}


# Not frozen, though a value that observers must not change: a frozen dataclass's __init__
# costs five times more, and every step makes several of these.
@dataclass(slots=True)
class Transition:
    step: int
    from_: Phase
    to: Phase
    event: str  # the label a person reads ("proposed 2 calls", "approved and executed", ...)
    detail: str
    elapsed: float  # seconds since this run (or this resumption) started
    steps_used: int  # budget used so far in this run or resumption
    calls_used: int
    data: dict | None = None  # the full detail, for --trace and --json
    kind: Event = field(kw_only=True)  # what the transition is

    @property
    def stop_reason(self) -> StopReason | None:
        return StopReason(self.event) if self.kind is Event.FINISHED else None

    def as_dict(self) -> dict:
        out = {
            "step": self.step,
            "from": str(self.from_),
            "to": str(self.to),
            "kind": str(self.kind),
            "event": self.event,
            "detail": self.detail,
            "elapsed_ms": round(self.elapsed * 1000, 1),
            "steps_used": self.steps_used,
            "calls_used": self.calls_used,
        }
        if self.data:
            out["data"] = self.data
        return out


@dataclass(slots=True)
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

    step: int
    call_id: str
    name: str
    version: str
    arguments: str  # canonical JSON of the validated arguments
    user: str | None
    description: str
    requested_at: float  # wall-clock time, for expiry checks on resume


def _new_list() -> list:
    return []


class RunState(BaseModel):
    """Everything a run needs to be inspected or resumed; plain JSON when saved."""

    run_id: str
    question: str
    user: str | None = None
    # A new list for each instance from a Python function: pydantic inspects a default
    # factory's signature, and a builtin's (`list`) costs ~7 ms at startup (tokenize), while
    # a mutable default (`= []`) is deep-copied for each instance, ~1 µs per list per run.
    items: list[Item] = Field(default_factory=_new_list)
    steps: int = 0  # model requests made, over all resumptions
    tool_calls: int = 0  # tool calls dispatched, over all resumptions
    stop_reason: StopReason | None = None
    stop_detail: str = ""
    # The detail as a catalogue id and values ({"id": ..., "params": ...}) when it is one of
    # orderbot's own sentences, so the terminal can say it in the UI language.
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
    return f"{_second_stamp(int(now if now is not None else time.time()))}-{os.urandom(2).hex()}"


@functools.lru_cache(maxsize=1)
def _second_stamp(second: int) -> str:
    # Formatted once per second: runs started within the same second share it.
    return time.strftime("%y%m%d-%H%M%S", time.gmtime(second))


Observer = Callable[[Transition, RunState], None]
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


@dataclass(slots=True)  # not frozen, as Transition: a run makes one or more of these
class Stop:
    """A round's outcome when the run ends (or pauses) there."""

    reason: StopReason
    detail: str
    data: dict | None = None
    message: dict | None = None  # the detail as a catalogue id and its values, for the terminal


def _stop(reason: StopReason, message_id: str, **params: object) -> Stop:
    """A stop whose detail is one of orderbot's sentences: English in the record, any
    language on the terminal."""
    return Stop(reason, t(message_id, lang="en", **params), message={"id": message_id, "params": params})


class Engine:
    """Runs one bounded plan -> act -> observe loop over a RunState."""

    def __init__(
        self,
        model: Model,
        toolbox: Toolbox,
        limits: Limits | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        observers: Iterable[Observer] = (),
        approver: Approver | None = None,
        instructions: str = "",
    ) -> None:
        self.model = model
        self.toolbox = toolbox
        self.limits = limits or Limits()
        self.clock = clock
        self.wall_clock = wall_clock
        self.observers = list(observers)
        # Transition data (what was sent, proposed, returned; the budget left) is built only
        # when an observer wants it: the record, --json and --trace do; a table does not.
        self.with_data = any(getattr(o, "wants_data", True) for o in self.observers)
        self.approver = approver
        self.instructions = instructions  # the system prompt: it belongs with the tools (orderbot.orders)

    # ---- the loop -------------------------------------------------------------------

    def run(self, state: RunState, *, approve_pending: bool | None = None) -> RunState:
        """Run (or continue) `state` until it finishes; returns the same object.

        `approve_pending` settles calls left awaiting approval by an earlier run: True runs
        them, False rejects them. Whoever passes it has re-checked the binding first.
        """
        self._state = state
        self._budget = Budget(self.limits, self.clock)
        self._shown: dict[str, Shown] = {}  # by call id: see _show
        self._phase = Phase.PLAN  # where a Ctrl-C lands: plan while the model thinks, act while tools run
        if state.stop_reason is not None:  # a stopped run continues: it has not stopped yet
            state.stop_reason, state.stop_detail, state.stop_message = None, "", None
        self._emit(
            state.steps,
            Event.RESUMED if state.steps > 0 else Event.STARTED,
            one_line(state.question, 80),
            {"limits": self.limits.model_dump(), "question": state.question[:500]} if self.with_data else None,
        )
        try:
            stop = self._settle_pending(approve_pending)
            if stop is None:
                self._answer_dangling_calls()
            while stop is None:
                stop = self._step()
        except KeyboardInterrupt:
            stop = _stop(StopReason.CANCELLED, "detail.interrupted")
        self._finish(stop)
        return state

    def _step(self) -> Stop | None:
        """One round: plan (ask the model), act (run what it proposed), observe (hand the
        results back). A Stop when the run ends in this round; None to plan again.

        A limit check that fails (orderbot.budget) ends the round: the calls of this round
        that had not run yet are recorded as not executed."""
        self._unrun: list[FunctionCall] = []  # this round's calls not yet dispatched
        self._data: dict | None = None  # what the model was sent and proposed, until shown
        try:
            self._budget.check_before_request()
            step = self._state.steps + 1
            stop = self._plan(step)
            if stop is None:
                stop = self._act(step)
            return stop
        except LimitExceeded as exceeded:
            self._not_executed(self._state.steps, self._unrun)
            return Stop(exceeded.reason, str(exceeded), self._data, exceeded.message)

    def _plan(self, step: int) -> Stop | None:
        state, budget = self._state, self._budget
        remaining = budget.remaining()
        request = ModelRequest(self.instructions, tuple(state.items), self.toolbox.specs, remaining)
        began = self.clock()
        self._phase = Phase.PLAN
        try:
            turn = self.model.respond(request)
        except ModelTimeout as exc:
            self._count_request(step)
            raise budget.timed_out(exc.cause) from None
        except ModelError as exc:
            self._count_request(step)
            return Stop(StopReason.MODEL_ERROR, str(exc))
        except Exception as exc:  # noqa: BLE001 - a provider that broke its contract still stops cleanly
            self._count_request(step)
            return _stop(StopReason.MODEL_ERROR, "detail.provider_crashed", kind=type(exc).__name__)
        self._count_request(step)
        if turn.usage is not None:
            state.input_tokens = (state.input_tokens or 0) + turn.usage.input_tokens
            state.output_tokens = (state.output_tokens or 0) + turn.usage.output_tokens
        if turn.server_model:
            state.server_model, state.system_fingerprint = turn.server_model, turn.fingerprint
        self._unrun = list(turn.calls)
        self._data = self._turn_data(request, turn, self.clock() - began) if self.with_data else None
        budget.check_response(turn.size)
        if turn.truncated:  # cut off at the output-token cap: the text is partial, a call may be cut mid-argument
            state.partial_answer = turn.text.rstrip() or None
            raise LimitExceeded(
                StopReason.RESPONSE_TRUNCATED,
                "detail.truncated_calls" if turn.calls else "detail.truncated",
                size=turn.size,
                count=len(turn.calls),
            )
        state.items.extend(turn.items)
        if not turn.calls:
            state.answer = turn.text.rstrip()  # trailing newlines would show as blank lines
            return Stop(StopReason.ANSWERED, one_line(turn.text), self._data)
        budget.check_before_tool_calls([c.name for c in turn.calls])
        label = f"proposed {plural(len(turn.calls), 'call')}"
        self._emit(step, Event.PROPOSED, "; ".join(self._show(c).line for c in turn.calls), self._data, label)
        self._data = None  # shown with the proposal: a later stop in this round does not repeat it
        budget.calls += len(turn.calls)
        state.tool_calls += len(turn.calls)
        return None

    def _turn_data(self, request: ModelRequest, turn: Turn, seconds: float) -> dict:
        """What was sent and what came back, for --json, --trace and the record."""
        return {
            "sent": {
                "items": len(request.items),
                "chars": sum(map(text_chars, request.items)),
                "tools": [t["name"] for t in request.tools],
            },
            "request_ms": round(seconds * 1000, 1),
            "usage": None
            if turn.usage is None
            else {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens},
            "proposed": [self._show(c).data for c in turn.calls],
            "text": turn.text[:2000] or None,
            # a streamed response: the bytes read before it ended, or before it was cut
            **({"received_bytes": turn.received_bytes} if turn.received_bytes is not None else {}),
        }

    def _count_request(self, step: int) -> None:
        self._state.steps = step
        self._budget.steps += 1

    def _act(self, step: int) -> Stop | None:
        state = self._state
        self._phase = Phase.ACT
        ctx = ToolContext(user=state.user, run_id=state.run_id, time_left=self._budget.remaining)
        outputs: list[FunctionCallOutput] = []
        waiting: list[PendingCall] = []
        while self._unrun:
            self._budget.check_before_tool_call()
            call = self._unrun.pop(0)
            prepared = self.toolbox.prepare(call, ctx)
            if isinstance(prepared, Refused):
                output = self._observe(step, call, prepared.decision, prepared.envelope, Event.REFUSED)
            elif prepared.tool.side_effect:
                pending = self._pending(step, prepared, ctx)
                if self.approver is None:
                    waiting.append(pending)
                    continue
                output = self._decide(step, prepared, ctx, self._ask(pending))
            else:
                output = self._run_call(step, prepared, ctx)
            outputs.append(output)
            state.items.append(output)  # now, so a stop later in this round keeps it
        if waiting:
            state.pending = waiting
            names = ", ".join(f"{p.name}({p.arguments})" for p in waiting)
            pending = {"pending": [p.model_dump() for p in waiting]}
            self._emit(step, Event.AWAITING_APPROVAL, names, pending, "approval needed")
            return Stop(StopReason.AWAITING_APPROVAL, "; ".join(p.description for p in waiting))
        self._emit(step, Event.RETURNED, _results_text(outputs))
        return None

    def _ask(self, pending: PendingCall) -> bool:
        """Ask the approver. The time a person takes to decide is theirs, not the run's:
        the deadline moves by it, so a slow "yes" does not stop the run at its time limit."""
        began = self.clock()
        try:
            return self.approver(pending)
        finally:
            self._budget.exclude(self.clock() - began)

    def _settle_pending(self, approve: bool | None) -> Stop | None:
        """Calls an earlier run left waiting: still waiting (a Stop), or settled now."""
        state = self._state
        if not state.pending:
            return None
        if approve is None:
            return _stop(StopReason.AWAITING_APPROVAL, "detail.still_waiting")
        self._phase = Phase.ACT
        ctx = ToolContext(user=state.user, run_id=state.run_id, time_left=self._budget.remaining)
        outputs = []
        for pending in state.pending:
            call = FunctionCall(call_id=pending.call_id, name=pending.name, arguments=pending.arguments)
            prepared = self.toolbox.prepare(call, ctx)
            if isinstance(prepared, Refused):
                outputs.append(self._observe(pending.step, call, prepared.decision, prepared.envelope, Event.REFUSED))
            else:
                outputs.append(self._decide(pending.step, prepared, ctx, approve))
        state.pending = []
        state.items.extend(outputs)
        self._emit(state.steps, Event.RETURNED, _results_text(outputs))
        return None

    def _answer_dangling_calls(self) -> None:
        """Calls a limit stop left without a result get one saying so before the run goes on:
        the model should know they did not run, and the APIs refuse a call with no output."""
        state = self._state
        answered = {i.call_id for i in state.items if isinstance(i, FunctionCallOutput)}
        waiting = {p.call_id for p in state.pending}
        missing = [
            i
            for i in state.items
            if isinstance(i, FunctionCall) and i.call_id not in answered and i.call_id not in waiting
        ]
        if not missing:
            return  # the usual case; fail() sanitizes its message, which is not free
        envelope = fail("not_executed", "this call was not executed: the run stopped at a limit before it ran")
        state.items.extend(FunctionCallOutput(call_id=c.call_id, output=envelope_text(envelope)) for c in missing)

    def _decide(self, step: int, prepared: Prepared, ctx: ToolContext, approved: bool) -> FunctionCallOutput:
        if approved:
            return self._run_call(step, prepared, ctx, Event.APPROVED)
        envelope = fail("rejected", "the person did not approve this action; nothing was done")
        return self._observe(step, prepared.call, "rejected", envelope, Event.REJECTED)

    def _run_call(
        self, step: int, prepared: Prepared, ctx: ToolContext, kind: Event = Event.EXECUTED
    ) -> FunctionCallOutput:
        began = self.clock()
        envelope = self.toolbox.execute(prepared, ctx)
        return self._observe(step, prepared.call, "executed", envelope, kind, round((self.clock() - began) * 1000, 1))

    def _observe(
        self, step: int, call: FunctionCall, decision: str, envelope: dict, kind: Event, ms: float | None = None
    ) -> FunctionCallOutput:
        # Cut once, here: the model, the record, transitions and --json all see the same
        # bounded result, and the record still matches what the model was sent.
        envelope, text = capped(envelope)
        self._state.calls.append(_call_record(step, call, decision, envelope))
        shown = self._show(call)
        self._emit(
            step,
            kind,
            f"{shown.line} → {summarize_result(envelope)}",
            {"call": shown.data, "decision": decision, "result": envelope, "ms": ms} if self.with_data else None,
            label=CALL_LABELS.get(kind, decision),
        )
        return FunctionCallOutput(call_id=call.call_id, output=text)

    def _show(self, call: FunctionCall) -> Shown:
        """How `call` appears in transitions, worked out once per call: its arguments are
        parsed once, whether it is then proposed, refused, run or rejected."""
        shown = self._shown.get(call.call_id)
        if shown is None or shown.call is not call:
            shown = self._shown[call.call_id] = Shown.of(call)
        return shown

    def _pending(self, step: int, prepared: Prepared, ctx: ToolContext) -> PendingCall:
        tool = prepared.tool
        description = (
            tool.describe(prepared.args, ctx) if tool.describe else f"{tool.name}({prepared.canonical_arguments})"
        )
        return PendingCall(
            step=step,
            call_id=prepared.call.call_id,
            name=tool.name,
            version=tool.version,
            arguments=prepared.canonical_arguments,
            user=ctx.user,
            description=description,
            requested_at=self.wall_clock(),
        )

    def _not_executed(self, step: int, calls: Iterable[FunctionCall]) -> None:
        for call in calls:
            self._state.calls.append(_call_record(step, call, "not_executed"))

    def _finish(self, stop: Stop) -> None:
        state = self._state
        state.stop_reason, state.stop_detail, state.stop_message = stop.reason, stop.detail, stop.message
        if stop.reason is StopReason.AWAITING_APPROVAL:
            return  # the approval-needed transition is the last one: the run is paused
        source = self._phase if stop.reason is StopReason.CANCELLED else Phase.PLAN
        self._emit(state.steps, Event.FINISHED, stop.detail, stop.data, str(stop.reason), source=source)

    # ---- helpers --------------------------------------------------------------------

    def _emit(
        self,
        step: int,
        kind: Event,
        detail: str,
        data: dict | None = None,
        label: str | None = None,
        *,
        source: Phase | None = None,
    ) -> None:
        budget = self._budget
        if data is not None and self.with_data:
            data = {**data, "budget_left": budget.left()}
        from_, to = PHASES[kind]
        transition = Transition(
            step,
            source or from_,
            to,
            label or str(kind),
            detail,
            budget.elapsed(),
            budget.steps,
            budget.calls,
            data,
            kind=kind,
        )
        for observer in self.observers:
            observer(transition, self._state)


@dataclass(slots=True)  # not frozen, as Transition: one per call; nothing changes it once made
class Shown:
    """One call as transitions show it: `data` for --json, --trace and the record, `line`
    for tables and stop messages (describe_call)."""

    call: FunctionCall
    data: dict[str, Any]
    line: str

    @classmethod
    def of(cls, call: FunctionCall) -> Shown:
        # A model that sends megabytes of arguments must not have them echoed (nor parsed) whole.
        raw = call.arguments
        if len(raw) > 2000:
            return cls(
                call,
                {"call_id": call.call_id, "name": call.name[:100], "arguments": raw[:500] + "…"},
                describe_call(call.name, raw),
            )
        try:
            # The parser dispatch validates with (pydantic's): both read the same arguments.
            arguments: Any = from_json(raw)
        except ValueError:
            arguments = raw[:500]
        data = {"call_id": call.call_id, "name": call.name[:100], "arguments": arguments}
        return cls(call, data, describe_call(call.name, arguments if isinstance(arguments, dict) else raw))


def _call_record(step: int, call: FunctionCall, decision: str, result: dict | None = None) -> CallRecord:
    """The record of one call (only executed, refused and rejected calls have a result)."""
    return CallRecord(
        step=step,
        call_id=call.call_id,
        name=call.name,
        arguments=call.arguments[:2000],
        decision=decision,
        result=result,
    )


def _results_text(outputs: list[FunctionCallOutput]) -> str:
    good = sum(1 for o in outputs if o.output.startswith('{"ok":true'))
    return f"{plural(len(outputs), 'result')} to the model: {good} ok, {len(outputs) - good} failed"
