"""The model of an MCP session: the host's model, whose tool calls arrive over MCP.

`orderbot mcp` (orderbot.mcp) runs each session as an ordinary run, and the engine asks this
model for the next step like any other: `respond` hands the result of the call in flight
back to the client that sent it, then waits for the client's next call and proposes it. So
every call the host makes goes through the engine's limits, dispatch, approval and record,
as a run's does. When the session ends (or a run of it is resumed after an approval, when no
client waits any more) the model answers instead, and the run stops as answered.

Standard library only: the MCP SDK lives in orderbot.mcp.server, never here.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from orderbot.loop.items import FunctionCall, FunctionCallOutput, assistant
from orderbot.loop.model import ModelRequest, Turn

# The answer of a session's last run, once the client has closed it: the built-in stand-in for
# the model's own words, so fixed English like all the model writes.
SESSION_ENDED = "The MCP session ended; its calls and their results are above."


class Ticket:
    """One call of the client in flight: the call the engine is given, and, once the engine
    has dealt with it, the output the model would have read (the bounded envelope text)."""

    def __init__(self, call: FunctionCall, on_done: Callable[[], None] = lambda: None) -> None:
        self.call = call
        self.output: str | None = None
        self.done = False
        self._on_done = on_done

    def answer(self, output: str | None) -> None:
        self.output, self.done = output, True
        self._on_done()


class BusyClock:
    """A monotonic clock that stands still while the session waits for its client: the
    time limit of an MCP session bounds orderbot's own work, not the hours a host may sit
    idle between two calls."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._idle = 0.0
        self._since: float | None = None
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            now = self._clock() if self._since is None else self._since
            return now - self._idle

    def idle(self) -> None:
        with self._lock:
            if self._since is None:
                self._since = self._clock()

    def busy(self) -> None:
        with self._lock:
            if self._since is not None:
                self._idle += self._clock() - self._since
                self._since = None


class ClientModel:
    """Proposes the calls an MCP client sends, one per turn, and answers when the session ends."""

    provider = "mcp"

    def __init__(self, name: str = "mcp client", *, clock: BusyClock | None = None) -> None:
        self.name = name
        self.clock = clock
        self._inbox: queue.Queue[Ticket | None] = queue.Queue()
        self._next: list[Ticket | None] = []  # a call taken by wait_for_call, proposed next
        self.in_flight: Ticket | None = None

    @classmethod
    def ended(cls) -> ClientModel:
        """The model of a recorded session resumed after its client left (an approval
        settled from another desk): it answers at once, and the run stops there."""
        model = cls()
        model.close()
        return model

    def propose(self, ticket: Ticket) -> None:
        self._inbox.put(ticket)

    def close(self) -> None:
        self._inbox.put(None)

    def wait_for_call(self) -> bool:
        """Block until the client sends a call (True) or the session ends (False), without
        proposing it yet: a new run of the session starts only when there is a call for it."""
        if not self._next:
            self._next.append(self._take())
        return self._next[0] is not None

    def respond(self, request: ModelRequest) -> Turn:
        ticket, self.in_flight = self.in_flight, None
        if ticket is not None and not ticket.done:  # a run that stopped on it has answered it already
            ticket.answer(_output_of(request.items, ticket.call.call_id))
        ticket = self._next.pop() if self._next else self._take()
        if ticket is None:
            self._inbox.put(None)  # closed for good: a later request ends at once too
            return Turn((assistant(SESSION_ENDED),))
        self.in_flight = ticket
        return Turn((ticket.call,))

    def _take(self) -> Ticket | None:
        if self.clock is not None:
            self.clock.idle()
        try:
            return self._inbox.get()
        finally:
            if self.clock is not None:
                self.clock.busy()


def _output_of(items, call_id: str) -> str | None:
    for item in reversed(items):
        if isinstance(item, FunctionCallOutput) and item.call_id == call_id:
            return item.output
    return None
