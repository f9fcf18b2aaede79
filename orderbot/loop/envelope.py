"""Result envelopes: what the model is told a call came to, as JSON, within the size cap.

Every call's result reaches the model as `{"ok": true, "data": ...}` or
`{"ok": false, "error": "...", "code": "..."}`; an error's text has passed the sanitiser.
`capped` keeps the text of one result under `MAX_TOOL_RESULT_CHARS` and still valid JSON.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from orderbot.loop.limits import MAX_TOOL_RESULT_CHARS
from orderbot.loop.redact import sanitize


def ok(data: Any) -> dict:
    return {"ok": True, "data": data}


def fail(code: str, message: str) -> dict:
    return {"ok": False, "error": sanitize(message), "code": code}


# How a string cut by `capped` ends, in the model's input and everywhere the result is shown.
CUT = "…[cut]"

# The standard library's encoder, made once (json.dumps with options builds one per call).
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    """`value` as compact JSON text, non-ASCII characters kept: how results are sent to the
    model and summarised. pydantic's serializer writes it several times faster than the
    standard library on the small values of every call; the standard library's, which keeps
    a lone surrogate (from an orders file's escapes) where UTF-8 has none, when it cannot."""
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        return _COMPACT.encode(value)


def envelope_text(envelope: dict) -> str:
    return compact_json(envelope)


def capped(envelope: dict, limit: int = MAX_TOOL_RESULT_CHARS) -> tuple[dict, str]:
    """`envelope` and its JSON text, or when that text is longer than `limit` characters, a
    copy that fits and its text (returned with it: the text is what the model is sent, and
    encoding it again would cost every tool call a second pass).

    The cut copy stays a valid envelope (the model reads JSON, and a half string would not
    parse): every string longer than some length is cut to it with a visible `…[cut]`
    ending, and `"truncated": true` with a `note` tells the model what happened. When even
    short strings do not fit (a list of thousands of items), the data becomes the start of
    its own JSON text, as one string, under the same marker."""
    text = envelope_text(envelope)
    if len(text) <= limit:
        return envelope, text
    note = f"this result was cut to {limit:,} characters from {len(text):,}; strings ending in {CUT} were shortened"
    budget = limit - len(note) - 64  # the marker fields and their quotes

    def cut(value: Any, keep: int) -> Any:
        if isinstance(value, str):
            return value if len(value) <= keep else value[:keep] + CUT
        if isinstance(value, dict):
            return {k: cut(v, keep) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v, keep) for v in value]
        return value

    low, high, best = 16, budget, None  # the longest string length that still fits
    while low <= high:
        keep = (low + high) // 2
        candidate = cut(envelope, keep)
        if len(envelope_text(candidate)) <= budget:
            best, low = candidate, keep + 1
        else:
            high = keep - 1
    if best is None:
        body = {k: v for k, v in envelope.items() if k not in ("data", "error")}
        inner = envelope_text(envelope.get("data", envelope.get("error")))
        keep = budget - len(envelope_text(body)) - 16
        while True:  # JSON escapes quotes inside the string: shrink until it fits
            best = {**body, "data": inner[: max(keep, 0)] + CUT}
            over = len(envelope_text(best)) - budget
            if over <= 0 or keep <= 0:
                break
            keep -= over
    best = {**best, "truncated": True, "note": note}
    return best, envelope_text(best)
