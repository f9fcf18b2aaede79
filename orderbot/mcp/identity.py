"""Who a request to `orderbot mcp --http` comes from: the principal its bearer token names.

Three kinds of token, each told by its shape:
- the one shared token of ORDERBOT_MCP_TOKEN (what --allow-remote asked for before tokens
  named anyone): it lets a client in and names nobody;
- a token of the run store (`orderbot mcp tokens add`, orderbot.runs.tokens): it names one
  customer or one operator, and is refused from the moment it is revoked or expires; only
  its hash is looked up;
- a JWT of the shop's own identity provider (orderbot.mcp.jwts), when the server was given
  its keys.

`Authenticator.required()` says whether a request without a token is refused: when the
shared token is set, an identity provider is configured, or the run store holds any token
(revoked and expired ones too: revoking the last token does not open the server). The run
store is read on every request, so a revocation or a new token counts at the next one.

No MCP SDK here (orderbot.mcp.server speaks HTTP), and the token itself is kept nowhere:
a principal names a token by its id.
"""

from __future__ import annotations

import contextlib
import hmac
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from orderbot.errors import RecordError
from orderbot.mcp.sessions import Principal
from orderbot.runs.base import BaseRunStore
from orderbot.runs.tokens import epoch, looks_like_a_token, token_hash

SHARED = Principal(key="", label="the shared token")


class Verifier(Protocol):
    def claims(self, credential: str) -> bool:
        """Whether the credential has this verifier's shape (then only it decides)."""

    def principal(self, credential: str) -> Principal | None:
        """Whom the credential names, or None when it is not valid (now)."""


class SharedToken:
    """The one token of ORDERBOT_MCP_TOKEN, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    def claims(self, credential: str) -> bool:
        return True

    def principal(self, credential: str) -> Principal | None:
        return SHARED if hmac.compare_digest(credential.encode(), self._token) else None


class StoreTokens:
    """The run store's tokens: looked up by hash, refused once revoked or expired at
    `clock()` (seconds since the epoch). The store's connection is this verifier's own
    (`open()` makes it), used by one request at a time, and made again once when it fails
    (a database restarted under a long-running server); a store that still cannot answer
    raises RecordError, and the request is refused with 503."""

    def __init__(self, open_store: Callable[[], BaseRunStore], *, clock: Callable[[], float] = time.time) -> None:
        self._open = open_store
        self._store: BaseRunStore | None = open_store()
        self._clock = clock
        self._lock = threading.Lock()

    def claims(self, credential: str) -> bool:
        return looks_like_a_token(credential)

    def principal(self, credential: str) -> Principal | None:
        token = self._asked(lambda store: store.token(token_hash(credential)))
        if token is None or token.revoked_at is not None:
            return None
        if token.expires_at is not None and epoch(token.expires_at) <= self._clock():
            return None
        if token.customer is not None:
            label = f"customer {token.customer}, token {token.id}"
        else:
            label = f"operator {token.operator}, token {token.id}"
        return Principal(key=f"token:{token.id}", customer=token.customer, operator=token.operator, label=label)

    def exist(self) -> bool:
        return self._asked(lambda store: store.tokens_exist())

    def _asked(self, question):
        with self._lock:
            try:
                if self._store is None:
                    self._store = self._open()
                return question(self._store)
            except RecordError:
                self._drop()
            self._store = self._open()  # once more, on a new connection
            try:
                return question(self._store)
            except RecordError:
                self._drop()
                raise

    def _drop(self) -> None:
        if self._store is not None:
            with contextlib.suppress(Exception):
                self._store.close()
            self._store = None

    def close(self) -> None:
        with self._lock:
            self._drop()


class Authenticator:
    """Whom a request's bearer token names, by the first verifier whose shape it has."""

    def __init__(self, verifiers: Sequence[Verifier], *, tokens: StoreTokens | None = None, always: bool = False):
        self._verifiers = list(verifiers)
        self._tokens = tokens
        self._always = always
        self._ever = False  # tokens, once seen, never go away (revoked ones count)

    def required(self) -> bool:
        """Whether a request without a token is refused."""
        if self._always or self._ever:
            return True
        if self._tokens is not None and self._tokens.exist():
            self._ever = True
        return self._ever

    def principal(self, credential: str) -> Principal | None:
        """Whom `credential` names, or None: not a token this server accepts (now)."""
        for verifier in self._verifiers:
            if verifier.claims(credential):
                return verifier.principal(credential)
        return None

    def close(self) -> None:
        if self._tokens is not None:
            self._tokens.close()
