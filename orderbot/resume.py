"""Resuming a stored run: every re-check before its state is trusted again, then the run.

A record on disk is old state. Before it continues, the session user must be the run's,
every tool must be the version the run used, an approval must not have expired, the
action must still be possible, and no approved call may have been left half-done. Only
then does orderbot.runner continue it, with a fresh budget, appending to the same record.
"""

from __future__ import annotations

from orderbot.engine import PendingCall, StopReason
from orderbot.errors import RecordError
from orderbot.items import FunctionCall
from orderbot.limits import LIMIT_STOPS
from orderbot.runs import COMMITTED, EXECUTING, RunRecord
from orderbot.tools import Refused, Toolbox, ToolContext

RESUMABLE = LIMIT_STOPS | {StopReason.AWAITING_APPROVAL, StopReason.MODEL_ERROR, StopReason.CANCELLED}


def check_resume(
    record: RunRecord, toolbox: Toolbox, *, user: str | None, approve: bool | None, now: float, ttl_hours: float
) -> None:
    """Every re-check before a stored run is trusted again; the first failure is raised
    as a RecordError that names it. Nothing runs before all of them pass."""
    state, rid = record.state, record.run_id
    unsure = [c for c, s in record.side_effects.items() if s == EXECUTING]
    if unsure:
        raise RecordError(
            f"run {rid} stopped while an approved call ({unsure[0]}) was being carried out; it may "
            "have been done. Check the order; this run will not be resumed"
        )
    reason = state.stop_reason
    if reason is None:
        raise RecordError(f"run {rid} did not finish cleanly (the process was killed); start a new run")
    if reason is StopReason.ANSWERED:
        raise RecordError(f"run {rid} already answered; there is nothing to resume")
    if reason not in RESUMABLE:
        raise RecordError(f"run {rid} stopped with {reason}; it cannot be resumed")
    if state.user != user:
        owner = f"user {state.user}" if state.user else "an anonymous session"
        hint = " (pass --user)" if user is None else ""
        raise RecordError(
            f"run {rid} belongs to {owner}, not to {f'user {user}' if user else 'an anonymous session'}"
            f"{hint}; nothing was executed"
        )
    for name, version in record.tool_versions.items():
        current = toolbox.versions.get(name)
        if current is None:
            raise RecordError(f"run {rid} used the tool {name}, which is no longer available")
        if current != version:
            raise RecordError(
                f"the tool {name} changed since run {rid} (version {version} → {current}); the run will not be resumed"
            )
    if reason is not StopReason.AWAITING_APPROVAL:
        if approve is not None:
            raise RecordError(
                f"run {rid} is not waiting for approval (it stopped with {reason}); drop --approve/--reject"
            )
        return
    if approve is None:
        raise RecordError(f"run {rid} is waiting for approval: pass --approve or --reject")
    for pending in state.pending:
        _check_pending(rid, record, pending, toolbox, now, ttl_hours, approve)


def _check_pending(
    rid: str, record: RunRecord, pending: PendingCall, toolbox: Toolbox, now: float, ttl_hours: float, approve: bool
) -> None:
    if record.side_effects.get(pending.call_id) == COMMITTED:
        raise RecordError(
            f"{pending.name} ({pending.call_id}) of run {rid} was already carried out; it will not run again"
        )
    tool = toolbox.get(pending.name)
    if tool is None or tool.version != pending.version:
        raise RecordError(
            f"the tool {pending.name} changed since the approval was requested; the run will not be resumed"
        )
    age = now - pending.requested_at
    if age > ttl_hours * 3600:
        raise RecordError(
            f"the approval request of run {rid} expired: it was made {age / 3600:.1f} h ago "
            f"and approvals last {ttl_hours:g} h; ask again"
        )
    if not approve:
        return  # saying no needs no preconditions: nothing will run
    call = FunctionCall(call_id=pending.call_id, name=pending.name, arguments=pending.arguments)
    prepared = toolbox.prepare(call, ToolContext(user=record.state.user, run_id=rid))
    if isinstance(prepared, Refused):
        raise RecordError(
            f"{pending.description} can no longer be done: {prepared.envelope.get('error')}; nothing was executed"
        )
    if prepared.canonical_arguments != pending.arguments:
        raise RecordError(f"the approval of run {rid} no longer matches its call; nothing was executed")
