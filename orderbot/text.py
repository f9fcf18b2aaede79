"""Small text helpers every module shares: one way to cut, to flatten, to turn pydantic's
first validation error into a Phrase, to say why bytes are not text, and to show a URL
without its credentials. No I/O, nothing heavy, no words: a Phrase is said where it is shown."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from orderbot.errors import Phrase

if TYPE_CHECKING:
    from pydantic import ValidationError

ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def limit_value(value: int | float) -> str:
    """A limit as a flag or /limits takes it: 60.0 as 60, 2000000 whole (`:g` would say 2e+06)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def whole_characters(text: str) -> str:
    """`text` with each lone surrogate (half of a character: what Python makes of bytes that
    are not UTF-8, in a command-line argument say) replaced by U+FFFD, so it can be written
    as UTF-8 and as JSON; a proper pair of halves stays the character it is."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def one_line(text: str, limit: int = 120) -> str:
    """All whitespace runs as one space, then cut."""
    return cut(" ".join(text.split()), limit)


def first_error(exc: ValidationError) -> tuple[str, Phrase]:
    """Where pydantic's first error is (a dotted path, "" for the whole value) and what it
    says (validation_phrase). The input is never included: it may be a secret."""
    error = exc.errors(include_url=False, include_input=False)[0]
    return ".".join(map(str, error["loc"])), validation_phrase(error)


def validation_phrase(error) -> Phrase:
    """What one pydantic error says, rebuilt from its structure rather than from its English:
    the catalogue's `pydantic.<type>` (pydantic's own kinds, and the custom kinds orderbot's
    validators raise) with the error's context as its values; pydantic's own words, lower-cased
    to follow a colon, where the catalogue has no such kind."""
    message = error["msg"]
    params = {name: _as_pydantic_shows(value) for name, value in (error.get("ctx") or {}).items()}
    return Phrase(f"pydantic.{error['type']}", params, otherwise=message[:1].lower() + message[1:])


def _as_pydantic_shows(value: object) -> str:
    """A value of an error's context as pydantic's message shows it: a whole float (the
    bound of a float field, `ge=0` kept as 0.0) without its `.0`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def more_problems(exc: ValidationError) -> Phrase | str:
    """` (and 2 more problems)` after the first of a validation's errors; "" for one error."""
    more = exc.error_count() - 1
    return Phrase("error.and_more", {"more": Phrase("count.more_problem", {"count": more})}) if more > 0 else ""


def decode_error(exc: UnicodeDecodeError) -> Phrase:
    """Why bytes are not text in their encoding, built from the exception's parts (`'utf-8'
    codec can't decode byte 0xff in position 0: invalid start byte`, as Python says it); a
    reason the catalogue lacks stays Python's own."""
    reason = Phrase(f"decode.reason.{exc.reason.replace(' ', '_')}", otherwise=exc.reason)
    if exc.end - exc.start == 1:
        byte = f"0x{exc.object[exc.start]:02x}"
        return Phrase("decode.byte", {"codec": exc.encoding, "byte": byte, "position": exc.start, "reason": reason})
    return Phrase("decode.bytes", {"codec": exc.encoding, "start": exc.start, "end": exc.end - 1, "reason": reason})


def invalid_json(exc: ValidationError) -> str | None:
    """Where and why the text is not JSON, in the parser's own words, when pydantic's first
    error is that the input is not JSON at all; None when it parsed and something else is wrong."""
    error = exc.errors(include_url=False, include_input=False)[0]
    if error["type"] != "json_invalid":
        return None
    return str((error.get("ctx") or {}).get("error") or error["msg"])


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}")
_PLAIN_USER = re.compile(r"[A-Za-z0-9._%+-]{1,64}")
UNPARSEABLE_URL = "<unparseable URL>"


POSTGRES_SCHEMES = ("postgresql", "postgres")


def url_scheme(text: str) -> str:
    """The scheme of a URL, in lower case (`sqlite`, `postgresql`); "" for text that is not one."""
    return text.split("://", 1)[0].lower() if "://" in text else ""


def is_postgres(url: str) -> bool:
    return url_scheme(url) in POSTGRES_SCHEMES


def without_credentials(url: str, *, keep_user: bool = False) -> str:
    """`url` as it may be printed, logged or recorded: no password, query or fragment (a
    query may carry a password too), and the user name only with `keep_user`.

    The URL is not trusted to parse. A password holding an unencoded `/` or `@`
    (`postgresql://shop:2024/S3CRET@host/db`) moves where a URL parser thinks the host
    starts, and the password then reads as a port and a path: so everything before the
    last `@` counts as credentials, and of them only a plain user name (letters, digits,
    `. _ % + -`) may be kept. An `@` after a `?` or `#` cannot be placed (the end of a
    password holding `#`, or a value inside the query): then only the scheme is shown.
    Text without `://` is not a URL and comes back as it is."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    if not _SCHEME.fullmatch(scheme):  # `user:pw@host://...`: the "scheme" may be the secret
        return UNPARSEABLE_URL
    head, *tail = re.split(r"[?#]", rest, maxsplit=1)
    if "@" in "".join(tail):
        return f"{scheme}://{ELLIPSIS}"
    credentials, at, place = head.rpartition("@")
    user = credentials.split(":", 1)[0]
    if at and keep_user and _PLAIN_USER.fullmatch(user):
        place = f"{user}@{place}"
    return f"{scheme}://{place}"
