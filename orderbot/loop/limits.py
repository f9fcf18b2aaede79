"""Why a run stops, and the one table of its limits.

Each limit is declared once here: its field in `Limits` and in the settings, its flag, its
environment variable, its name in the REPL's /limits, its default, its bounds, its help
text, and the stop reason it causes. The settings, the command-line options, the REPL and
the error messages all read this table; nothing retypes a limit's name.

Standard library only: `orderbot --help` builds its option help from this table.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class StopReason(StrEnum):
    ANSWERED = "answered"
    STEP_LIMIT = "step_limit"
    TIME_LIMIT = "time_limit"
    TOOL_CALL_LIMIT = "tool_call_limit"
    RESPONSE_TOO_LARGE = "response_too_large"
    RESPONSE_TRUNCATED = "response_truncated"  # the server stopped at the output-token cap
    AWAITING_APPROVAL = "awaiting_approval"
    TRANSFERRED = "transferred"  # a tool handed the conversation to a person
    MODEL_ERROR = "model_error"
    CANCELLED = "cancelled"


class LimitSpec(NamedTuple):
    name: str  # the field of Limits and of the settings
    type: type[int] | type[float]
    default: int | float
    bounds: dict[str, float]  # pydantic's ge/gt/le for the field
    stop: StopReason  # what passing it stops the run with
    help: str  # one sentence, for --help
    flag: str | None = None  # None: set only through the environment
    repl: str | None = None  # its name in the REPL's /limits; None: not changed there
    aliases: tuple[str, ...] = ()  # other words /limits accepts for it

    @property
    def env(self) -> str:
        return f"ORDERBOT_{self.name.upper()}"

    @property
    def shown(self) -> str:
        """How a message names it: the flag, else the environment variable."""
        return self.flag or self.env


LIMIT_SPECS = (
    LimitSpec(
        name="max_steps",
        type=int,
        default=3,
        bounds={"ge": 1, "le": 100},
        stop=StopReason.STEP_LIMIT,
        help="Most model requests in one run.",
        flag="--max-steps",
        repl="steps",
        aliases=("max_steps", "max-steps"),
    ),
    LimitSpec(
        name="timeout",
        type=float,
        default=30.0,
        bounds={"gt": 0, "le": 3600},
        stop=StopReason.TIME_LIMIT,
        help="Wall-clock limit for one run, in seconds.",
        flag="--timeout",
        repl="timeout",
        aliases=("time",),
    ),
    LimitSpec(
        name="max_tool_calls",
        type=int,
        default=6,
        bounds={"ge": 0, "le": 1000},
        stop=StopReason.TOOL_CALL_LIMIT,
        help="Most tool calls in one run.",
        flag="--max-tool-calls",
        repl="calls",
        aliases=("max_tool_calls", "max-tool-calls"),
    ),
    LimitSpec(
        name="max_calls_per_step",
        type=int,
        default=3,
        bounds={"ge": 1, "le": 100},
        stop=StopReason.TOOL_CALL_LIMIT,
        help="Most tool calls the model may ask for in one step.",
        flag="--max-calls-per-step",
        repl="per-step",
        aliases=("per_step", "max_calls_per_step", "max-calls-per-step"),
    ),
    LimitSpec(
        name="max_response_chars",
        type=int,
        default=16_000,
        bounds={"ge": 100, "le": 10_000_000},
        stop=StopReason.RESPONSE_TOO_LARGE,
        help="Most characters in one model response.",
    ),
)
SPEC_OF = {limit.name: limit for limit in LIMIT_SPECS}
# The stops a larger budget could get past: the REPL offers one, `orderbot resume` takes one.
LIMIT_STOPS = frozenset(limit.stop for limit in LIMIT_SPECS)
# Every word the REPL's /limits accepts, to the field it sets.
REPL_WORDS = {word: limit.name for limit in LIMIT_SPECS if limit.repl for word in (limit.repl, *limit.aliases)}

# Fixed, not a setting: the most characters of one tool result sent to the model (its JSON
# text). The run record, transitions and --json keep the same cut result, so an order with a
# 5 MB note costs 8,000 characters everywhere (orderbot.loop.envelope.capped; docs/threat-model.md).
MAX_TOOL_RESULT_CHARS = 8_000
