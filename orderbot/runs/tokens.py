"""Bearer tokens of `orderbot mcp --http`, kept in the run store so that every server of a
team reads the same list (orderbot.runs.sql, table run_tokens from schema version 5).

A token names one customer (a client bound to her: a chat widget in front of her) or one
operator (a client that acts as that operator: four eyes as for a desk). It is shown once,
when it is made, and the store keeps only its SHA-256: a token is 32 random bytes, so the
hash cannot be turned back into it, and a lookup by hash finds it (what GitHub and others do
with their tokens). A token is refused from the moment it is revoked or expires.

With PostgreSQL no operator reads or writes run_tokens: the store owner's functions add one
(an operator token only in the name of the role that logged in, or by the owner), check a
presented token's hash, list them without their hashes, and revoke one (only its maker, the
operator it names, or the owner): orderbot.runs.postgres_sql.
"""

from __future__ import annotations

import calendar
import hashlib
import re
import secrets
import time
from typing import NamedTuple

from orderbot.errors import Phrase, UsageError

PREFIX = "obt_"  # orderbot's tokens read as such in a log or a config someone pastes them into
TOKEN = re.compile(r"obt_[A-Za-z0-9_-]{43}")
DURATION = re.compile(r"(\d+(?:\.\d+)?)([mhdw])")
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

COLUMNS = "id, customer, operator, created_by, created_at, expires_at, revoked_at, revoked_by"  # never the hash
INSERT = (
    "INSERT INTO run_tokens (id, hash, customer, operator, created_by, created_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
BY_HASH = f"SELECT {COLUMNS} FROM run_tokens WHERE hash = ?"
BY_ID = f"SELECT {COLUMNS} FROM run_tokens WHERE id = ?"
LISTED = f"SELECT {COLUMNS} FROM run_tokens ORDER BY created_at, id"
REVOKE = "UPDATE run_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL"
ANY = "SELECT 1 FROM run_tokens LIMIT 1"


class Token(NamedTuple):
    """A token as the store lists it (a row of run_tokens): who it names and its dates,
    never the secret nor its hash."""

    id: str
    customer: str | None
    operator: str | None
    created_by: str
    created_at: str  # UTC, ISO 8601
    expires_at: str | None
    revoked_at: str | None = None
    revoked_by: str | None = None

    def state(self, now: float) -> str:
        """active, revoked or expired, at `now` (seconds since the epoch)."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and epoch(self.expires_at) <= now:
            return "expired"
        return "active"

    def as_dict(self, now: float) -> dict:
        return {**self._asdict(), "state": self.state(now)}


def new_token() -> str:
    """A new secret: 32 random bytes, URL-safe, with orderbot's prefix."""
    return PREFIX + secrets.token_urlsafe(32)


def new_id() -> str:
    """A token's public id, what `tokens list` and `tokens revoke` name it by."""
    return secrets.token_hex(6)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like_a_token(credential: str) -> bool:
    return TOKEN.fullmatch(credential) is not None


def utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def epoch(stamp: str) -> float:
    """Seconds since the epoch of a UTC time as utc() writes it (a broken one: long past)."""
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, OverflowError):
        return 0.0


def expiry(value: str, now: float) -> str:
    """`--expires`: a time from now (90m, 12h, 30d, 2w) or a UTC date or time
    (2027-01-31, 2027-01-31T18:00:00Z); the UTC time it names, in the future."""
    text = value.strip()
    matched = DURATION.fullmatch(text)
    if matched:
        at = now + float(matched.group(1)) * UNITS[matched.group(2)]
    else:
        at = None
        for pattern in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%MZ"):
            try:
                at = calendar.timegm(time.strptime(text, pattern))
                break
            except ValueError:
                continue
        if at is None:
            raise UsageError("tokens.bad_expiry", value=repr(text[:40]))
    if at <= now:
        raise UsageError("tokens.expiry_past", value=repr(text[:40]))
    return utc(at)


def maker_refused(me: str, operator: str | None) -> Phrase | None:
    """Why `me` may not make a token for `operator`: an operator's token is made only in
    that operator's own name (PostgreSQL: or by the store's owner), so that no desk mints a
    token that acts as another desk. None when it may."""
    if operator is not None and operator != me:
        return Phrase("tokens.for_another", {"operator": me, "named": operator})
    return None


def revoker_refused(me: str, token: Token) -> Phrase | None:
    """Why `me` may not revoke `token`: only its maker or the operator it names may
    (PostgreSQL: or the store's owner). None when it may."""
    if me not in (token.created_by, token.operator):
        return Phrase("tokens.not_yours_to_revoke", {"operator": me, "id": token.id})
    return None
