"""Limits, and the Budget that checks them: every limit rule and its message live here.

`Limits` are the caps of one run (declared in orderbot.limits' table). A `Budget` counts what
one run, or one resumption, has used of them, and the engine asks it before each model
request and before each tool call, as pydantic-ai's `UsageLimits.check_before_request` and
`check_before_tool_call` do. A check that fails raises `LimitExceeded`, whose message names
the number that was passed; the engine turns it into the run's stop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from orderbot.limits import LIMIT, StopReason


def _field(name: str):
    limit = LIMIT[name]
    return Field(limit.default, **limit.bounds)


class Limits(BaseModel):
    max_steps: int = _field("max_steps")
    timeout: float = _field("timeout")
    max_tool_calls: int = _field("max_tool_calls")
    max_calls_per_step: int = _field("max_calls_per_step")
    max_response_chars: int = _field("max_response_chars")


class LimitExceeded(Exception):
    """A limit check failed: the run stops with `reason`, and the message says why."""

    def __init__(self, reason: StopReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Budget:
    """What one run (or one resumption) has used of its limits."""

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock
        self.started = clock()
        self.deadline = self.started + limits.timeout
        self.steps = 0  # model requests made
        self.calls = 0  # tool calls dispatched

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float:
        """Seconds left; the model request's own timeout."""
        return self.deadline - self.clock()

    def exclude(self, seconds: float) -> None:
        """Time that is not the run's (a person deciding an approval) moves the deadline."""
        self.deadline += seconds

    def left(self) -> dict:
        return {
            "steps": self.limits.max_steps - self.steps,
            "tool_calls": self.limits.max_tool_calls - self.calls,
            "seconds": round(max(0.0, self.remaining()), 3),
        }

    # ---- the checks -------------------------------------------------------------------

    def check_before_request(self) -> None:
        if self.remaining() <= 0:
            raise LimitExceeded(
                StopReason.TIME_LIMIT, f"the {self.limits.timeout:g} s time limit passed before the next request"
            )

    def timed_out(self, cause: str | None) -> LimitExceeded:
        """The model request outlived the time left (the provider raised ModelTimeout)."""
        why = f" (last error: {cause})" if cause else ""
        return LimitExceeded(
            StopReason.TIME_LIMIT, f"the model did not answer within the {self.limits.timeout:g} s time limit{why}"
        )

    def check_response(self, size: int) -> None:
        cap = self.limits.max_response_chars
        if size > cap:
            raise LimitExceeded(
                StopReason.RESPONSE_TOO_LARGE, f"the model's response had {size:,} characters, over the {cap:,} cap"
            )

    def check_before_tool_calls(self, names: Sequence[str]) -> None:
        """The calls one step proposes run all or not at all. A call proposed at the last
        allowed step never runs: nobody would read its result."""
        limits, count = self.limits, len(names)
        if self.steps >= limits.max_steps:
            calls = "the call was" if count == 1 else f"the {count} calls were"
            raise LimitExceeded(
                StopReason.STEP_LIMIT,
                f"the model asked for {', '.join(names)} at step {self.steps} of {limits.max_steps}; "
                f"{calls} not executed",
            )
        if count > limits.max_calls_per_step:
            raise LimitExceeded(
                StopReason.TOOL_CALL_LIMIT,
                f"the model asked for {count} tool calls in one step, "
                f"over the cap of {limits.max_calls_per_step}; none were executed",
            )
        if self.calls + count > limits.max_tool_calls:
            raise LimitExceeded(
                StopReason.TOOL_CALL_LIMIT,
                f"{count} more tool calls would pass the run's cap of {limits.max_tool_calls} "
                f"({self.calls} used); none were executed",
            )

    def check_before_tool_call(self) -> None:
        if self.remaining() <= 0:
            raise LimitExceeded(
                StopReason.TIME_LIMIT, f"the {self.limits.timeout:g} s time limit passed during tool calls"
            )
