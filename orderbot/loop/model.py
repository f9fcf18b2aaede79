"""The model as the loop calls it: one protocol, and the values a request and its reply are.

Every provider in orderbot.models implements `Model`; the engine knows nothing else of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from orderbot.loop.items import FunctionCall, Item, Message, ProviderItem
from orderbot.text import whole_characters

# The values below are named tuples: frozen, and made for every model request at a
# tuple's cost (a frozen dataclass sets each of its fields through object.__setattr__).


class ModelRequest(NamedTuple):
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


class Usage(NamedTuple):
    input_tokens: int = 0
    output_tokens: int = 0


class _TurnFields(NamedTuple):
    items: tuple[Item, ...]
    usage: Usage | None
    truncated: bool  # the server stopped at its output limit: text and calls may be cut
    server_model: str | None  # the model name the server says answered
    fingerprint: str | None  # Chat Completions' system_fingerprint, when sent
    received_bytes: int | None  # of a streamed response, as read from the server
    # Set when one event of a stream, or a whole body, passed this many bytes unfinished:
    # more than a response within the size cap can take, so reading stopped there.
    oversize: int | None
    calls: tuple[FunctionCall, ...]  # derived from the items
    text: str  # the assistant messages' text, derived from the items


class Turn(_TurnFields):
    """What the model said in one request: output items in order, plus usage. Its calls and
    text are derived from the items once, when it is made (`_replace` keeps them).

    Each lone surrogate in what the model said becomes U+FFFD when the turn is made: JSON may
    escape half a character (`"\\ud800"`), and a server or a model can send one; kept, it could
    not be written as UTF-8 (the run's record, the terminal). Most turns hold none."""

    __slots__ = ()

    def __new__(
        cls,
        items: tuple[Item, ...],
        usage: Usage | None = None,
        truncated: bool = False,
        server_model: str | None = None,
        fingerprint: str | None = None,
        received_bytes: int | None = None,
        oversize: int | None = None,
    ) -> Turn:
        for item in items:  # a loop, not all(...): this runs for every turn of every run
            if not _is_whole(item):
                items = tuple(item if _is_whole(item) else _made_whole(item) for item in items)
                break
        calls, texts = [], []  # one pass over the items
        for item in items:
            if isinstance(item, FunctionCall):
                calls.append(item)
            elif isinstance(item, Message) and item.role == "assistant":
                texts.append(item.content)
        fields = (items, usage, truncated, server_model, fingerprint, received_bytes, oversize)
        return super().__new__(cls, *fields, tuple(calls), "\n".join(texts))

    @property
    def size(self) -> int:
        """Characters of text and arguments: what the response size cap measures."""
        return len(self.text) + sum(len(c.arguments) + len(c.name) for c in self.calls)


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _strings(key)
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def _encodes(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_whole(item: Item) -> bool:
    kind = type(item)
    if kind is Message:
        return _encodes(item.content)
    if kind is FunctionCall:
        return _encodes(item.call_id) and _encodes(item.name) and _encodes(item.arguments)
    if isinstance(item, ProviderItem):
        return all(map(_encodes, _strings(item.data)))
    return True


def _whole_value(value: object) -> object:
    if isinstance(value, str):
        return whole_characters(value)
    if isinstance(value, dict):
        return {_whole_value(k): _whole_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_whole_value(v) for v in value]
    return value


def _made_whole(item: Item) -> Item:
    if isinstance(item, Message):
        return item.model_copy(update={"content": whole_characters(item.content)})
    if isinstance(item, FunctionCall):
        fields = ("call_id", "name", "arguments")
        return item.model_copy(update={f: whole_characters(getattr(item, f)) for f in fields})
    if isinstance(item, ProviderItem):
        return item.model_copy(update={"data": _whole_value(item.data)})
    return item


class Model(Protocol):
    provider: str  # "offline", "openai", "chat", ...
    name: str  # the model's name as the provider knows it

    def respond(self, request: ModelRequest) -> Turn:
        """One model request. Raises ModelError (or ModelTimeout) on failure, nothing else."""
        ...
