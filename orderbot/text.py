"""Small text helpers every module shares: one way to cut, to count, to flatten, and to
turn pydantic's first validation error into a sentence. No I/O, nothing heavy."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def one_line(text: str, limit: int = 120) -> str:
    """All whitespace runs as one space, then cut."""
    return cut(" ".join(text.split()), limit)


def plural(count: int, noun: str) -> str:
    """`1 step`, `2 steps`, `1,500 characters`: English nouns that take an s."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def first_error(exc: ValidationError) -> tuple[str, str]:
    """Where pydantic's first error is (a dotted path, "" for the whole value) and what it
    says, lower-cased to follow a colon. The input is never included: it may be a secret."""
    error = exc.errors(include_url=False, include_input=False)[0]
    message = error["msg"]
    return ".".join(map(str, error["loc"])), message[:1].lower() + message[1:]
