"""The engine observer that writes a run's record, and the model wrapper that keeps each turn
for replay (orderbot.runs.record says when a record is written).

The recorder also keeps the people of each side effect (who asked, who decided: the record's
`decisions`) and tells the store what happened to each (orderbot.runs.base.Step) in the save
of the record it belongs to: proposed when a run pauses for it or a person is asked inline,
approved or rejected when it is settled, executing just before it runs, executed or failed
when it has run. The store writes the queue and the audit log from these, in its own name."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from orderbot.errors import ModelError, OperatorRefused, Phrase, RecordError
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits
from orderbot.loop.model import Model, ModelRequest, Turn
from orderbot.loop.state import Approver, Event, PendingCall, RunState, new_run_id
from orderbot.loop.transitions import Transition
from orderbot.runs.base import BaseRunStore, RunConflict, RunIdTaken, Step, Waiting
from orderbot.runs.record import COMMITTED, EXECUTING, FAILED, Decision, RunRecord, utc_iso
from orderbot.text import cut

ID_DRAWS = 8  # ids a new run tries before it gives up (each taken one is one in 65,536 that second)


class Recorder:
    """Keeps a run's record: an engine observer, plus wrappers for the model (to keep each
    turn) and the approver (to note side effects around the call). It writes the record
    when the run starts, when a side effect is about to run and when it has run, and (in
    `close`) when the run stops; other transitions are kept in memory until then.
    orderbot.runner wires all three into the engine; nothing else should."""

    def __init__(self, store: BaseRunStore, record: RunRecord, *, wall_clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.record = record
        self.wall_clock = wall_clock
        self._written = False  # whether this recorder has saved the record yet
        self._steps: list[Step] = []  # what happened to side effects, told to the store with the next save
        self._bound: dict[str, tuple[str, str]] = {}  # call id -> (tool, canonical arguments) of asked calls
        self._described: dict[str, str] = {}  # call id -> what the person was asked to approve
        self._carried_out: list[str] = []  # side effects this process ran, in order

    @classmethod
    def start(
        cls,
        store: BaseRunStore,
        state: RunState,
        *,
        provider: str,
        model: str,
        toolbox: Toolbox,
        limits: Limits,
        base_url: str | None = None,
        orders: Path | str | None = None,
        shop: str | None = None,
        kind: str = "ask",
        interactive: bool = False,
        wall_clock: Callable[[], float] = time.time,
        orders_digest: str | None = None,
        on_behalf_of: str | None = None,
    ) -> Recorder:
        operator = store.operator
        record = RunRecord.new(
            state,
            provider=provider,
            model=model,
            base_url=base_url,
            toolbox=toolbox,
            orders=orders,
            shop=shop,
            operator=operator,
            now=wall_clock(),
        )
        record.begin(
            kind,
            limits,
            approver=interactive,
            operator=operator,
            now=wall_clock(),
            orders_digest=orders_digest,
            on_behalf_of=on_behalf_of,
        )
        return cls(store, record, wall_clock=wall_clock)

    def __call__(self, transition: Transition, state: RunState) -> None:
        record = self.record
        record.state = state
        record.add_transition(transition)
        if transition.kind is Event.AWAITING_APPROVAL:
            for pending in state.pending:
                self._asked(pending)
        settled = EXECUTING in record.side_effects.values() and self._settle(state)
        if not self._written:  # the run's start goes to disk now, before anything is shown or run
            self._save_first(state)
        elif settled:  # and a side effect's outcome
            self.save()

    def _save_first(self, state: RunState) -> None:
        """The first write claims the run's id. Ids are the second a run started and 16 random
        bits, so runs started together can draw the same one: the store then writes nothing,
        and the run draws another (nobody has seen its id yet)."""
        for _ in range(ID_DRAWS - 1):
            try:
                return self.save()
            except RunIdTaken:
                if self.record.revision is not None:  # a stored run's save: its id is its own
                    raise
                state.run_id = self.record.run_id = new_run_id()
        self.save()

    def save(self) -> None:
        """Write the record, with the steps gathered since the last save. When it
        cannot be written the error says whether anything was changed: a side effect this
        process carried out stands, whatever the record says (and a person must be told,
        never led to think nothing happened)."""
        record = self.record
        if record.segments:
            reason = record.state.stop_reason
            record.segments[-1].stop_reason = None if reason is None else str(reason)
        try:
            self.store.save(record, self._steps)
        except RecordError as exc:
            if self._carried_out:
                described = [self._described.get(c, c) for c in self._carried_out]
                actions = [Phrase.from_text(d) or d for d in described]
                unrecorded = "state.effect_unrecorded_shared" if self.store.shared else "state.effect_unrecorded"
                raise RecordError(unrecorded, actions=actions, error=exc.phrase) from None
            if isinstance(exc, RunConflict):  # says itself that nothing was done
                raise
            refused = OperatorRefused if isinstance(exc, OperatorRefused) else RecordError  # the store's rules
            raise refused("state.nothing_changed", error=exc.phrase) from None
        self._steps = []
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
            self._asked(pending)
            approved = bool(approver(pending))
            self.record.approvals[pending.call_id] = approved
            self._decided(pending, approved)
            if approved:
                self.mark_executing([pending.call_id])
            return approved

        return decide

    def settle(self, approve: bool, *, reason: str | None = None) -> None:
        """Settle the calls a stored run waits for, as this session's operator, and save:
        this save is the claim (a SQL store refuses it when someone else settled the run
        first). Calls this operator approved before, whose claim landed but which never
        started (a connection lost in between), are not claimed again. Approved calls are
        then marked `executing` in a second save, just before the engine runs them."""
        record = self.record
        for pending in record.state.pending:
            self._note(pending)
        fresh = [p for p in record.state.pending if _decision_of(record, p.call_id) is None]
        for pending in fresh:
            self._decided(pending, approve, reason=reason)
        if fresh:
            self.save()
        if approve:
            self.mark_executing([p.call_id for p in record.state.pending])

    def mark_executing(self, call_ids: list[str]) -> None:
        for call_id in call_ids:
            self.record.side_effects[call_id] = EXECUTING
            self._steps.append(self._step("executing", call_id))
        self.save()

    def _asked(self, pending: PendingCall) -> None:
        """A person is asked about `pending` (now, or when someone resumes the run)."""
        record = self.record
        self._note(pending)
        earlier = record.decisions.get(pending.call_id)
        if earlier is not None and not self._done(pending.call_id, earlier):
            return  # asked before (a resumed run pausing again): one proposal per call
        record.decisions[pending.call_id] = Decision(
            requested_by=self.store.operator,
            requested_at=utc_iso(pending.requested_at),
            queued_as=None if earlier is None else _next_use(pending.call_id, earlier),
        )
        self._steps.append(self._step("proposed", pending.call_id))

    def _decided(self, pending: PendingCall, approved: bool, *, reason: str | None = None) -> None:
        record = self.record
        self._note(pending)
        decision = record.decisions.get(pending.call_id) or Decision()
        record.decisions[pending.call_id] = decision.model_copy(
            update={
                "approved": approved,
                "decided_by": self.store.operator,
                "decided_at": utc_iso(self.wall_clock()),
                "reason": None if approved else reason,
            }
        )
        event = "approved" if approved else "rejected"
        self._steps.append(self._step(event, pending.call_id, reason=None if approved else reason))

    def _done(self, call_id: str, decision: Decision) -> bool:
        """Whether the side effect `decision` is about is over (rejected, or carried out): a
        call asked with its id again is then a new call that reuses the id."""
        return decision.approved is False or self.record.side_effects.get(call_id) in (COMMITTED, FAILED)

    def _note(self, pending: PendingCall) -> None:
        self._bound[pending.call_id] = (pending.name, pending.arguments)
        self._described[pending.call_id] = pending.description

    def _step(self, event: str, call_id: str, **extra) -> Step:
        record = self.record
        decision = record.decisions.get(call_id) or Decision()
        tool, arguments = self._bound[call_id]
        call = Waiting(
            run_id=record.run_id,
            call_id=decision.queued_as or call_id,
            tool=tool,
            arguments=arguments,
            description=self._described.get(call_id, ""),
            customer=record.state.user,
            requested_by=None,  # the store names who asked: this session, when it proposes
            requested_at=decision.requested_at or "",
        )
        return Step(event, call, at=_stamp(self.wall_clock()), **extra)

    def _settle(self, state: RunState) -> bool:
        """Note how each `executing` side effect ended; True when one did."""
        from orderbot.runs.audit import MAX_RESULT  # the log's bound: a side effect settles into the log

        outcome = {c.call_id: c for c in state.calls}
        settled = False
        for call_id, status in list(self.record.side_effects.items()):
            if status == EXECUTING and call_id in outcome:
                done = outcome[call_id]
                ok = done.executed and bool((done.result or {}).get("ok"))
                self.record.side_effects[call_id] = COMMITTED if ok else FAILED
                if ok:
                    self._carried_out.append(call_id)
                result = json.dumps(done.result, ensure_ascii=False, separators=(",", ":"))
                self._bound.setdefault(call_id, (done.name, done.arguments))
                self._steps.append(self._step("executed" if ok else "failed", call_id, result=cut(result, MAX_RESULT)))
                settled = True
        return settled


def _decision_of(record: RunRecord, call_id: str) -> bool | None:
    decision = record.decisions.get(call_id)
    return None if decision is None else decision.approved


def _next_use(call_id: str, earlier: Decision) -> str:
    """The queue's id of a call that reuses `call_id`: call_0@2, then call_0@3, ..."""
    uses = int(earlier.queued_as.rsplit("@", 1)[1]) if earlier.queued_as else 1
    return f"{call_id}@{uses + 1}"


def _stamp(wall: float) -> str:
    """UTC with milliseconds, so that entries of one second still sort as they happened."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + f".{int(wall * 1000) % 1000:03d}Z"


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
