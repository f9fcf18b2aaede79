"""The bounded workflow: plan -> act -> observe -> ... -> finish, owned by the program.

The model only proposes the next step; this module decides whether it happens. Every
run is a small state machine with hard limits, and each state transition is a value
handed to observers (the renderer, the run record, the trace). The engine has no I/O of
its own: it takes a model, a toolbox, a clock and callbacks, and mutates a `RunState`
that can be saved as JSON and resumed.

Rules that keep the limits honest (the checks and their messages are in orderbot.loop.budget):
- a tool call proposed at the last allowed step is never executed (nobody would read it);
- the deadline bounds the model request itself (the time left is its timeout);
- a stopped run makes no further model request.

Two outcomes of a tool call change the run, and only through values the toolbox returns
(orderbot.loop.dispatch.Outcome), never by what a tool is called: a sign-in lookup names the
run's customer when it has none yet (a `signed_in` transition says so), and a hand-off
ends the run as `transferred`, with its summary as the stop detail.

The loop reads top to bottom in `_Run.go` (one `_Run` per run): each round (`_step`)
returns its outcome as a value, a `Stop` when the run ends or pauses there, None to plan
again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from orderbot.errors import ModelError, ModelTimeout, Phrase, Terminated
from orderbot.loop.budget import Budget, LimitExceeded, Limits
from orderbot.loop.dispatch import Prepared, Refused, Toolbox
from orderbot.loop.envelope import capped, envelope_text, fail
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, text_chars
from orderbot.loop.limits import StopReason
from orderbot.loop.model import Model, ModelRequest, Turn
from orderbot.loop.model_text import to_model
from orderbot.loop.state import PHASES, Approver, CallRecord, Event, PendingCall, Phase, RunState
from orderbot.loop.tools import ToolContext
from orderbot.loop.transitions import (
    MAX_TEXT,
    Awaiting,
    Call,
    Called,
    Finished,
    Observer,
    Payload,
    Proposed,
    Request,
    Returned,
    SignIn,
    Started,
    Stop,
    Transition,
)
from orderbot.text import one_line

MAX_SUMMARY_CHARS = 2000  # of a hand-off's summary: the stop detail a person reads


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
        self.approver = approver
        self.instructions = instructions  # the system prompt: the session shop's (orderbot.shops.shop.Shop)

    # ---- the loop -------------------------------------------------------------------

    def run(self, state: RunState, *, approve_pending: bool | None = None) -> RunState:
        """Run (or continue) `state` until it finishes; returns the same object.

        `approve_pending` settles calls left awaiting approval by an earlier run: True runs
        them, False rejects them. Whoever passes it has re-checked the binding first.

        What one run uses while it goes (its state, its budget, its phase) lives in a `_Run`
        made for it, never on the engine: one engine can run several runs at once (an
        approver or a model that starts another run on it, or two threads).
        """
        return _Run(self, state).go(approve_pending)


class _Run:
    """One run in progress on an engine: the state it moves, the budget it spends, where
    it is. Made by `Engine.run` for each run and dropped when the run stops."""

    def __init__(self, engine: Engine, state: RunState) -> None:
        self.model = engine.model
        self.toolbox = engine.toolbox
        self.limits = engine.limits
        self.clock = engine.clock
        self.wall_clock = engine.wall_clock
        self.observers = engine.observers
        self.approver = engine.approver
        self.instructions = engine.instructions
        self._state = state
        self._budget = Budget(self.limits, self.clock)
        self._phase = Phase.PLAN  # where a Ctrl-C lands: plan while the model thinks, act while tools run
        self._handed_off: str | None = None  # a hand-off's summary, once a tool has handed the run to a person
        self._counted: tuple[int, int, Item | None] = (0, 0, None)  # items counted, their characters, the last

    def go(self, approve_pending: bool | None) -> RunState:
        state = self._state
        if state.stop_reason is not None:  # a stopped run continues: it has not stopped yet
            state.stop_reason, state.stop_detail, state.stop_message = None, "", None
        kind = Event.RESUMED if state.steps > 0 else Event.STARTED
        self._emit(state.steps, kind, Started(state.question, self.limits))
        try:
            stop = self._settle_pending(approve_pending)
            if stop is None:
                self._answer_dangling_calls()
            while stop is None:
                stop = self._step()
        except KeyboardInterrupt as stopped:
            said = "detail.terminated" if isinstance(stopped, Terminated) else "detail.interrupted"
            stop = Stop.saying(StopReason.CANCELLED, said)
        self._finish(stop)
        return state

    def _step(self) -> Stop | None:
        """One round: plan (ask the model), act (run what it proposed), observe (hand the
        results back). A Stop when the run ends in this round; None to plan again.

        A limit check that fails (orderbot.loop.budget) ends the round: the calls of this round
        that had not run yet are recorded as not executed."""
        try:
            self._budget.check_before_request()
        except LimitExceeded as exceeded:
            return self._limit_stop(exceeded)
        step = self._state.steps + 1
        decided = self._plan(step)
        return decided if isinstance(decided, Stop) else self._act(step, decided)

    def _limit_stop(
        self, exceeded: LimitExceeded, unrun: Iterable[FunctionCall] = (), request: Request | None = None
    ) -> Stop:
        self._not_executed(self._state.steps, unrun)
        return Stop(exceeded.reason, "", request, exceeded.phrase)

    def _plan(self, step: int) -> Stop | Proposal:
        """Ask the model: a Stop (an answer, an error, a limit), or the calls it proposes."""
        state, budget = self._state, self._budget
        remaining = budget.remaining()
        request = ModelRequest(self.instructions, tuple(state.items), self.toolbox.specs, remaining)
        began = self.clock()
        self._phase = Phase.PLAN
        try:
            turn = self.model.respond(request)
        except ModelTimeout as exc:
            self._count_request(step)
            return self._limit_stop(budget.timed_out(exc.cause))
        except ModelError as exc:
            self._count_request(step)
            return Stop(StopReason.MODEL_ERROR, message=exc.phrase)
        except Exception as exc:  # noqa: BLE001 - a provider that broke its contract still stops cleanly
            self._count_request(step)
            return Stop.saying(StopReason.MODEL_ERROR, "detail.provider_crashed", kind=type(exc).__name__)
        self._count_request(step)
        if turn.usage is not None:
            state.input_tokens = (state.input_tokens or 0) + turn.usage.input_tokens
            state.output_tokens = (state.output_tokens or 0) + turn.usage.output_tokens
        if turn.server_model:
            state.server_model, state.system_fingerprint = turn.server_model, turn.fingerprint
        shown = tuple(map(Call.of, turn.calls))
        sent = self._request(request, turn, self.clock() - began, shown)
        try:
            budget.check_response(turn.size, turn.oversize)
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
                return Stop(StopReason.ANSWERED, one_line(turn.text), sent)
            budget.check_before_tool_calls([c.name for c in turn.calls])
        except LimitExceeded as exceeded:
            return self._limit_stop(exceeded, turn.calls, sent)
        self._emit(step, Event.PROPOSED, Proposed(sent))
        budget.calls += len(shown)
        state.tool_calls += len(shown)
        return Proposal(turn.calls, shown)

    def _request(self, request: ModelRequest, turn: Turn, seconds: float, calls: tuple[Call, ...]) -> Request:
        """What was sent and what came back, as the transitions of this step carry it."""
        usage = turn.usage
        return Request(
            len(request.items),
            self._chars(request.items),
            tuple(t["name"] for t in request.tools),
            round(seconds * 1000, 1),
            None if usage is None else (usage.input_tokens, usage.output_tokens),
            calls,
            turn.text[:MAX_TEXT] or None,
            turn.received_bytes,
        )

    def _chars(self, items: Sequence[Item]) -> int:
        """The characters of a request's items. A run's items only grow, so only those added
        since the last request are counted (a run of a hundred calls re-counted all of them at
        every step); anything else is counted afresh."""
        counted, chars, last = self._counted
        if not (0 < counted <= len(items) and items[counted - 1] is last):
            counted, chars = 0, 0
        chars += sum(map(text_chars, items[counted:]))
        self._counted = (len(items), chars, items[-1] if items else None)
        return chars

    def _count_request(self, step: int) -> None:
        self._state.steps = step
        self._budget.steps += 1

    def _act(self, step: int, proposal: Proposal) -> Stop | None:
        """Run what the model proposed, each call through dispatch: a Stop when the run ends
        (or pauses for approval) here, None to plan again."""
        state = self._state
        self._phase = Phase.ACT
        outputs: list[FunctionCallOutput] = []
        waiting: list[tuple[PendingCall, FunctionCall]] = []
        self._handed_off = None
        for index, (call, shown) in enumerate(zip(proposal.calls, proposal.shown, strict=True)):
            try:
                self._budget.check_before_tool_call()
            except LimitExceeded as exceeded:
                return self._limit_stop(exceeded, proposal.calls[index:])
            ctx = self._context(step)  # made per call: a sign-in earlier in this round names the customer
            prepared = self.toolbox.prepare(call, ctx)
            if isinstance(prepared, Refused):
                output = self._observe(step, shown, prepared.decision, prepared.envelope, Event.REFUSED)
            elif prepared.tool.side_effect:
                pending = self._pending(step, prepared, ctx)
                if self.approver is None:
                    waiting.append((pending, call))
                    continue
                output = self._decide(step, prepared, shown, ctx, self._ask(pending))
            else:
                output = self._run_call(step, prepared, shown, ctx)
            outputs.append(output)
            state.items.append(output)  # now, so a stop later in this round keeps it
            if self._handed_off is not None:
                # The conversation is a person's now: nothing else this round proposed runs.
                self._not_executed(step, [*(c for _, c in waiting), *proposal.calls[index + 1 :]])
                return Stop(StopReason.TRANSFERRED, self._handed_off)
        if waiting:
            state.pending = [p for p, _ in waiting]
            self._emit(step, Event.AWAITING_APPROVAL, Awaiting(tuple(state.pending)))
            actions = [Phrase.from_text(p.description) or p.description for p in state.pending]
            return Stop(StopReason.AWAITING_APPROVAL, message=Phrase("detail.awaiting", {"actions": actions}))
        self._returned(step, outputs)
        return None

    def _returned(self, step: int, outputs: list[FunctionCallOutput]) -> None:
        """The results went back to the model: how many, and how many of them were ok."""
        ok = sum(1 for o in outputs if o.output.startswith('{"ok":true'))
        self._emit(step, Event.RETURNED, Returned(len(outputs), ok))

    def _context(self, step: int | None = None) -> ToolContext:
        state = self._state
        return ToolContext(user=state.user, run_id=state.run_id, time_left=self._budget.remaining, step=step)

    def _ask(self, pending: PendingCall) -> bool:
        """Ask the approver. The time a person takes to decide is theirs, not the run's:
        it is left out of the run's time (the limit checks it and the tables show it), so a
        slow "yes" neither stops the run at its time limit nor looks as if it passed it."""
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
            return Stop.saying(StopReason.AWAITING_APPROVAL, "detail.still_waiting")
        self._phase = Phase.ACT
        outputs = []
        for pending in state.pending:
            ctx = self._context(pending.step)
            call = FunctionCall(call_id=pending.call_id, name=pending.name, arguments=pending.arguments)
            prepared, shown = self.toolbox.prepare(call, ctx), Call.of(call)
            if isinstance(prepared, Refused):
                outputs.append(self._observe(pending.step, shown, prepared.decision, prepared.envelope, Event.REFUSED))
            else:
                outputs.append(self._decide(pending.step, prepared, shown, ctx, approve))
        state.pending = []
        state.items.extend(outputs)
        self._returned(state.steps, outputs)
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
        envelope = fail("not_executed", to_model("not_executed"))
        state.items.extend(FunctionCallOutput(call_id=c.call_id, output=envelope_text(envelope)) for c in missing)

    def _decide(
        self, step: int, prepared: Prepared, shown: Call, ctx: ToolContext, approved: bool
    ) -> FunctionCallOutput:
        if approved:
            return self._run_call(step, prepared, shown, ctx, Event.APPROVED)
        envelope = fail("rejected", to_model("rejected"))
        return self._observe(step, shown, "rejected", envelope, Event.REJECTED)

    def _run_call(
        self, step: int, prepared: Prepared, shown: Call, ctx: ToolContext, kind: Event = Event.EXECUTED
    ) -> FunctionCallOutput:
        began = self.clock()
        outcome = self.toolbox.run(prepared, ctx)
        ms = round((self.clock() - began) * 1000, 1)
        output = self._observe(step, shown, "executed", outcome.envelope, kind, ms)
        if outcome.signed_in is not None and self._state.user is None:
            self._sign_in(step, outcome.signed_in, prepared.tool.name)
        if outcome.handed_off is not None:
            self._handed_off = " ".join(outcome.handed_off.split())[:MAX_SUMMARY_CHARS]
        return output

    def _sign_in(self, step: int, customer: str, tool: str) -> None:
        """The run's customer from now on, named by a sign-in lookup (Toolbox.run has refused
        one that names someone other than a customer the run already has)."""
        state = self._state
        state.user, state.signed_in = customer, True
        self._emit(step, Event.SIGNED_IN, SignIn(customer, tool))

    def _observe(
        self, step: int, call: Call, decision: str, envelope: dict, kind: Event, ms: float | None = None
    ) -> FunctionCallOutput:
        # Cut once, here: the model, the record, transitions and --json all see the same
        # bounded result, and the record still matches what the model was sent.
        envelope, text = capped(envelope)
        self._state.calls.append(_call_record(step, call, decision, envelope))
        self._emit(step, kind, Called(call, decision, envelope, ms))
        return FunctionCallOutput(call_id=call.call_id, output=text)

    def _pending(self, step: int, prepared: Prepared, ctx: ToolContext) -> PendingCall:
        tool = prepared.tool
        said = tool.describe(prepared.args, ctx) if tool.describe else f"{tool.name}({prepared.canonical_arguments})"
        description = said.as_text() if isinstance(said, Phrase) else said
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
        state.stop_reason, state.stop_detail = stop.reason, stop.detail
        state.stop_message = None if stop.message is None else stop.message.as_json()
        if stop.reason is StopReason.AWAITING_APPROVAL:
            return  # the approval-needed transition is the last one: the run is paused
        source = self._phase if stop.reason is StopReason.CANCELLED else Phase.PLAN
        finished = Finished(stop.reason, stop.detail, stop.message, stop.request)
        self._emit(state.steps, Event.FINISHED, finished, source=source)

    # ---- helpers --------------------------------------------------------------------

    def _emit(self, step: int, kind: Event, payload: Payload, *, source: Phase | None = None) -> None:
        budget = self._budget
        from_, to = PHASES[kind]
        transition = Transition(
            step, source or from_, to, kind, payload, budget.elapsed(), budget.steps, budget.calls, self.limits
        )
        for observer in self.observers:
            observer(transition, self._state)


class Proposal(NamedTuple):
    """What a plan decided when it did not stop the run: the calls to act on, each also as
    the transitions show it."""

    calls: tuple[FunctionCall, ...]
    shown: tuple[Call, ...]


def _call_record(step: int, call: FunctionCall | Call, decision: str, result: dict | None = None) -> CallRecord:
    """The record of one call (only executed, refused and rejected calls have a result)."""
    return CallRecord(
        step=step,
        call_id=call.call_id,
        name=call.name,
        arguments=call.arguments[:2000],
        decision=decision,
        result=result,
    )
