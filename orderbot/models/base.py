"""The one protocol every model provider implements, and the values it exchanges."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from orderbot.loop.items import FunctionCall, Item, Message


@dataclass(frozen=True)
class ModelRequest:
    instructions: str
    items: Sequence[Item]
    tools: Sequence[dict]
    timeout: float  # seconds left in the run: the request, retries included, must fit in it
    # Called with each piece of answer text as it streams in (the terminal shows it token by
    # token); a provider that does not stream never calls it. It must not raise.
    on_text: Callable[[str], None] | None = None
    # Called before each retry with (reason, seconds until it, its attempt number, attempts
    # at most), so a terminal can show it as it happens. It must not raise.
    on_retry: Callable[[str, float, int, int], None] | None = None


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Turn:
    """What the model said in one request: output items in order, plus usage."""

    items: tuple[Item, ...]
    usage: Usage | None = None
    truncated: bool = False  # the server stopped at its output limit: text and calls may be cut
    server_model: str | None = None  # the model name the server says answered
    fingerprint: str | None = None  # Chat Completions' system_fingerprint, when sent
    received_bytes: int | None = None  # of a streamed response, as read from the server
    # Set when one event of a stream, or a whole body, passed this many bytes unfinished:
    # more than a response within the size cap can take, so reading stopped there.
    oversize: int | None = None
    calls: tuple[FunctionCall, ...] = field(init=False)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        calls, texts = [], []  # one pass over the items: a turn is made for every model request
        for item in self.items:
            if isinstance(item, FunctionCall):
                calls.append(item)
            elif isinstance(item, Message) and item.role == "assistant":
                texts.append(item.content)
        object.__setattr__(self, "calls", tuple(calls))  # derived once, as the frozen fields are set
        object.__setattr__(self, "text", "\n".join(texts))

    @property
    def size(self) -> int:
        """Characters of text and arguments: what the response size cap measures."""
        return len(self.text) + sum(len(c.arguments) + len(c.name) for c in self.calls)


class Model(Protocol):
    provider: str  # "offline", "openai", "chat", ...
    name: str  # the model's name as the provider knows it

    def respond(self, request: ModelRequest) -> Turn:
        """One model request. Raises ModelError (or ModelTimeout) on failure, nothing else."""
        ...


# A token is about four characters of English (Chinese runs closer to one or two), so this
# many output tokens fill about the response-size cap: the server stops generating near
# where orderbot would refuse the response anyway.
CHARS_PER_TOKEN = 4


def output_token_cap(settings) -> int:
    """The output-token cap sent with every request (max_output_tokens / max_tokens):
    ORDERBOT_MAX_OUTPUT_TOKENS when set, else derived from the response-size limit."""
    if settings.max_output_tokens is not None:
        return settings.max_output_tokens
    return max(256, settings.max_response_chars // CHARS_PER_TOKEN)


def server_name(value: object) -> str | None:
    """A name the server gave (its model, its fingerprint), kept only as short printable
    text: it is shown by `runs show` and nothing from a server reaches the terminal raw."""
    if not isinstance(value, str):
        return None
    text = "".join(ch for ch in value[:200] if ch.isprintable()).strip()
    return text or None


PLACEHOLDER_ARGUMENTS = "{}"


def replayable(arguments: str) -> str:
    """Arguments as they may go back to a provider in the history: a JSON object's text,
    or `{}` when the model wrote something else. Servers such as llama.cpp refuse a whole
    request whose history holds unparseable arguments; the original text stays in the run
    record, and the model still gets the `invalid_json` result for that call."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return PLACEHOLDER_ARGUMENTS
    return arguments if isinstance(parsed, dict) else PLACEHOLDER_ARGUMENTS
