"""The one place that composes a run: every command that runs the engine comes through here.

A run is wired in this order, and only here:

1. the session: the orders source, its tools, its shop (what the model is told, the words its facts
   are read in), the user, the settings (orderbot.shops.session);
2. the model, wrapped by the recorder, which keeps each turn for replay;
3. the approver, guarded by the recorder, which notes a side effect as `executing` on disk
   before a yes is carried out (so a crash mid-call can never lead to running it twice);
4. the observers, in one fixed order (see `observers`):
     a. the recorder (disk): the record is on disk before anything is shown (and current
        at the moments that matter: start, around a side effect, stop; see orderbot.runs);
     b. the views (screen: the transitions table, the trace, the REPL's step lines),
        in the order the command gives them;
5. the Engine, which runs the loop and calls the observers after each transition;
6. after the run, its outcome computed once: the facts of its tool results and the claim check
   of its answer (orderbot.answers), as one `RunResult` that every view reads; the claims are
   kept in the record too.

`Runner.start` begins a recorded run, `Runner.resume` continues a recorded one (a paused
approval or a limit stop, from `orderbot resume` or the REPL's "continue"), and
`Runner.unrecorded` runs without a record (replay plays a record back; it must not write
one; orderbot.runner.replay drives it). Commands shrink to: flags → settings → runner → render →
exit code.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from orderbot import telemetry
from orderbot.answers.claims import Claim, check
from orderbot.answers.facts import Fact, facts_of
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.model import Model
from orderbot.loop.state import Approver, RunState
from orderbot.loop.transitions import Observer
from orderbot.runs.base import BaseRunStore
from orderbot.runs.record import RunRecord
from orderbot.runs.recorder import Recorder
from orderbot.shops.shop import PLAIN, Shop, Vocabulary


class RunResult(NamedTuple):
    """What a run came to, computed once when it stops: the state it ended in, the facts of
    its tool results, the unsupported claims of its answer, and its record (None when the run
    was not recorded). The screen, --json and the exit code all read this."""

    state: RunState
    facts: tuple[Fact, ...]
    claims: tuple[Claim, ...]
    record: RunRecord | None = None

    @property
    def record_id(self) -> str | None:
        return self.record.run_id if self.record is not None else None


def result_of(state: RunState, vocabulary: Vocabulary, record: RunRecord | None = None) -> RunResult:
    """The outcome of a stopped run (or of a stored one, from its calls), read in its shop's
    words: the one place facts and claims are computed."""
    facts = tuple(facts_of(state, vocabulary))
    claims = check(state.answer, list(facts), state.calls, vocabulary=vocabulary)
    return RunResult(state, facts, tuple(claims), record)


def observers(
    recorder: Recorder | None, views: Iterable[Observer] = (), telemetry: Observer | None = None
) -> list[Observer]:
    """The observers of a run, in their one fixed order: disk, then telemetry (an OpenTelemetry
    trace, when on: orderbot.telemetry), then screen."""
    return [*([recorder] if recorder is not None else []), *([telemetry] if telemetry else []), *views]


@dataclass
class Runner:
    """What every run of one command shares: the tools, the model, where records go."""

    toolbox: Toolbox
    model: Model
    store: BaseRunStore | None = None  # None: runs are not recorded (replay)
    provider: str = ""
    base_url: str | None = None  # where the model's requests go (stripped), kept in each record
    orders: Path | str | None = None  # the orders file, named in each record
    shop: Shop | None = None  # the session's: what the model is told, the words facts are read in
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
    telemetry: Callable[[], Observer] | None = None  # makes one tracing observer per run
    orders_digest: Callable[[], str | None] | None = None  # the orders' digest now, kept as each segment begins

    @classmethod
    def for_session(
        cls,
        session,
        model: Model,
        store: BaseRunStore,
        *,
        provider: str,
        base_url: str | None = None,
        otel: bool = False,
    ) -> Runner:
        """A runner over a session (orderbot.shops.session.Session): its tools and its orders file;
        runs are traced when `otel` (--otel) or OTEL_EXPORTER_OTLP_ENDPOINT asks for it."""

        return cls(
            session.toolbox,
            model,
            store,
            provider=provider,
            base_url=base_url,
            orders=session.source.identity,
            shop=session.shop,
            telemetry=telemetry.setup(otel, provider=provider, model=model.name),
            orders_digest=session.orders_digest,
        )

    def engine(
        self,
        limits: Limits,
        *,
        recorder: Recorder | None = None,
        views: Sequence[Observer] = (),
        approver: Approver | None = None,
    ) -> Engine:
        """The only construction of an Engine outside the tests."""
        model = recorder.wrap(self.model) if recorder is not None else self.model
        return Engine(
            model,
            self.toolbox,
            limits,
            clock=self.clock,
            wall_clock=self.wall_clock,
            observers=observers(recorder, views, self.telemetry() if self.telemetry else None),
            approver=recorder.guard(approver) if recorder is not None else approver,
            instructions=self.shop.instructions if self.shop is not None else "",
        )

    def start(
        self,
        state: RunState,
        limits: Limits,
        *,
        kind: str = "ask",
        views: Sequence[Observer] = (),
        approver: Approver | None = None,
        on_behalf_of: str | None = None,
    ) -> RunResult:
        """Run a new `state` to its stop, recording it from the first transition; `on_behalf_of`:
        the operator it runs for, when another program runs it (an MCP client's token's)."""
        recorder = Recorder.start(
            self._store(),
            state,
            provider=self.provider,
            model=self.model.name,
            base_url=self.base_url,
            toolbox=self.toolbox,
            limits=limits,
            orders=self.orders,
            shop=self.shop.name if self.shop is not None else None,
            kind=kind,
            interactive=approver is not None,
            wall_clock=self.wall_clock,
            orders_digest=self._digest(),
            on_behalf_of=on_behalf_of,
        )
        return self._run(recorder, state, limits, views=views, approver=approver)

    def resume(
        self,
        record: RunRecord,
        limits: Limits,
        *,
        approve: bool | None = None,
        reason: str | None = None,
        kind: str = "resume",
        views: Sequence[Observer] = (),
        approver: Approver | None = None,
    ) -> RunResult:
        """Continue a stored run with a fresh budget, appending to its record. Whoever calls
        this has re-checked the record (orderbot.runs.resume.check_resume) when it came from disk.
        `approve` settles the calls the run is waiting for, as the store's operator (a
        rejection with `reason`): the decision is saved first (the claim: a shared store
        refuses it when another operator settled the run first), then approved calls are
        noted `executing` before they run."""
        store = self._store()
        recorder = Recorder(store, record, wall_clock=self.wall_clock)
        record.begin(
            kind,
            limits,
            approve=approve,
            approver=approver is not None,
            operator=store.operator,
            now=self.wall_clock(),
            orders_digest=self._digest(),
        )
        if approve is not None and record.state.pending:
            recorder.settle(approve, reason=reason)
        return self._run(recorder, record.state, limits, views=views, approver=approver, approve_pending=approve)

    def unrecorded(
        self,
        state: RunState,
        limits: Limits,
        *,
        views: Sequence[Observer] = (),
        approver: Approver | None = None,
        approve_pending: bool | None = None,
    ) -> RunResult:
        """Run `state` with no record written (replay plays a record back)."""
        self.engine(limits, views=views, approver=approver).run(state, approve_pending=approve_pending)
        return result_of(state, self.vocabulary)

    def _run(
        self, recorder: Recorder, state: RunState, limits: Limits, *, views, approver, approve_pending=None
    ) -> RunResult:
        engine = self.engine(limits, recorder=recorder, views=views, approver=approver)
        try:
            engine.run(state, approve_pending=approve_pending)
            result = result_of(state, self.vocabulary, recorder.record)
            recorder.record.claims = [claim.as_dict() for claim in result.claims]
        finally:
            recorder.close()  # the final write: a pause's stop reason comes after its last transition
        return result

    @property
    def vocabulary(self) -> Vocabulary:
        return self.shop.vocabulary if self.shop is not None else PLAIN

    def _digest(self) -> str | None:
        return self.orders_digest() if self.orders_digest is not None else None

    def _store(self) -> BaseRunStore:
        if self.store is None:
            raise ValueError("this runner records nothing: it was made without a RunStore")
        return self.store
