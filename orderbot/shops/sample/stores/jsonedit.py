"""Changing a few fields of one order inside orders.json without re-encoding the file.

Re-encoding a million orders costs seconds and rewrites every number and date in
orderbot's style rather than the file's. Instead, the order's object is found in the
bytes, its top-level members are located with the standard JSON decoder, and only the
changed values are replaced (or appended, in the style of the members already there).
Everything outside those values keeps its exact bytes.

The object is accepted only if it decodes to exactly the order that was loaded, so a
look-alike inside a string can never be edited. When the order cannot be found that way
(its key written with escapes, say) `set_fields` returns None and the caller rewrites
the whole document.
"""

from __future__ import annotations

import json
import re
from typing import Any

from orderbot.shops.sample.model import ORDER, Order

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
MAX_OBJECT_BYTES = 1 << 20  # an order's object larger than this is not edited in place
MAX_TRIES = 64  # candidate "{" positions tried before giving up


def set_fields(raw: bytes, order: Order, fields: dict[str, Any]) -> bytes | None:
    """`raw` with `fields` set in the object of `order`, or None if it cannot be done exactly."""
    found = _find_object(raw, order)
    if found is None:
        return None
    start, text = found
    members = _members(text)
    if members is None or len(members) < 2:
        return None
    ascii_only = text.isascii() and "\\u" in text
    by_key = {key: (value_start, value_end) for key, _, _, value_start, value_end in members}
    edits: list[tuple[int, int, str]] = []
    appended = ""
    # Separators as this object already writes them: between members, and after a key.
    _, last_key_start, _, _, last_end = members[-1]
    between = text[members[-2][4] : last_key_start]
    after_key = text[members[0][2] : members[0][3]]
    for key, value in fields.items():
        encoded = json.dumps(value, ensure_ascii=ascii_only)
        if key in by_key:
            edits.append((*by_key[key], encoded))
        else:
            appended += between + json.dumps(key, ensure_ascii=ascii_only) + after_key + encoded
    if appended:
        edits.append((last_end, last_end, appended))
    for begin, end, replacement in sorted(edits, reverse=True):
        text = text[:begin] + replacement + text[end:]
    old_length = len(found[1].encode())
    return raw[:start] + text.encode() + raw[start + old_length :]


def _find_object(raw: bytes, order: Order) -> tuple[int, str] | None:
    """(byte offset, text) of the one object in `raw` that decodes to `order`."""
    key = re.compile(rb'"order_id"\s*:\s*' + re.escape(json.dumps(order.order_id, ensure_ascii=False).encode()))
    matches = key.finditer(raw)
    hit = next(matches, None)
    if hit is None or next(matches, None) is not None:
        return None
    position = hit.start()
    for _ in range(MAX_TRIES):
        position = raw.rfind(b"{", max(0, hit.start() - MAX_OBJECT_BYTES), position)
        if position < 0:
            return None
        window = raw[position : position + MAX_OBJECT_BYTES].decode("utf-8", "ignore")
        try:
            value, end = _DECODER.raw_decode(window)
        except ValueError:
            continue
        text = window[:end]
        if (
            isinstance(value, dict)
            and value.get("order_id") == order.order_id
            and position + len(text.encode()) > hit.end()
            and _same_order(value, order)
        ):
            return position, text
    return None


def _same_order(value: dict, order: Order) -> bool:
    try:
        return ORDER.validate_python(value) == order
    except ValueError:
        return False


def _members(text: str) -> list[tuple[str, int, int, int, int]] | None:
    """(key, key start, key end, value start, value end) of each top-level member of an object."""
    members = []
    at = _SPACE.match(text, 1).end()
    if text[at] == "}":
        return members
    while True:
        if text[at] != '"':
            return None
        key, key_end = _DECODER.raw_decode(text, at)
        colon = _SPACE.match(text, key_end).end()
        if text[colon] != ":":
            return None
        value_start = _SPACE.match(text, colon + 1).end()
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append((key, at, key_end, value_start, value_end))
        at = _SPACE.match(text, value_end).end()
        if text[at] == "}":
            return members
        if text[at] != ",":
            return None
        at = _SPACE.match(text, at + 1).end()
