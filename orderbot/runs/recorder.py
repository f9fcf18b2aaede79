"""The engine observer that writes a run's record, and the model wrapper that keeps each turn
for replay (orderbot.runs.record says when a record is written)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from orderbot.errors import ModelError
from orderbot.loop.engine import Limits
from orderbot.loop.state import Approver, PendingCall, RunState, Transition
from orderbot.loop.tools import Toolbox
from orderbot.models.base import Model, ModelRequest, Turn
from orderbot.runs.record import COMMITTED, EXECUTING, FAILED, RunRecord
from orderbot.runs.store import RunStore


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
