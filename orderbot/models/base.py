"""The one protocol every model provider implements, and the values it exchanges."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from orderbot.items import FunctionCall, Item, Message


@dataclass(frozen=True)
class ModelRequest:
    instructions: str
    items: Sequence[Item]
    tools: Sequence[dict]
    timeout: float  # seconds left in the run: the request, retries included, must fit in it


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Turn:
    """What the model said in one request: output items in order, plus usage."""

    items: tuple[Item, ...]
    usage: Usage | None = None
    calls: tuple[FunctionCall, ...] = field(init=False)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "calls", tuple(i for i in self.items if isinstance(i, FunctionCall)))
        texts = [i.content for i in self.items if isinstance(i, Message) and i.role == "assistant"]
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
