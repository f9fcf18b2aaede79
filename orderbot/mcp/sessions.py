"""The sessions of one server: one orderbot session (orderbot.mcp.session.McpSession) per
client, each with its own customer, call window, chain of runs and open questions.

A client is told apart by what its transport gives: over standard input/output there is one
(the `default` session); over streamable HTTP, a handshake-era connection by its
`Mcp-Session-Id`, a stateless 2026-07-28 request by the principal its bearer token names
(a token of the run store, or a JWT's issuer and subject). A session nobody has used for
`idle` seconds ends: its open questions are settled as rejected, its run in progress is
closed, and a later request on the same connection is told that the session has ended (a
principal simply starts a new one).

No MCP SDK here (orderbot.mcp.server reads the keys off its requests).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from orderbot.mcp.session import McpSession

IDLE = 1800.0  # seconds: a session nobody has used for this long ends (the MCP SDK's own default)
ENDED_KEPT = 10_000  # connections whose session ended for idleness, remembered so that they are told so


@dataclass(frozen=True)
class Principal:
    """Who a bearer token names: a customer or an operator (at most one of them; neither for
    the one shared token of ORDERBOT_MCP_TOKEN). `key` tells it apart from every other
    principal (a run-store token's id, a JWT's issuer and subject; empty for the shared token,
    which names nobody); `label` is how records and logs name it (never the token)."""

    key: str = ""
    customer: str | None = None
    operator: str | None = None
    label: str = ""

    @property
    def distinct(self) -> bool:
        """Whether it tells one client apart from others (the shared token does not)."""
        return bool(self.key)


class Sessions:
    """The live sessions of a server, made by `make(principal)` on a client's first call and
    ended by `sweep` once idle (`clock`: monotonic seconds, injected by tests)."""

    def __init__(
        self,
        make: Callable[[Principal | None], McpSession],
        *,
        idle: float = IDLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._make = make
        self.idle = idle
        self._clock = clock
        self._lock = threading.Lock()
        self._live: dict[tuple[str, str], McpSession] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._gone: McpSession | None = None
        self._default: McpSession | None = None

    @property
    def default(self) -> McpSession:
        """The session of the one client of standard input/output (and of in-process tests)."""
        with self._lock:
            if self._default is None:
                self._default = self._make(None)
            return self._default

    def of_connection(self, connection: str, principal: Principal | None) -> McpSession:
        """The session of a handshake-era connection (its Mcp-Session-Id), made on its first
        call; one that ended for idleness answers every call with `session_ended`."""
        with self._lock:
            if connection in self._ended:
                if self._gone is None:
                    self._gone = self._make(None)
                    self._gone.close()
                return self._gone
            return self._session(("connection", connection), principal)

    def of_principal(self, principal: Principal) -> McpSession:
        """The session of an authenticated principal's stateless requests, made on its first
        call (again after an earlier one ended)."""
        with self._lock:
            return self._session(("principal", principal.key), principal)

    def _session(self, key: tuple[str, str], principal: Principal | None) -> McpSession:
        session = self._live.get(key)
        if session is None:
            session = self._live[key] = self._make(principal)
        return session

    def end(self, connection: str) -> None:
        """The client ended its connection (an HTTP DELETE): its session ends now."""
        with self._lock:
            session = self._live.pop(("connection", connection), None)
        if session is not None:
            session.close()

    def sweep(self) -> int:
        """End every session idle for `idle` seconds or more (nothing under way, no call for
        that long); how many ended. Blocks while their runs close (call it off the event loop)."""
        now = self._clock()
        with self._lock:
            idle = [(key, s) for key, s in self._live.items() if s.idle_for(now) >= self.idle]
            for key, _ in idle:
                del self._live[key]
                if key[0] == "connection":
                    self._ended[key[1]] = None
                    while len(self._ended) > ENDED_KEPT:
                        self._ended.popitem(last=False)
        for _, session in idle:
            session.close()
        return len(idle)

    def __len__(self) -> int:
        return len(self._live)

    def close(self, *, interrupted: type[KeyboardInterrupt] | None = None) -> None:
        """The server ends: every session closes (as `McpSession.close`)."""
        with self._lock:
            sessions = [*self._live.values(), *filter(None, [self._default])]
            self._live.clear()
        for session in sessions:
            session.close(interrupted=interrupted)
