"""The model of an MCP session: the host's model, whose tool calls arrive over MCP.

`orderbot mcp` (orderbot.mcp) runs each session as a chain of ordinary runs, and the engine
asks this model for the next step like any other: `respond` hands the result of the call in
flight back to the client that sent it, then waits for the client's next call and proposes
it. So every call the host makes goes through the engine's limits, dispatch, approval and
record, as a run's does. A run ends, answered, when it holds as many calls as one run of the
chain may (`run_calls`: the next call starts the next run), when the session ends, or at
once when a run of it is resumed after an approval (no client waits any more).

While it waits for the next call, the model also runs the session's errands (settling an
approval, reading the run store for `check_approval`) on the same thread: one thread does
all of a session's work with the shop and the run store, in the order it arrives.

Standard library only: the MCP SDK lives in orderbot.mcp.server, never here.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Protocol

from orderbot.loop.items import FunctionCall, FunctionCallOutput, assistant
from orderbot.loop.model import ModelRequest, Turn
from orderbot.models import MCP

log = logging.getLogger("orderbot")

# The answers that end a run of a session, the built-in stand-ins for the model's own words, so
# fixed English like all the model writes: once the client has closed the session, and once a
# run holds as many calls as it may (the session goes on in the next run of its chain).
SESSION_ENDED = "The MCP session ended; its calls and their results are above."
RUN_FULL = "This run of the MCP session holds as many calls as one run may; the session goes on in its next run."


class Ticket:
    """One call of the client in flight: the call the engine is given, and, once the engine
    has dealt with it, the output the model would have read (the bounded envelope text).
    A ticket `withdrawn` before the engine took it (the client cancelled it) is never run."""

    def __init__(self, call: FunctionCall, on_done: Callable[[], None] = lambda: None) -> None:
        self.call = call
        self.output: str | None = None
        self.done = False
        self.withdrawn = False
        self._on_done = on_done

    def answer(self, output: str | None) -> None:
        if not self.done:
            self.output, self.done = output, True
            self._on_done()


Errand = Callable[[], None]


class Inbox(Protocol):
    def put(self, item: Ticket | Errand | None) -> None: ...

    def get(self) -> Ticket | Errand | None: ...

    def get_nowait(self) -> Ticket | Errand | None: ...


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
    """Proposes the calls an MCP client sends, one per turn, and answers when the run is
    full (`run_calls` calls) or the session ends."""

    provider = MCP

    def __init__(
        self,
        name: str = "mcp client",
        *,
        clock: BusyClock | None = None,
        run_calls: int | None = None,
    ) -> None:
        self.name = name
        self.clock = clock
        # What the session hands over: calls, errands, None once it has ended. Any object with
        # put, get (blocking) and get_nowait; the session's own thread waits on a queue.
        self.inbox: Inbox = queue.SimpleQueue()
        self._next: list[Ticket | None] = []  # a call taken by wait_for_call, proposed next
        self._run_calls = run_calls
        self._proposed = 0  # calls proposed in the run in progress
        self._interrupted: type[KeyboardInterrupt] | None = None
        self.in_flight: Ticket | None = None

    @classmethod
    def ended(cls) -> ClientModel:
        """The model of a recorded session resumed after its client left (an approval
        settled from another desk, or by the host's person): it answers at once, and the
        run stops there."""
        model = cls()
        model.close()
        return model

    def propose(self, ticket: Ticket) -> None:
        self.inbox.put(ticket)

    def errand(self, errand: Errand) -> None:
        """Run `errand` on the session's thread, between two calls (it must not raise)."""
        self.inbox.put(errand)

    def close(self, *, interrupted: type[KeyboardInterrupt] | None = None) -> None:
        """No more calls: the run in progress ends as answered, or, `interrupted` (SIGTERM's
        Terminated, Ctrl-C), stops as cancelled, as a run of `ask` does."""
        self._interrupted = self._interrupted or interrupted
        self.inbox.put(None)

    def wait_for_call(self) -> bool:
        """Block until the client sends a call (True) or the session ends (False), without
        proposing it yet: a new run of the session starts only when there is a call for it."""
        if not self._next:
            self._next.append(self._take())
        self._proposed = 0
        return self._next[0] is not None

    def respond(self, request: ModelRequest) -> Turn:
        ticket, self.in_flight = self.in_flight, None
        if ticket is not None and not ticket.done:  # a run that stopped on it has answered it already
            ticket.answer(_output_of(request.items, ticket.call.call_id))
        if self._run_calls is not None and self._proposed >= self._run_calls:
            return Turn((assistant(RUN_FULL),))  # the next call starts the next run of the chain
        ticket = self._next.pop() if self._next else self._take()
        if ticket is None:
            self.inbox.put(None)  # closed for good: a later request ends at once too
            if self._interrupted is not None:
                raise self._interrupted  # the engine stops the run as cancelled, its record saved
            return Turn((assistant(SESSION_ENDED),))
        self.in_flight = ticket
        self._proposed += 1
        return Turn((ticket.call,))

    def drain(self, turn_away: Callable[[Ticket], None]) -> None:
        """Once the session's runs are over: what is still in the inbox, without waiting:
        each call is turned away, each errand run."""
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, Ticket):
                if not (item.withdrawn or item.done):
                    turn_away(item)
            elif item is not None:
                self._run(item)

    def _take(self) -> Ticket | None:
        """The client's next call (None: the session ended), running errands meanwhile. A
        call its client withdrew before it was taken is dropped unanswered."""
        while True:
            if self.clock is not None:
                self.clock.idle()
            try:
                item = self.inbox.get()
            finally:
                if self.clock is not None:
                    self.clock.busy()
            if item is None:
                return None
            if not isinstance(item, Ticket):
                self._run(item)
            elif not (item.withdrawn or item.done):  # withdrawn by its client, or answered already
                return item

    @staticmethod
    def _run(errand: Errand) -> None:
        try:
            errand()
        except Exception:  # noqa: BLE001 - an errand's failure is its own, never the session's end
            log.exception("mcp session: an errand failed")


def _output_of(items, call_id: str) -> str | None:
    for item in reversed(items):
        if isinstance(item, FunctionCallOutput) and item.call_id == call_id:
            return item.output
    return None
