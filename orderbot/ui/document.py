"""What `--json` prints of a run: one document, the transitions and (with `--trace`) one
record per step, the same records the `--trace` panels draw (orderbot.ui.trace).

Plain data, no Rich: a run printed as JSON imports none of the views that draw one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING

from orderbot.loop.engine import Limits
from orderbot.loop.state import Event, PendingCall, Phase, RunState
from orderbot.loop.transitions import Awaiting, Called, Finished, Recorded, Transition
from orderbot.runs.record import utc_iso
from orderbot.ui.describe import action_value
from orderbot.ui.escape import arguments_value

if TYPE_CHECKING:
    from orderbot.runner import RunResult


class Transitions:
    """An engine observer that keeps the run's transitions and draws nothing: how a run is
    watched when it is printed as JSON or as its answer alone. An approval prompt pauses it
    as it pauses a drawn view (there is nothing to pause)."""

    def __init__(self) -> None:
        self.transitions: list[Transition] = []

    def __call__(self, transition: Transition, state: RunState) -> None:
        self.transitions.append(transition)

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield


def json_document(
    result: RunResult,
    transitions: list[Transition],
    *,
    provider: str,
    model: str,
    limits: Limits,
    exit_code: int | None,
    trace: bool = False,
    facts: bool = True,
) -> dict:
    state = result.state
    doc = {
        "run_id": state.run_id,
        "stop_reason": str(state.stop_reason) if state.stop_reason else None,
        "stop_detail": state.stop_detail or None,
        "stop_message": state.stop_message,
        "exit_code": exit_code,
        "answer": state.answer,
        "partial_answer": state.partial_answer,
        "question": state.question,
        "user": state.user,  # the customer the run is about
        "operator": result.record.operator if result.record is not None else None,  # who ran orderbot
        "provider": provider,
        "model": model,
        "limits": limits.model_dump(),
        "steps": state.steps,
        "tool_calls": state.tool_calls,
        "usage": None
        if state.input_tokens is None
        else {"input_tokens": state.input_tokens, "output_tokens": state.output_tokens},
        "calls": [asdict(c) for c in state.calls],
        "pending": [pending_document(p) for p in state.pending],
        "transitions": [t.as_dict() for t in transitions],
        "claims": [claim.as_dict() for claim in result.claims],
    }
    if facts:
        doc["facts"] = [fact.as_dict() for fact in result.facts]
    if trace:  # the --trace panels' content, one record per step
        doc["trace"] = trace_steps(transitions)
    return doc


def pending_document(pending: PendingCall) -> dict:
    """A call waiting for a person as --json gives it: its arguments an object, its time ISO
    8601 UTC as in every --json document (the record keeps the clock's float for expiry)."""
    return pending.model_dump() | {
        "arguments": arguments_value(pending.arguments),
        "description": action_value(pending.description),
        "requested_at": utc_iso(pending.requested_at),
    }


# ---- transitions -> step records (pure) -----------------------------------------------

# Why a call never ran when the record holds no stop (a process killed mid-step): a code, as
# a stop reason names why one never ran after a stop.
STOPPED_BEFORE = "stopped_before"


def trace_steps(transitions: list[Transition]) -> list[dict]:
    """One record per step, in order. A step ends when its results go back to the model,
    when the run finishes, or when it pauses for approval."""
    steps: list[dict] = []
    current: dict | None = None
    previous_end = 0.0
    for t in transitions:
        if t.from_ == Phase.START:
            previous_end = t.elapsed
            continue
        if current is None:
            current = _new_step(t.step)
        _absorb(current, t)
        if ends_step(t):
            steps.append(_close(current, t, previous_end))
            previous_end, current = t.elapsed, None
    if current is not None:  # the record of a process killed mid-step
        steps.append(_close(current, transitions[-1], previous_end))
    return steps


def _new_step(step: int) -> dict:
    return {
        "step": step,
        "sent": None,
        "request_ms": None,
        "usage": None,
        "proposed": [],
        "text": None,
        "outcomes": [],
        "calls": [],
        "stop": None,
        "budget_left": None,
        "ms": None,
        "steps_used": 0,
        "calls_used": 0,
        "elapsed": 0.0,
        "phases": [],
    }


def _absorb(rec: dict, t: Transition) -> None:
    payload = t.payload
    rec["phases"].append([str(t.from_), str(t.to)])
    request = getattr(payload, "request", None)  # a proposal's, or that of the request a run stopped after
    if request is not None:
        sent = request.as_json()
        for key in ("sent", "request_ms", "usage", "proposed", "text"):
            rec[key] = sent[key]
    if not isinstance(payload, Recorded):
        rec["budget_left"] = t.budget_left
    rec["steps_used"], rec["calls_used"], rec["elapsed"] = t.steps_used, t.calls_used, round(t.elapsed, 3)
    if isinstance(payload, Called):
        decision = "approved" if t.kind is Event.APPROVED else payload.decision
        rec["outcomes"].append(
            {
                **payload.call.as_json(),
                "decision": decision,
                "why": _why(decision, payload.result),
                "result": payload.result,
                "ms": payload.ms,
            }
        )
    elif isinstance(payload, Awaiting):
        for pending in payload.pending:
            rec["outcomes"].append(
                {
                    "call_id": pending.call_id,
                    "name": pending.name,
                    "arguments": _loads(pending.arguments),
                    "decision": "needs_approval",
                    "why": action_value(pending.description),
                    "result": None,
                    "ms": None,
                }
            )
    elif isinstance(payload, Finished):
        rec["stop"] = {"reason": str(payload.reason), "detail": payload.detail}
        if payload.message:  # the detail as a catalogue id: the panel shows it in the UI language
            rec["stop"]["message"] = payload.message.as_json()
    elif isinstance(payload, Recorded) and t.kind is Event.FINISHED:
        rec["stop"] = {"reason": payload.event, "detail": payload.detail}


def ends_step(t: Transition) -> bool:
    return t.to in (Phase.FINISH, Phase.AWAITING) or (t.from_ == Phase.OBSERVE and t.to == Phase.PLAN)


def _close(rec: dict, last: Transition, previous_end: float) -> dict:
    """Pair each proposed call with what became of it. A call with no outcome in a finished
    step never ran: the engine stopped first (a limit, the clock, or Ctrl-C)."""
    outcomes = list(rec.pop("outcomes"))
    stop = rec["stop"]
    for proposed in rec["proposed"]:
        match = next((o for o in outcomes if o["call_id"] == proposed["call_id"]), None)
        if match is not None:
            outcomes.remove(match)
            rec["calls"].append(match)
        else:
            why = stop["reason"] if stop else STOPPED_BEFORE
            rec["calls"].append({**proposed, "decision": "not_executed", "why": why, "result": None, "ms": None})
    rec["calls"].extend(outcomes)  # settled approvals from an earlier run: proposed back then
    rec["ms"] = round((last.elapsed - previous_end) * 1000, 1)
    return rec


def _why(decision: str, result: dict | None) -> str:
    if decision in ("executed", "approved") or not result:
        return ""
    return str(result.get("error", ""))


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text
