"""Limits, and the Budget that checks them: every limit rule and its message live here.

`Limits` are the caps of one run (declared in orderbot.loop.limits' table). A `Budget` counts what
one run, or one resumption, has used of them, and the engine asks it before each model
request and before each tool call, as pydantic-ai's `UsageLimits.check_before_request` and
`check_before_tool_call` do. A check that fails raises `LimitExceeded`, whose message names
the number that was passed; the engine turns it into the run's stop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field, create_model

from orderbot.errors import OrderbotError
from orderbot.loop.limits import LIMIT_SPECS, SPEC_OF, StopReason
from orderbot.loop.state import RunState

# The caps of one run: a field per row of the table in orderbot.loop.limits (its name, type,
# default and bounds), so no limit is named twice.
Limits = create_model(
    "Limits",
    __doc__="The caps of one run, one field per limit of orderbot.loop.limits.LIMIT_SPECS.",
    **{spec.name: (spec.type, Field(spec.default, **spec.bounds)) for spec in LIMIT_SPECS},
)


def stopped_by(state: RunState) -> str | None:
    """The limit (its field in Limits) a run stopped at; the id of its stop's message tells
    the two tool-call caps apart. None for a stop no limit caused."""
    stop = state.stop_reason
    if stop is StopReason.TOOL_CALL_LIMIT:
        message_id = (state.stop_message or {}).get("id")  # the stop's phrase, as the record keeps it
        return "max_calls_per_step" if message_id == "detail.calls_per_step" else "max_tool_calls"
    return next((spec.name for spec in LIMIT_SPECS if spec.stop is stop), None)


def continued_limits(limits: Limits, state: RunState) -> Limits:
    """The limits a run stopped at one of `limits` goes on with, wherever it is continued
    (the REPL's `c`, the command `orderbot resume` is given): the limit it stopped at raised
    to twice the run's, at least its default and within its bound; every other limit as the
    run had it. Any other stop keeps the limits: a larger budget would not mend it."""
    name = stopped_by(state)
    if name is None:
        return limits
    spec = SPEC_OF[name]
    return limits.model_copy(update={name: min(max(getattr(limits, name) * 2, spec.default), spec.bounds["le"])})


class LimitExceeded(OrderbotError):
    """A limit check failed: the run stops with `reason`, and its phrase (a `detail.*` id of
    the catalogue and the numbers it names) says why; records and --json keep the phrase."""

    def __init__(self, reason: StopReason, message_id: str, **params: object) -> None:
        super().__init__(message_id, **params)
        self.reason = reason


class Budget:
    """What one run (or one resumption) has used of its limits."""

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock
        self.started = clock()
        self.excluded = 0.0  # seconds that were not the run's own
        self.steps = 0  # model requests made
        self.calls = 0  # tool calls dispatched

    def elapsed(self) -> float:
        """The run's own time: what every view shows beside the time limit."""
        return self.clock() - self.started - self.excluded

    def remaining(self) -> float:
        """Seconds left; the model request's own timeout."""
        return self.limits.timeout - self.elapsed()

    def exclude(self, seconds: float) -> None:
        """Time that is not the run's (a person deciding an approval): it counts neither
        against the time limit nor in the time shown, so what is shown is what is checked."""
        self.excluded += seconds

    def left(self, elapsed: float | None = None) -> dict:
        """What is left of each limit (`elapsed`: the run's time, when already read)."""
        limits = self.limits
        seconds = limits.timeout - (self.elapsed() if elapsed is None else elapsed)
        return {
            "steps": limits.max_steps - self.steps,
            "tool_calls": limits.max_tool_calls - self.calls,
            "seconds": round(seconds, 3) if seconds > 0 else 0.0,
        }

    # ---- the checks -------------------------------------------------------------------

    def check_before_request(self) -> None:
        if self.remaining() <= 0:
            raise LimitExceeded(StopReason.TIME_LIMIT, "detail.time_before_request", seconds=self.limits.timeout)

    def timed_out(self, cause: object) -> LimitExceeded:
        """The model request outlived the time left (the provider raised ModelTimeout)."""
        if cause:
            return LimitExceeded(
                StopReason.TIME_LIMIT, "detail.model_timeout_cause", seconds=self.limits.timeout, cause=cause
            )
        return LimitExceeded(StopReason.TIME_LIMIT, "detail.model_timeout", seconds=self.limits.timeout)

    def check_response(self, size: int, oversize: int | None = None) -> None:
        cap = self.limits.max_response_chars
        if oversize is not None:
            raise LimitExceeded(
                StopReason.RESPONSE_TOO_LARGE, "detail.response_too_large_bytes", bytes=oversize, cap=cap
            )
        if size > cap:
            raise LimitExceeded(StopReason.RESPONSE_TOO_LARGE, "detail.response_too_large", size=size, cap=cap)

    def check_before_tool_calls(self, names: Sequence[str]) -> None:
        """The calls one step proposes run all or not at all. A call proposed at the last
        allowed step never runs: nobody would read its result."""
        limits, count = self.limits, len(names)
        if self.steps >= limits.max_steps:
            raise LimitExceeded(
                StopReason.STEP_LIMIT,
                "detail.step_limit_one" if count == 1 else "detail.step_limit",
                names=", ".join(names),
                step=self.steps,
                max_steps=limits.max_steps,
                count=count,
            )
        if count > limits.max_calls_per_step:
            raise LimitExceeded(
                StopReason.TOOL_CALL_LIMIT, "detail.calls_per_step", count=count, cap=limits.max_calls_per_step
            )
        if self.calls + count > limits.max_tool_calls:
            raise LimitExceeded(
                StopReason.TOOL_CALL_LIMIT, "detail.tool_calls", count=count, cap=limits.max_tool_calls, used=self.calls
            )

    def check_before_tool_call(self) -> None:
        if self.remaining() <= 0:
            raise LimitExceeded(StopReason.TIME_LIMIT, "detail.time_during_tools", seconds=self.limits.timeout)
