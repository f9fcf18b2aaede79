"""What the REPL keeps between messages, and how its limits are changed. No I/O.

Each message is its own bounded run; earlier turns are handed to the next run as history,
within a budget: long tool outputs are shortened, and the oldest turns are dropped first
when the total is over. Only complete call/output pairs are carried: a run that stopped
mid-step leaves calls without results, which the model APIs refuse to see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from orderbot.errors import ConfigError
from orderbot.loop.budget import Limits
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, text_chars
from orderbot.loop.limits import LIMIT_SPECS, REPL_WORDS
from orderbot.text import first_error, limit_value

MAX_HISTORY_CHARS = 12_000
MAX_HISTORY_TURNS = 20
MAX_OUTPUT_CHARS = 600  # of one carried tool output
SHORTENED = "…[shortened]"


@dataclass
class Conversation:
    max_chars: int = MAX_HISTORY_CHARS
    max_turns: int = MAX_HISTORY_TURNS
    max_output_chars: int = MAX_OUTPUT_CHARS
    turns: list[list[Item]] = field(default_factory=list)

    def add(self, items: list[Item]) -> None:
        """Keep one finished turn: the items its run added after the history it was given."""
        kept = carry(items, self.max_output_chars)
        if kept:
            self.turns.append(kept)

    def history(self) -> list[Item]:
        """The newest turns that fit the budget, oldest first."""
        chosen: list[list[Item]] = []
        total = 0
        for turn in reversed(self.turns[-self.max_turns :]):
            size = sum(map(text_chars, turn))
            if total + size > self.max_chars:
                break
            chosen.append(turn)
            total += size
        return [item for turn in reversed(chosen) for item in turn]

    def reset(self) -> None:
        self.turns.clear()

    @classmethod
    def of(cls, items: list[Item]) -> Conversation:
        """The conversation a recorded run held (its history and its own turn), one turn per
        question: what `ask --continue` carries on, within the same budget as the REPL."""
        conversation = cls()
        turn: list[Item] = []
        for item in items:
            if isinstance(item, Message) and item.role == "user" and turn:
                conversation.add(turn)
                turn = []
            turn.append(item)
        if turn:
            conversation.add(turn)
        return conversation


def carry(items: list[Item], max_output_chars: int = MAX_OUTPUT_CHARS) -> list[Item]:
    """Messages, and calls that have an output (outputs shortened). Provider items such as
    reasoning are dropped: they belong to the request that produced them."""
    called = {i.call_id for i in items if isinstance(i, FunctionCall)}
    answered = {i.call_id for i in items if isinstance(i, FunctionCallOutput)}
    complete = called & answered
    kept: list[Item] = []
    for item in items:
        if isinstance(item, Message) or isinstance(item, FunctionCall) and item.call_id in complete:
            kept.append(item)
        elif isinstance(item, FunctionCallOutput) and item.call_id in complete:
            kept.append(shorten(item, max_output_chars))
    return kept


def shorten(output: FunctionCallOutput, limit: int) -> FunctionCallOutput:
    if len(output.output) <= limit:
        return output
    return output.model_copy(update={"output": output.output[: limit - len(SHORTENED)] + SHORTENED})


# ---- /limits --------------------------------------------------------------------------

# The limits /limits changes, by their REPL name (orderbot.loop.limits' table).
REPL_NAMES = {limit.name: limit.repl for limit in LIMIT_SPECS if limit.repl}
_PAIR = re.compile(r"^([a-z_-]+)=(\S+)$")


def parse_limits(text: str, current: Limits) -> Limits:
    """`steps=5 timeout=20 calls=4 per-step=2` applied to `current`; ConfigError if not valid."""
    changes: dict[str, str] = {}
    for word in text.split():
        match = _PAIR.match(word.lower())
        if not match or match.group(1) not in REPL_WORDS:
            raise ConfigError("repl.not_a_limit", word=repr(word))
        changes[REPL_WORDS[match.group(1)]] = match.group(2)
    try:
        return Limits(**{**current.model_dump(), **changes})
    except ValidationError as exc:
        where, what = first_error(exc)
        name = REPL_NAMES.get(where, where) or "limits"
        raise ConfigError("settings.bad_value", source=name, why=what) from None


def format_limits_short(limits: Limits, since: Limits | None = None) -> str:
    """`steps=3 timeout=30 calls=6 per-step=3`: what /limits takes. With `since`, only the
    limits that differ from it, a cap /limits does not change named by its variable."""
    if since is None:
        return " ".join(f"{repl}={limit_value(getattr(limits, name))}" for name, repl in REPL_NAMES.items())
    changed = [spec for spec in LIMIT_SPECS if getattr(limits, spec.name) != getattr(since, spec.name)]
    return " ".join(f"{spec.repl or spec.env}={limit_value(getattr(limits, spec.name))}" for spec in changed)
