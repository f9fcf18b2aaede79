"""The trust boundary for text: every string from outside passes through `visible` before a
person sees it.

Outside means anything orderbot did not write itself: the model's answer, tool names and
arguments it sent, order fields, the question, run records read back, settings, .env and
error messages that quote any of these. Such text may carry terminal escape sequences (an
OSC title `ESC ] 0 ; … BEL`, colours, OSC-8 links, clear-screen), C1 controls (U+009B is
a one-character CSI), bidi overrides that reorder what is shown (U+202E, U+2066–2069), or
line separators. None of it may reach the terminal raw.

The scheme, the same everywhere:

    C0 controls, DEL, C1 controls      \\x1b  \\x07  \\x9b  (two hex digits)
    format characters (Cf: bidi        \\u202e  \\u2066  \\ufeff  (four hex digits)
    controls, zero-width marks but
    ZWJ), U+2028/2029, surrogates
    a newline, carriage return, tab    \\n  \\r  \\t  in one-line cells (tables, prompts,
                                       error lines); in multi-line text (the answer panel)
                                       newline and tab stay, carriage return is escaped

Backslashes in the data are left as they are. Rich markup in data stays literal because
data is always printed as `rich.text.Text` or with markup off; that is the renderers' part.

Three ways in, all using `visible`:
- `visible(text, one_line=...)`: call it on outside text before it becomes a table cell,
  a panel, a prompt or an error line (so widths and line breaks are computed on what
  will be shown);
- `orderbot.ui.console.SafeConsole` (what `make_console` returns): the last line of defence;
  every piece of text Rich writes passes through `visible` after layout, while the
  colour and cursor codes Rich itself emits for orderbot's styles are kept;
- `json_text(value)`: --json output, with these characters escaped by JSON itself
  (`\\u001b`, `\\u009b`, `\\u202e`, lone surrogates), so it stays valid JSON and safe to
  print; other text (Chinese included) stays readable.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

ALLOWED_FORMAT = frozenset("\u200d")  # ZWJ joins emoji; it cannot move or hide text
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _mark(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    category = unicodedata.category(char)
    return category in ("Cc", "Zl", "Zp", "Cs") or (category == "Cf" and char not in ALLOWED_FORMAT)


def visible(text: object, *, one_line: bool = False) -> str:
    """`text` with every control, bidi and separator character shown as an escape (see
    the module's scheme); `one_line` also escapes newline, carriage return and tab."""
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():  # the usual case, Chinese included: nothing to do
        return text
    out = []
    for char in text:
        if char in _NAMED and (one_line or char == "\r"):
            out.append(_NAMED[char])
        elif char in "\n\t" or not _unsafe(char):
            out.append(char)
        else:
            out.append(_mark(char))
    return "".join(out)


_NOT_ASCII_TEXT = re.compile(r"[^\x20-\x7e\n]")


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """JSON for --json output: C0 controls escaped by json as always, and C1, bidi and
    format characters, line separators and lone surrogates escaped as \\uXXXX too."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _NOT_ASCII_TEXT.sub(_json_escape, text)


def arguments_value(text: str) -> Any:
    """A call's arguments (canonical JSON text, as an approval is bound to it) as the object
    a --json document gives a program; text a store holds that is not JSON stays the text."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _json_escape(match: re.Match) -> str:
    char = match.group()
    if not _unsafe(char):
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a character beyond the BMP is written as its surrogate pair, as JSON does
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
