"""The one sanitiser: what any message sent to the model may say.

A tool's error, a refusal or a provider's failure can quote a path, a URL, a key or a stack
trace. Everything that goes back to the model as an error passes `sanitize` first, so none of
these ever reaches it.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from orderbot.text import one_line

MAX_ERROR_CHARS = 300

# Redaction patterns, applied in this order by `sanitize`. Each replaces the whole match
# with a placeholder, so the model learns that something was there but not what.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\).*", re.S)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.?)", re.S)


@functools.cache  # compiled on the first failure: a run where nothing fails never pays the ~10 ms
def _redactions() -> tuple[tuple[re.Pattern[str], str], ...]:
    return (
        (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
        (re.compile(r"\b(bearer)(\s+)[^\s,;]+", re.I), r"\1\2<redacted>"),
        (re.compile(r"\b(authorization|token|basic|cookie)(\s*[:=]\s*)[^\s,;]+", re.I), r"\1\2<redacted>"),
        (
            re.compile(
                r"\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)(\s*[=:]\s*)[^\s,;]+",
                re.I,
            ),
            r"\1\2<redacted>",
        ),
        (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "<email>"),
        (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<address>"),
        (
            re.compile(
                r"\[[0-9a-f:.%]*:[0-9a-f:.%]*\w*\](?::\d+)?"
                r"|(?<![\w:])(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])"
                r"|(?<![\w:])(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?"
                r"|::[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)(?:%\w+)?(?![\w:])",
                re.I,
            ),
            "<address>",
        ),
        (
            re.compile(
                r"\b(?:localhost|[\w-]+(?:\.[\w-]+)*\.(?:internal|local|localdomain|lan|corp|intranet|home|private|svc|cluster))"
                r"(?::\d+)?\b|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{2,5}\b",
                re.I,
            ),
            "<host>",
        ),
        (re.compile(r"(?:\b[A-Za-z]:|\\\\[\w.$-]+)\\(?:[^\\/:*?\"<>|\r\n]+\\)*[^\\/:*?\"<>|\s]*"), "<path>"),
        (
            re.compile(r"(?<![\w.~-])~?/(?:[\w.~@+%-]+/)*[\w.~@+%-]+/?|\b(?:[\w.-]+[/\\])+[\w.-]+\.[A-Za-z]\w{0,5}\b"),
            "<path>",
        ),
        (
            re.compile(
                r"\b(?:sk|pk|rk|api|key|tok|ghp|gho|ghs|github_pat|glpat|xox[a-z]?)[-_][A-Za-z0-9_-]{6,}"
                r"|\bAKIA[0-9A-Z]{12,}|\beyJ[\w-]+\.[\w-]+(?:\.[\w-]+)?|[A-Za-z0-9_+/=-]{32,}",
                re.I,
            ),
            "<redacted>",
        ),
    )


# Characters that are not text: C0/C1 controls, format characters (bidi overrides,
# zero-width), private use, surrogates, line and paragraph separators.
_NOT_TEXT = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))
_TRAILING_TOKEN = re.compile(r"[\w+/=.:@\\~%-]*$", re.ASCII)


def sanitize(message: object, limit: int = MAX_ERROR_CHARS) -> str:
    """Make any message safe to send to the model: the one place that does it.

    Drops tracebacks, terminal escapes and control characters, keeps the first line,
    replaces URLs, credentials, e-mail and network addresses, internal host names, paths
    and key-like strings with placeholders, and bounds the length.
    """
    text = _TRACEBACK.sub("", str(message))
    text = _ANSI.sub("", text)
    text = next((line for line in text.splitlines() if line.strip()), "")
    bound = max(limit * 4, 1000)  # regexes run on bounded text; a token cut here is dropped whole
    if len(text) > bound:
        text = _TRAILING_TOKEN.sub("", text[:bound])
    text = "".join(" " if unicodedata.category(ch) in _NOT_TEXT else ch for ch in text)
    for pattern, placeholder in _redactions():
        text = pattern.sub(placeholder, text)
    return one_line(text, limit) or "error"
