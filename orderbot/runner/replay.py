"""Replay: run a recorded run again with today's tools and engine, the model played back
from the record, and report every step that now differs.

It is a regression check for prompt, tool and engine changes: the model's turns are fixed,
so any difference comes from orderbot. The data the run saw is known by its digest: where
replay is given other data (the shop moved on, or the run changed it itself), the recorded
tool results stand in for the tools, unless the person named those orders (a what-if).
Replay never touches real data:
the tools work on a throwaway copy of the orders file. Side effects are settled exactly
as the record says (approved inline, approved or rejected on resume), against that copy;
a run that paused for approval replays up to the pause, and an interruption (Ctrl-C, a
signal) comes again where it came in the record: a person's act, like a decision.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from itertools import zip_longest
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from orderbot.errors import ModelError, ModelResponseError, ModelTimeout, Phrase, RecordError, Terminated
from orderbot.loop.dispatch import Outcome, Prepared, Refused, Toolbox
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.items import ITEMS, FunctionCall, Message
from orderbot.loop.model import Turn, Usage
from orderbot.loop.state import CallRecord, Phase, RunState
from orderbot.loop.tools import ToolContext
from orderbot.loop.transitions import Called, Finished, SignIn, Transition, key
from orderbot.models.scripted import ScriptedModel
from orderbot.runner import Runner
from orderbot.runs.record import RunRecord, bound_call
from orderbot.runs.tagged import read_record
from orderbot.shops.session import DEFAULT_SHOP, Session, session_over
from orderbot.shops.shop import Shop
from orderbot.text import cut

ERRORS = {"ModelTimeout": ModelTimeout, "ModelResponseError": ModelResponseError}


Row = tuple[int, Transition]  # a transition with the index of its segment


@dataclass(frozen=True)
class Difference:
    """One step that now differs from the record, as values (orderbot.ui.replay says it)."""

    step: int


@dataclass(frozen=True)
class CallDiffers(Difference):
    """A call whose decision or result changed, that is new, or that no longer happens."""

    was: CallRecord | None
    now: CallRecord | None


@dataclass(frozen=True)
class StepDiffers(Difference):
    """The first transition that differs (the rest follow from it): as recorded, and now."""

    was: Row | None
    now: Row | None


@dataclass(frozen=True)
class StopDiffers(Difference):
    was: str
    now: str


@dataclass(frozen=True)
class AnswerDiffers(Difference):
    pass


@dataclass
class ReplayReport:
    run_id: str
    state: RunState
    transitions: list[Row]
    differences: list[Difference] = field(default_factory=list)
    notes: list[Phrase] = field(default_factory=list)  # what the report says besides the differences

    @property
    def identical(self) -> bool:
        return not self.differences


class Interruption(NamedTuple):
    """Where a person (Ctrl-C) or a signal stopped one segment of the run: the step, the
    phase (plan: while the model was asked; act: while a call ran or waited for a yes), and
    in the act phase the call it stopped. It is an act of theirs, not of the model's or of
    orderbot's, so replay does it again at the same place, as it settles approvals as recorded."""

    step: int
    phase: Phase
    by_signal: bool
    call_id: str | None = None

    def exception(self) -> BaseException:
        return Terminated() if self.by_signal else KeyboardInterrupt()


def interruptions(record: RunRecord) -> dict[int, Interruption]:
    """Each segment that was cancelled, by its index: from its `finished` transition, else
    (transitions dropped for their size) for the last segment from the run's own state."""
    out: dict[int, Interruption] = {}
    for segment, transition in record.transition_values():
        payload = transition.payload
        if isinstance(payload, Finished) and payload.reason is StopReason.CANCELLED:
            by_signal = payload.message is not None and payload.message.id == "detail.terminated"
            call_id = _interrupted_call(record, transition.step) if transition.from_ is Phase.ACT else None
            out[segment] = Interruption(transition.step, transition.from_, by_signal, call_id)
    last = len(record.segments) - 1
    if record.state.stop_reason is StopReason.CANCELLED and last not in out:
        by_signal = (record.state.stop_message or {}).get("id") == "detail.terminated"
        out[last] = Interruption(record.state.steps, Phase.PLAN, by_signal)
    return out


def _interrupted_call(record: RunRecord, step: int) -> str | None:
    """The first call the model proposed at `step` that has no outcome in the record: the
    one that was running, or waiting for a yes, when the run was stopped."""
    settled = {c.call_id for c in record.state.calls}
    for turn in record.turns:
        if turn.get("step") == step:
            for item in turn.get("items", ()):
                if item.get("type") == "function_call" and item.get("call_id") not in settled:
                    return item["call_id"]
    return None


def playback_model(record: RunRecord, stopped: dict[int, Interruption] | None = None) -> ScriptedModel:
    """A model that returns the recorded turns in order (and raises recorded errors), and is
    interrupted where a segment was stopped while the model was asked (`stopped`, by
    segment: after that segment's turns, before the next one's)."""
    waiting = sorted(
        (i for i in (interruptions(record) if stopped is None else stopped).values() if i.phase is Phase.PLAN),
        key=lambda i: i.step,
    )
    steps: list = []
    causes = _timeout_causes(record)
    for turn in record.turns:
        while waiting and turn.get("step", 0) > waiting[0].step:
            steps.append(waiting.pop(0).exception())
        if "error" in turn:
            steps.append(_recorded_error(turn, causes.get(turn.get("step"))))
            continue
        items = list(ITEMS.validate_python(turn["items"]))
        usage = Usage(**turn["usage"]) if turn.get("usage") else None
        replayed = Turn(tuple(items), usage)
        if turn.get("size", 0) > replayed.size:
            # The record kept the start of an oversized turn: pad it back to its size so the
            # response-size check decides as it did.
            items.append(Message(role="assistant", content=" " * (turn["size"] - replayed.size)))
            replayed = Turn(tuple(items), usage)
        steps.append(replayed)
    steps.extend(i.exception() for i in waiting)
    model = ScriptedModel(steps, name=record.model)
    model.provider = record.provider
    return model


def _recorded_error(turn: dict, cause: object = None) -> ModelError:
    """A failed request as the record kept it: its phrase (older records: its English) and,
    for a time limit, the failure that was being retried (`cause`: where an older record kept
    it only in its stop), so the stop says what it said."""
    message = turn.get("message", "")
    said = Phrase.from_json(message) or str(message)
    kind = ERRORS.get(turn["error"], ModelError)
    if kind is ModelTimeout:
        return ModelTimeout(said, cause=Phrase.from_json(turn.get("cause")) or cause)
    return kind(said)


def _timeout_causes(record: RunRecord) -> dict[int, object]:
    """By step, the failure a time limit stop names as its cause (how older records kept it)."""
    out = {}
    for _, transition in record.transition_values():
        payload = transition.payload
        if isinstance(payload, Finished) and payload.reason is StopReason.TIME_LIMIT and payload.message:
            cause = payload.message.params.get("cause")
            if cause:
                out[transition.step] = cause
    return out


def replay(
    record: RunRecord,
    toolbox: Toolbox,
    *,
    shop: Shop | None = None,
    observers: tuple = (),
    set_time: Callable[[datetime], None] | None = None,
    orders_digest: Callable[[], str | None] | None = None,
    what_if: bool = False,
) -> ReplayReport:
    """Re-run `record` against `toolbox` (give it scratch data) of `shop` and compare. `set_time`,
    if given, is called with each segment's recorded start, so data the tools stamp with the
    time (a cancellation) matches the record.

    `orders_digest` gives the scratch data's digest: where a segment began on other data than
    the record's (the shop changed since, or the run changed it itself), the tools' results
    could differ only because of that, so the segment's recorded results stand in for the
    tools (`what_if`: the tools run on the data anyway, as the person asked), and a note says so.
    """
    if record.dropped.get("turns"):
        raise RecordError("runs.cannot_replay_dropped", run_id=record.run_id)
    if not record.segments:
        raise RecordError("runs.cannot_replay_empty", run_id=record.run_id)
    stopped = interruptions(record)
    interrupted = {i.call_id: i for i in stopped.values() if i.call_id is not None}
    tools = _Replayed(toolbox, record, interrupted)
    runner = Runner(tools, playback_model(record, stopped), shop=shop)
    # A customer named by a sign-in lookup during the run was not the session's: the replay
    # starts without one, so the lookup names them again, as it did.
    user = None if record.state.signed_in else record.state.user
    state = RunState.start(record.state.question, user=user, run_id=record.run_id)
    seen: list[Row] = []
    notes: list[Phrase] = []
    for index, segment in enumerate(record.segments):
        if index and state.stop_reason is StopReason.ANSWERED:
            break  # it answered earlier than recorded: the comparison says so
        if set_time is not None:
            started = datetime.strptime(segment.started_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            # In the recording machine's time zone: the store stamps local time.
            zone = None if segment.utc_offset is None else timezone(timedelta(seconds=segment.utc_offset))
            set_time(started.astimezone(zone))
        other_data = bool(orders_digest and segment.orders_digest) and orders_digest() != segment.orders_digest
        tools.played_back = other_data and not what_if
        if other_data and not notes:  # once: the first part of the run that had other data
            notes.append(_data_note(index, state.steps, what_if))
        approver = _settled_as_recorded(record.approvals, interrupted) if segment.approver else None
        collect = (lambda i: lambda t, s: seen.append((i, t)))(index)
        runner.unrecorded(
            state,
            Limits(**segment.limits),
            views=[collect, *observers],
            approver=approver,
            approve_pending=segment.approve if index else None,
        )
    report = ReplayReport(record.run_id, state, seen)
    report.notes = version_notes(record, toolbox) + notes
    report.differences = compare(record, state, seen)
    return report


def _data_note(segment: int, step: int, what_if: bool) -> Phrase:
    if what_if:
        return Phrase("replay.other_data", {})
    if segment == 0:
        return Phrase("replay.data_changed", {})
    return Phrase("replay.data_changed_at", {"step": step})


def _settled_as_recorded(decisions: dict[str, bool], interrupted: dict[str, Interruption]):
    """The approver of a replay: each inline decision as the person made it, or the Ctrl-C
    they pressed at its prompt."""

    def decide(pending) -> bool:
        if pending.call_id in interrupted:
            raise interrupted[pending.call_id].exception()
        return decisions.get(pending.call_id, False)

    return decide


class Played(NamedTuple):
    """A call's outcome as the record has it, to stand in for the tool's."""

    decision: str
    envelope: dict | None
    signed_in: str | None = None
    handed_off: str | None = None

    @property
    def refused(self) -> bool:
        return self.decision not in ("executed", "rejected")


def played_outcomes(record: RunRecord) -> dict[str, Played]:
    """Each recorded call's decision and result by call id, with the sign-in or hand-off it
    made (the transitions that followed it)."""
    signed_in: dict[str, str] = {}
    handed_off: dict[str, str] = {}
    last = None
    for _, transition in record.transition_values():
        payload = transition.payload
        if isinstance(payload, Called):
            last = payload.call.call_id
        elif isinstance(payload, SignIn) and last is not None:
            signed_in[last] = payload.customer
        elif isinstance(payload, Finished) and payload.reason is StopReason.TRANSFERRED and last is not None:
            handed_off[last] = payload.detail
    return {
        c.call_id: Played(c.decision, c.result, signed_in.get(c.call_id), handed_off.get(c.call_id))
        for c in record.state.calls
        if c.decision != "not_executed"  # it never reached dispatch: nothing to stand in for
    }


class _Replayed(Toolbox):
    """Today's toolbox (the same tools) as replay gives it to the engine: a call that a person
    stopped while it ran is stopped again at the same place; and while `played_back`, each
    call the record settled gets the record's decision and result instead of the tool's.
    Played back, a call the model sent that today's tools no longer accept is still refused
    as today's dispatch refuses it: that is orderbot's own change."""

    def __init__(self, toolbox: Toolbox, record: RunRecord, interrupted: dict[str, Interruption]) -> None:
        super().__init__([toolbox.get(name) for name in toolbox.versions])
        self.interrupted = interrupted
        self.played_back = False
        self._played = played_outcomes(record)
        self._pending = {p.call_id for p in record.state.pending}  # still waiting when it was recorded

    def prepare(self, call: FunctionCall, ctx: ToolContext) -> Prepared | Refused:
        played = self._played.get(call.call_id) if self.played_back else None
        if played is not None and played.refused:
            return Refused(call, played.decision, played.envelope or {})
        tool = self.get(call.name)
        if tool is None or not self.played_back or (played is None and call.call_id not in self._pending):
            return super().prepare(call, ctx)
        try:
            args = tool.args.model_validate_json(call.arguments or "{}")
        except ValidationError:
            return super().prepare(call, ctx)
        # Neither the tool's check nor its description of an approval runs: both read the
        # data, which is not the run's (replay compares no description).
        return Prepared(call, dataclasses.replace(tool, describe=None), args)

    def run(self, prepared: Prepared, ctx: ToolContext) -> Outcome:
        call_id = prepared.call.call_id
        stopped = self.interrupted.get(call_id)
        if stopped is not None:
            raise stopped.exception()
        played = self._played.get(call_id) if self.played_back else None
        if played is not None and played.envelope is not None:
            return Outcome(played.envelope, played.signed_in, played.handed_off)
        return super().run(prepared, ctx)


def version_notes(record: RunRecord, toolbox: Toolbox) -> list[Phrase]:
    notes = []
    for name, version in record.tool_versions.items():
        current = toolbox.versions.get(name)
        if current is None:
            notes.append(Phrase("replay.tool_gone", {"name": name}))
        elif current != version:
            notes.append(Phrase("replay.tool_changed", {"name": name, "was": version, "now": current}))
    return notes


def compare(record: RunRecord, state: RunState, seen: list[Row]) -> list[Difference]:
    diffs: list[Difference] = []
    # Each call by id: what dispatch decided and what came back.
    before = {c.call_id: c for c in record.state.calls}
    after = {c.call_id: bound_call(c) for c in state.calls}
    for call_id in dict.fromkeys([*before, *after]):
        old, new = before.get(call_id), after.get(call_id)
        if old is None or new is None or (old.decision, old.result) != (new.decision, new.result):
            diffs.append(CallDiffers((old or new).step, old, new))
    # The transitions in order, by their values (kind, call, arguments, decision, stop),
    # never by their words: only the first that differs, the rest follow from it; and only
    # when no call difference already explains it.
    if not record.dropped.get("transitions"):
        old_rows = record.transition_values()
        for old_row, new_row in zip_longest(old_rows, seen):
            if _key(old_row) != _key(new_row):
                step = (old_row or new_row)[1].step
                if not any(d.step <= step for d in diffs):
                    diffs.append(StepDiffers(step, old_row, new_row))
                break
    if record.state.stop_reason != state.stop_reason:
        diffs.append(StopDiffers(state.steps, record.status, str(state.stop_reason)))
    elif cut(record.state.answer or "", 200) != cut(state.answer or "", 200):
        diffs.append(AnswerDiffers(state.steps))
    return sorted(diffs, key=lambda d: d.step)


def _key(row: Row | None) -> tuple | None:
    return None if row is None else (row[0], *key(row[1]))


def scratch_session(orders: Path, workdir: Path) -> Session:
    """Today's tools over a throwaway copy of the orders file: replay never writes real data."""
    copy = Path(workdir) / "orders.json"
    shutil.copyfile(orders, copy)
    return session_over(copy, writable=True)


def pin_time(session: Session) -> Callable[[datetime], None]:
    """A `set_time` for `replay` that fixes the scratch store's clock."""

    def set_time(when: datetime) -> None:
        session.store.now = lambda: when

    return set_time


def replay_file(path: Path | str, orders: Path | str | None = None) -> ReplayReport:
    """Load a record file and replay it over a copy of `orders` (default: the default shop's
    sample): recorded runs double as regression fixtures."""

    record = read_record(Path(path))
    with tempfile.TemporaryDirectory(prefix="orderbot-replay-") as tmp:
        session = scratch_session(Path(orders or DEFAULT_SHOP.sample), Path(tmp))
        return replay(
            record,
            session.toolbox,
            shop=session.shop,
            set_time=pin_time(session),
            orders_digest=session.orders_digest,
            what_if=orders is not None,
        )
