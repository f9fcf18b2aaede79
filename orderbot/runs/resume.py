"""Resuming a stored run: every re-check before its state is trusted again, then the run.

A record on disk is old state, and untrusted input: RunStore.load has already checked its
integrity tag and that it is the run its file is named after. Before it continues, the
session user must be the run's (a customer the run signed in by a lookup needs no --user,
and no other may be given), every tool must be the version the run used, each waiting
call must be, field for field, the call the model made in the recorded conversation, an
approval must be neither expired nor dated in the future, the action must still be
possible, and no approved call may have been left half-done. Only then does orderbot.runner
continue it, with a fresh budget, appending to the same record.
"""

from __future__ import annotations

import math

from pydantic import ValidationError

from orderbot.errors import OperatorRefused, Phrase, RecordError, RunFinished, UsageError
from orderbot.loop.dispatch import Prepared, Refused, Toolbox
from orderbot.loop.engine import StopReason
from orderbot.loop.items import FunctionCall
from orderbot.loop.limits import LIMIT_STOPS
from orderbot.loop.state import PendingCall
from orderbot.loop.tools import ToolContext
from orderbot.runs.record import COMMITTED, EXECUTING, Decision, RunRecord
from orderbot.shops.source import parse_source

# How far in the future a request may seem to have been made: clocks of machines sharing a
# state directory drift a little; a record dated further ahead was altered.
CLOCK_SKEW = 300.0  # seconds
RESUMABLE = LIMIT_STOPS | {StopReason.AWAITING_APPROVAL, StopReason.MODEL_ERROR, StopReason.CANCELLED}


def check_resume(
    record: RunRecord, toolbox: Toolbox, *, user: str | None, approve: bool | None, now: float, ttl_hours: float
) -> None:
    """Every re-check before a stored run is trusted again; the first failure is raised
    as a RecordError that names it. Nothing runs before all of them pass."""
    state, rid = record.state, record.run_id
    if record.pruned_at:
        raise RecordError("runs.pruned", run_id=rid, at=record.pruned_at)
    unsure = [c for c, s in record.side_effects.items() if s == EXECUTING]
    if unsure:
        raise RecordError("resume.unsure", run_id=rid, call_id=unsure[0])
    reason = state.stop_reason
    if reason is None:
        raise RecordError("resume.killed", run_id=rid)
    if approve is not None and reason is not StopReason.AWAITING_APPROVAL:
        _refuse_if_settled_by_another(record)
    if reason is StopReason.ANSWERED:
        raise RunFinished("resume.answered", run_id=rid)
    if reason not in RESUMABLE:
        raise RunFinished("resume.not_resumable", run_id=rid, reason=reason)
    if state.signed_in and user is not None and user != state.user:
        raise RecordError("resume.signed_in_other", run_id=rid, customer=state.user, user=user)
    if state.user != user and not (state.signed_in and user is None):
        owner = Phrase("resume.user", {"user": state.user}) if state.user else Phrase("resume.anonymous")
        asker = Phrase("resume.user", {"user": user}) if user else Phrase("resume.anonymous")
        hint = Phrase("resume.pass_user") if user is None else ""
        raise RecordError("resume.not_yours", run_id=rid, owner=owner, asker=asker, hint=hint)
    for name, version in record.tool_versions.items():
        current = toolbox.versions.get(name)
        if current is None:
            raise RecordError("resume.tool_gone", run_id=rid, tool=name)
        if current != version:
            raise RecordError("resume.tool_changed", run_id=rid, tool=name, was=version, now=current)
    if reason is not StopReason.AWAITING_APPROVAL:
        if approve is not None:  # what was typed does not fit the run: as --approve missing is
            raise UsageError("resume.not_waiting", run_id=rid, reason=reason)
        return
    if approve is None:
        raise UsageError("resume.waiting", run_id=rid)  # --approve or --reject: what to type
    for pending in state.pending:
        _check_pending(rid, record, pending, toolbox, now, ttl_hours, approve)


def _refuse_if_settled_by_another(record: RunRecord) -> None:
    """One who comes to approve or reject a run that no longer waits because somebody settled
    it meanwhile (two approvers at once: the second finds the run carried on, even answered)
    is refused as a person who came second, not told of a broken record."""
    if any(d.approved is not None for d in record.decisions.values()):
        raise OperatorRefused(settled_first(record))


def check_decider(
    record: RunRecord,
    *,
    operator: str,
    approve: bool | None,
    four_eyes: bool,
    approvers: frozenset[str] | None = None,
) -> None:
    """Whether `operator` may settle what the run waits for, before anything else is
    checked or claimed: a call someone already settled is theirs (the sentence names them);
    with four eyes the operator who started the run, or whose run asked, may not approve;
    when the store lists approvers, only they may. Rejecting is open to every operator.
    A call this operator approved before whose claim landed but which never started is let
    through, to be carried out now."""
    if approve is None:
        return
    rid = record.run_id
    for pending in record.state.pending:
        decision = record.decisions.get(pending.call_id)
        if decision is None or decision.approved is None:
            continue
        mine = decision.decided_by == operator and decision.approved and approve
        if not (mine and pending.call_id not in record.side_effects):
            raise OperatorRefused(settled_first(record, pending.call_id))
    if not approve:
        return
    if approvers is not None and operator not in approvers:
        raise OperatorRefused("approvals.not_an_approver", operator=operator, run_id=rid)
    if four_eyes:
        asked = {record.operator} | {
            (record.decisions.get(p.call_id) or Decision()).requested_by for p in record.state.pending
        }
        asked |= {s.on_behalf_of for s in record.segments if s.on_behalf_of}  # an MCP client of theirs asked
        if operator in asked:
            raise OperatorRefused("approvals.four_eyes", operator=operator, run_id=rid)


def settled_first(record: RunRecord, call_id: str | None = None) -> Phrase:
    """Who settled a call of the run first: `call_id`, else the one decided last."""
    decided = {c: d for c, d in record.decisions.items() if d.approved is not None}
    if call_id is None:
        if not decided:
            return Phrase("runs.changed_elsewhere", {"run_id": record.run_id})
        call_id = max(decided, key=lambda c: decided[c].decided_at or "")
    decision = decided[call_id]
    tool = next((c.name for c in record.state.calls if c.call_id == call_id), None)
    tool = tool or next((p.name for p in record.state.pending if p.call_id == call_id), call_id)
    verb = Phrase("runs.verb_approved") if decision.approved else Phrase("runs.verb_rejected")
    return Phrase(
        "runs.settled_first",
        {
            "run_id": record.run_id,
            "tool": tool,
            "verb": verb,
            "by": decision.decided_by or "?",
            "at": decision.decided_at or "?",
        },
    )


def _check_pending(
    rid: str, record: RunRecord, pending: PendingCall, toolbox: Toolbox, now: float, ttl_hours: float, approve: bool
) -> None:
    if record.side_effects.get(pending.call_id) == COMMITTED:
        raise RecordError("resume.carried_out", run_id=rid, tool=pending.name, call_id=pending.call_id)
    tool = toolbox.get(pending.name)
    if tool is None or tool.version != pending.version:
        raise RecordError("resume.tool_changed_since_asked", tool=pending.name)
    mismatch = binding_mismatch(record, pending, tool)
    if mismatch:
        raise RecordError("resume.mismatch", run_id=rid, why=mismatch)
    if not math.isfinite(pending.requested_at) or pending.requested_at > now + CLOCK_SKEW:
        raise RecordError("resume.future", run_id=rid)
    age = now - pending.requested_at
    if age > ttl_hours * 3600:
        raise RecordError("resume.expired", run_id=rid, hours=f"{age / 3600:.1f}", ttl=f"{ttl_hours:g}")
    if not approve:
        return  # saying no needs no preconditions: nothing will run
    call = FunctionCall(call_id=pending.call_id, name=pending.name, arguments=pending.arguments)
    prepared = toolbox.prepare(call, ToolContext(user=record.state.user, run_id=rid, step=pending.step))
    if isinstance(prepared, Refused):
        action = Phrase.from_text(pending.description) or pending.description
        raise RecordError("resume.no_longer", action=action, why=prepared.envelope.get("error"))
    if prepared.canonical_arguments != pending.arguments:
        raise RecordError("resume.no_longer_matches", run_id=rid)


def binding_mismatch(record: RunRecord, pending: PendingCall, tool) -> Phrase | None:
    """What differs between a waiting call and the call the model made, or None.

    The waiting call must equal, field for field (call id, tool name, canonical arguments,
    tool version, step, user), the function call in the recorded conversation and in the
    recorded model turn of its step, which no call record may already have settled."""
    state = record.state
    if pending.user != state.user:
        return Phrase("resume.why_user")
    if pending.version != record.tool_versions.get(pending.name):
        return Phrase("resume.why_version")
    made = [i for i in state.items if isinstance(i, FunctionCall) and i.call_id == pending.call_id]
    if len(made) != 1:
        return Phrase("resume.why_no_call") if not made else Phrase("resume.why_twice")
    call = made[0]
    if call.name != pending.name:
        return Phrase("resume.why_name")
    if canonical_arguments(tool, call.arguments) != pending.arguments:
        return Phrase("resume.why_arguments")
    if any(c.call_id == pending.call_id for c in state.calls):
        return Phrase("resume.why_settled")
    turns = [t for t in record.turns if t.get("step") == pending.step]
    made_in_turn = [
        i
        for t in turns
        for i in t.get("items", ())
        if i.get("type") == "function_call" and i.get("call_id") == call.call_id
    ]
    if [(i.get("name"), i.get("arguments")) for i in made_in_turn] != [(call.name, call.arguments)]:
        return Phrase("resume.why_turn")
    return None


def canonical_arguments(tool, raw: str) -> str | None:
    """The arguments as dispatch would bind them (see tools.Prepared), None if invalid."""

    try:
        args = tool.args.model_validate_json(raw or "{}")
    except ValidationError:
        return None
    return Prepared(FunctionCall(call_id="", name=tool.name, arguments=raw), tool, args).canonical_arguments


def recorded_orders(record: RunRecord) -> str | None:
    """The orders source the run acted on (as recorded: orderbot.shops.source.source_identity), if
    it is still there and still the same one (Source.fingerprint); otherwise a RecordError
    saying to name it with --orders. None for a run recorded without one (Python API)."""

    rid = record.run_id
    if not record.orders:
        return None
    source = parse_source(record.orders)
    found = source.fingerprint
    if found is None:
        raise RecordError("resume.orders_gone", run_id=rid, source=source.shown)
    if record.orders_identity is not None and found != record.orders_identity:
        raise RecordError("resume.orders_replaced", run_id=rid, source=source.shown)
    return record.orders
