"""One MCP session as runs of the engine: the calls of a host's model, through orderbot's loop.

A session is one client's: who it is (the customer, once known), its call window, its chain
of runs and the questions its person is being asked. What sessions share (the shop's tools,
the run store, the runner) comes in from outside, so a server may hold one session per
client.

The session owns one engine thread, and that thread does all of the session's work with the
shop and the run store, in the order it arrives. Each call the client sends is proposed to
the engine by the session's model (orderbot.models.mcp_client.ClientModel), so it passes the
same dispatch (whitelist, validation, identity, the shop's policy checks), limits and record
as a call of `orderbot ask`; the reply is the bounded envelope the engine would have handed a
model. The server's coroutines wait for that reply without holding a thread of their own, so
no number of calls a host sends at once can jam the session.

A side effect never holds the engine: its run pauses in the run store's approval queue
(`awaiting_approval`), and the session goes on with its next call in the next run of its
chain. Then either the person in the host is asked about exactly that call (MCP
elicitation), and their answer settles the paused run here, as `orderbot approvals approve`
would from a desk; or nobody here is asked (`--queue`, four eyes, a client that cannot ask),
the reply names the run, a desk settles it, and `check_approval` tells the client what
became of it. A question the client cancels, or leaves when it goes, is settled as rejected
with that reason: a withdrawn call runs nothing, and its record says why.

The chain: a run holds at most RUN_CALLS calls, and the next call starts a new run whose
question names the one before, so no record grows without bound. `--max-tool-calls` calls
in any `--window` seconds bound the session instead of a count: past it a call is refused
with when to retry, and calls come back as the window moves.

Nothing here imports the MCP SDK (orderbot.mcp.server does). The public coroutines run on
the server's event loop (asyncio, which both the stdio and the HTTP server run on).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, NamedTuple

from pydantic import ValidationError

from orderbot.errors import OrderbotError, Phrase
from orderbot.i18n import say, t
from orderbot.loop.budget import Limits
from orderbot.loop.dispatch import Prepared
from orderbot.loop.envelope import capped, fail, ok
from orderbot.loop.items import FunctionCall
from orderbot.loop.limits import StopReason
from orderbot.loop.state import PendingCall, RunState
from orderbot.models.mcp_client import BusyClock, ClientModel, Ticket
from orderbot.runner import Runner
from orderbot.runs.record import RunRecord
from orderbot.runs.resume import check_decider, check_resume
from orderbot.runs.summary import RUN_ID
from orderbot.text import cut, is_postgres, whole_characters, without_credentials
from orderbot.ui.describe import action_words

log = logging.getLogger("orderbot")

# Calls one run of the chain holds: as many as a run may (its steps are bounded at 100, one call
# each, and one to start and one to end), which a record keeps whole (orderbot.runs.record's caps).
RUN_CALLS = 98
# Calls of one session waiting for the engine at once: more than an agent fans out (a hundred
# lookups while a person thinks about a cancel), few enough that a flood costs little memory.
MAX_IN_FLIGHT = 128
MAX_LISTED = 20  # waiting actions check_approval lists when it is given no run id


class Reply(NamedTuple):
    """What the client is told about one call: the envelope and its JSON text (bounded as a
    model's would be), and, when the person in the host is to be asked about it, the question."""

    envelope: dict
    text: str
    question: Question | None = None

    @property
    def error(self) -> bool:
        return not self.envelope.get("ok")

    @classmethod
    def of(cls, envelope: dict) -> Reply:
        return cls(*capped(envelope))


class Question:
    """A side effect of this session waiting in the approval queue, which the person in the
    host may settle: the call as the engine bound it, its run, and a token that names it
    among the questions open in this session."""

    def __init__(self, run_id: str, pending: PendingCall) -> None:
        self.run_id = run_id
        self.pending = pending
        self.token = secrets.token_urlsafe(18)

    @property
    def description(self) -> str:
        """What the person is asked to approve, in their language."""
        return action_words(self.pending.description)

    @property
    def state(self) -> str:
        """The paused call as a 2026-07-28 retry brings it back (sealed by the SDK with the
        run store's key, bound to the call's tool, arguments and principal): any server of
        the store can settle it, whichever one the client reaches."""
        return f"{self.run_id} {self.pending.call_id}"


class Window:
    """At most `calls` calls in any `seconds`: the times of the calls it let in, oldest first."""

    def __init__(self, calls: int, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.calls, self.seconds = calls, seconds
        self._clock = clock
        self._times: deque[float] = deque()

    def admit(self) -> float | None:
        """None when a call may go now (it is counted); else the seconds until one may."""
        now = self._clock()
        times = self._times
        while times and times[0] <= now - self.seconds:
            times.popleft()
        if len(times) >= self.calls:
            return (times[0] + self.seconds - now) if times else self.seconds
        times.append(now)
        return None


class _Call(Ticket):
    """A call of the client in flight; `question` is set when its run paused for approval."""

    question: Question | None = None


class _Handoff:
    """A value the engine hands to the coroutine that awaits it: the coroutine holds no thread
    while it waits, and a coroutine that was cancelled meanwhile is simply not told."""

    __slots__ = ("_loop", "_future", "_thread")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        self._thread = threading.get_ident()

    def give(self, value: Any = None) -> None:
        if threading.get_ident() == self._thread:  # the engine runs between the loop's turns
            self._settle(value)
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._settle, value)

    def _settle(self, value: Any) -> None:
        if not self._future.done():
            self._future.set_result(value)

    def __await__(self):
        return self._future.__await__()


class Turns:
    """A lock taken in the order it was asked for: the engines of a server's sessions share
    the shop and the run store (one connection each), and each takes its turn with them for
    one piece of work at a time, between two calls of its client. A plain lock would let the
    engine that just let go take it again at once, and one busy client starve the others."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()
        self._held = False

    def acquire(self) -> None:
        with self._lock:
            if not self._held:
                self._held = True
                return
            turn = threading.Event()
            self._waiting.append(turn)
        turn.wait()  # handed over by release: held from here on

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._held = False


class TurnInbox:
    """The session's inbox when its engine takes turns with other sessions' (Turns): the
    engine lets go of its turn while it waits for its client, and takes it again, in its
    order, before it does anything with what arrived."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self._queue: queue.SimpleQueue = queue.SimpleQueue()

    def put(self, item) -> None:
        self._queue.put(item)

    def get_nowait(self):
        return self._queue.get_nowait()

    def get(self):
        self.turns.release()
        try:
            return self._queue.get()
        finally:
            self.turns.acquire()


class LoopInbox:
    """The session's inbox when its engine runs on the event loop's own thread, between the
    loop's turns: `get` runs the loop until something arrives (a call, an errand, the end),
    or until `until` (the server) is done. One thread, no hand-over between threads: what a
    stdio server does, one client at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop, until: asyncio.Future) -> None:
        self._loop, self._until = loop, until
        self._items: deque = deque()
        self._arrived: asyncio.Future | None = None

    def put(self, item) -> None:
        self._items.append(item)
        arrived = self._arrived
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    def get_nowait(self):
        if not self._items:
            raise queue.Empty
        return self._items.popleft()

    def get(self):
        if self._items:
            # A turn of the loop first, without waiting: the replies to the calls before go
            # out, and a cancel that came meanwhile withdraws a call before it is taken.
            self._loop.stop()
            self._loop.run_forever()
        while not self._items:
            if self._until.done():
                return None  # the server has ended: so has the session
            self._arrived = self._loop.create_future()
            self._loop.run_until_complete(asyncio.wait((self._arrived, self._until), return_when="FIRST_COMPLETED"))
        return self._items.popleft()


class _Job:
    """Work for the engine thread whose caller may withdraw it until it starts."""

    def __init__(self, work: Callable[[], Reply], handoff: _Handoff | None = None) -> None:
        self._work, self._handoff = work, handoff
        self._lock = threading.Lock()
        self._started = self._withdrawn = False

    def __call__(self) -> None:
        with self._lock:
            if self._withdrawn:
                return
            self._started = True
        try:
            reply = self._work()
        except Exception:  # noqa: BLE001 - one errand's failure is the client's error, never the session's end
            log.exception("mcp session: an errand failed")
            reply = Reply.of(fail("internal_error", t("mcp.internal_error")))
        if self._handoff is not None:
            self._handoff.give(reply)

    def withdraw(self) -> bool:
        """True when it had not started, and now never will."""
        with self._lock:
            self._withdrawn = True
            return not self._started


class McpSession:
    """The runs of one client's MCP session, over one runner (the session's shop, its tools
    and the run store). `limits` bound each run of the chain (its working time above all);
    `window` bounds the calls over time."""

    def __init__(
        self,
        runner: Runner,
        limits: Limits,
        *,
        user: str | None,
        window: Window | None = None,
        client: str = "",
        clock: BusyClock | None = None,
        refresh: Callable[[], None] | None = None,
        approval_ttl_hours: float = 24.0,
        max_in_flight: int = MAX_IN_FLIGHT,
        run_calls: int = RUN_CALLS,
        may_ask: bool = True,
        principal: str = "",
        acting_for: str | None = None,
        turns: Turns | None = None,
        idle_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock or BusyClock()
        self._clock.idle()
        self._model = ClientModel(name="mcp client", clock=self._clock, run_calls=run_calls)
        self._turns = turns
        if turns is not None:
            self._model.inbox = TurnInbox(turns)
        self._runner = replace(runner, clock=self._clock, model=self._model)
        update = {"max_tool_calls": run_calls, "max_steps": run_calls + 2}
        self._limits = limits.model_copy(update=update)
        self._window = window or Window(limits.max_tool_calls, 60.0)
        self._user, self._signed_in = user, False
        self._state: RunState | None = None  # the run in progress, whose customer may change
        self.client = client
        # Whether the person in the host may be asked to approve (not with four eyes, nor for an
        # operator the store does not list as an approver), and who authenticated the client
        # (a token's or a JWT's principal, as records name it; empty without one).
        self.may_ask = may_ask
        self.principal = principal
        self._acting_for = acting_for  # the operator an operator's token names: four eyes holds them too
        self._idle_clock = idle_clock
        self._last_active = idle_clock()
        self._active = 0  # public coroutines of the session under way (a call, a question, ...)
        # Read a JSON shop file again when another desk wrote it: the session outlives calls.
        self._refresh = refresh
        self._ttl_hours = approval_ttl_hours
        self._max_in_flight = max_in_flight
        self._in_flight = 0
        self._gate = threading.Lock()  # a call is let in, or the session closed, one at a time
        self._thread: threading.Thread | None = None
        self._here = False  # the engine runs on the event loop's thread (serve_here)
        self._closed = False
        self._ended: dict | None = None  # why the session takes no more calls
        self._count = 0
        self._questions: dict[str, Question] = {}  # by token: what the host's person is being asked
        self.runs: list[str] = []

    # ---- calls (on the server's event loop) ---------------------------------------------

    def idle_for(self, now: float) -> float:
        """Seconds since the client last had anything under way here (0 while it has)."""
        return 0.0 if self._active else max(0.0, now - self._last_active)

    @contextlib.contextmanager
    def _activity(self):
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            self._last_active = self._idle_clock()

    async def call(self, name: str, arguments: dict[str, Any] | None, *, ask: bool = False) -> Reply:
        """Hand the client's call to the engine and wait for what became of it. `ask`: when
        its run pauses for approval, the person in the host is to be asked (the reply then
        carries the question, open until `answer`, `decide` or `withdraw` settles it)."""
        with self._activity():
            return await self._call(name, arguments, ask=ask)

    async def _call(self, name: str, arguments: dict[str, Any] | None, *, ask: bool) -> Reply:
        text = json.dumps(arguments or {}, ensure_ascii=False)
        cap = self._limits.max_response_chars
        if len(text) + len(name) > cap:  # the response cap of a run, without ending the session
            return Reply.of(fail("too_large", t("mcp.arguments_too_large", size=len(text), cap=cap)))
        if self._in_flight >= self._max_in_flight:
            return Reply.of(fail("too_many_calls", t("mcp.too_many_in_flight", count=self._max_in_flight)))
        handoff = _Handoff()
        with self._gate:
            if self._ended is not None or self._closed:
                return Reply.of(self._ended or fail("session_ended", t("mcp.session_closed")))
            wait = self._window.admit()
            if wait is not None:
                return Reply.of(self._rate_limited(wait))
            self._count += 1
            call = _Call(FunctionCall(call_id=f"mcp_{self._count}", name=name[:200], arguments=text), handoff.give)
            if self._thread is None:
                self._start()
            if self._refresh is not None:
                self._model.errand(lambda: self._refreshed(call))
            self._model.propose(call)
        self._in_flight += 1
        try:
            await handoff
        except BaseException:
            call.withdrawn = True  # not taken yet: never run; taken: its run settles it (_stopped)
            if call.question is not None:  # paused just before the cancel: rejected, not left waiting
                self._reject(call.question, "mcp.withdrawn")
            raise
        finally:
            self._in_flight -= 1
        reply = _reply_of(call.output)
        question = call.question
        if question is not None and ask:
            self._questions[question.token] = question
            reply = reply._replace(question=question)
        return reply

    async def answer(self, state: str, name: str, arguments: dict[str, Any] | None, approved: bool | None) -> Reply:
        """The person's answer to the question `state` names (Question.state: a call paused
        by this server or another on the same run store), for exactly the call it was asked
        about (the same tool and arguments), then what became of the call. No answer
        (`approved` None) leaves the question open: the reply asks it again."""
        with self._activity():
            return await self._on_thread(lambda: self._answered(state, name, arguments, approved))

    def _answered(self, state: str, name: str, arguments: dict[str, Any] | None, approved: bool | None) -> Reply:
        none = Reply.of(fail("no_such_approval", t("mcp.no_such_approval")))
        run_id, _, call_id = state.partition(" ")
        if not self.may_ask or not RUN_ID.fullmatch(run_id):
            return none  # a session whose person is never asked answers no question
        try:
            record = self._runner.store.load(run_id)
        except OrderbotError:
            return none
        pending = next((p for p in record.state.pending if p.call_id == call_id), None)
        waiting = record.state.stop_reason is StopReason.AWAITING_APPROVAL
        if pending is None or not waiting or not self._owns(record):
            return none  # settled meanwhile, or not this session's to answer: the same as no question
        if not self._same_call(pending, name, arguments):
            return Reply.of(fail("not_the_same_call", t("mcp.not_the_same_call")))
        question = Question(run_id, pending)
        if approved is None:
            return Reply(*capped(ok(None)), question=question)
        return self._settle(question, approved)

    async def decide(self, question: Question, ask: Callable[[], Awaitable[bool]]) -> Reply:
        """Ask the person (`ask`, the server's question in-band), then settle the call as
        they said. A call cancelled while the person is asked is withdrawn: rejected."""
        with self._activity():
            try:
                approved = await ask()
            except BaseException:
                self.withdraw(question)
                raise
            return await self.settle(question, approved)

    async def settle(self, question: Question, approved: bool) -> Reply:
        """Settle the paused run as the person said, once; the call's own result."""
        if self._questions.pop(question.token, None) is None:
            return Reply.of(fail("no_such_approval", t("mcp.no_such_approval")))
        return await self._on_thread(
            lambda: self._settle(question, approved), withdrawn=lambda: self._reject(question, "mcp.withdrawn")
        )

    def withdraw(self, question: Question) -> None:
        """The client cancelled the call while its person was asked: nothing runs, and the
        record says why (without waiting: the caller is being cancelled)."""
        self._questions.pop(question.token, None)
        self._reject(question, "mcp.withdrawn")

    def hold(self, question: Question) -> None:
        """Leave the question to the approval queue: nobody here will ask it."""
        self._questions.pop(question.token, None)

    async def outcome(self, run_id: str) -> Reply:
        """What became of a call this session's customer (or, without one, this operator)
        left in the approval queue, from this session or any other on the same run store
        (`check_approval`); without a run id, the ones waiting now."""
        with self._activity():
            with self._gate:
                if self._closed:
                    return Reply.of(self._ended or fail("session_ended", t("mcp.session_closed")))
                wait = self._window.admit()
                if wait is not None:
                    return Reply.of(self._rate_limited(wait))
            return await self._on_thread(lambda: self._outcome(run_id))

    def close(self, *, interrupted: type[KeyboardInterrupt] | None = None) -> None:
        """The client has gone: each question still open is settled as rejected (nothing
        runs), a call queued for a desk stays in the queue, and the run in progress stops:
        as answered, or, `interrupted` (SIGTERM's Terminated, Ctrl-C), as cancelled with
        its record saved, as a run of `ask` stops."""
        for question in list(self._questions.values()):
            self._reject(question, "mcp.client_gone")
        self._questions.clear()
        with self._gate:
            if not self._closed:
                self._closed = True
                self._model.close(interrupted=interrupted)
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5.0)  # its work is bounded; a stuck store must not hold the exit

    # ---- the engine thread --------------------------------------------------------------

    def serve_here(self, loop: asyncio.AbstractEventLoop, until: asyncio.Future) -> None:
        """Run the session's engine on this thread, the event loop's, between its turns, until
        the server `until` is done and the session has ended (see LoopInbox)."""
        self._here = True
        self._model.inbox = LoopInbox(loop, until)
        self._serve()

    def _start(self) -> None:
        if self._here:
            return
        self._thread = threading.Thread(target=self._serve, name="orderbot-mcp", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        """The session's runs, one after another: a new one whenever the last paused for
        approval, was full, or stopped at a limit, and the client sends another call."""
        previous = None
        if self._turns is not None:
            self._turns.acquire()  # let go only while waiting for the client (TurnInbox)
        try:
            while self._model.wait_for_call():
                client = "; ".join(filter(None, (self.client or "?", self.principal)))
                if previous is None:
                    question = t("mcp.question", lang="en", client=client)
                else:
                    question = t("mcp.question_next", lang="en", client=client, run_id=previous)
                state = RunState.start(question, user=self._user)
                state.signed_in = self._signed_in
                self._state = state
                try:
                    self._runner.start(state, self._limits, kind="mcp", on_behalf_of=self._acting_for)
                except Exception:  # noqa: BLE001 - a store that fails ends the session, never the server
                    log.exception("mcp session: run %s failed", state.run_id)
                    self._end(fail("internal_error", t("mcp.internal_error")))
                    break
                finally:
                    self._state = None
                self.runs.append(state.run_id)
                previous = state.run_id
                self._user, self._signed_in = state.user, state.signed_in
                self._stopped(state)
        finally:
            try:
                self._model.drain(self._turned_away)
            finally:
                if self._turns is not None:
                    self._turns.release()

    def _stopped(self, state: RunState) -> None:
        """A run of the session stopped: tell the call in flight, if the stop was its."""
        ticket, self._model.in_flight = self._model.in_flight, None
        reason = state.stop_reason
        if reason is StopReason.AWAITING_APPROVAL:
            question = Question(state.run_id, state.pending[0])
            envelope = ok(
                {
                    "status": "awaiting_approval",
                    "run_id": state.run_id,
                    "action": question.description,
                    "message": t("mcp.queued", run_id=state.run_id),
                }
            )
            if isinstance(ticket, _Call) and not ticket.withdrawn:
                ticket.question = question
            else:  # the client withdrew the call before the engine got to it: nothing runs
                self._settle(question, False, reason=t("mcp.withdrawn"))
        elif reason is StopReason.ANSWERED:  # the run was full, or the client closed the session
            envelope = fail("session_ended", t("mcp.session_closed"))
        elif reason is StopReason.TRANSFERRED:  # a person has the conversation now: no more calls
            done = next((c for c in reversed(state.calls) if c.result is not None), None)
            envelope = done.result if done is not None else fail(str(reason), state.stop_detail)
            self._end(fail(str(reason), state.stop_detail), close=False)
        else:  # a limit of this run, or a stop from outside: the next call starts the next run
            message = Phrase.from_json(state.stop_message)
            detail = say(message) if message else state.stop_detail
            envelope = fail(str(reason), detail)
        if ticket is not None and not ticket.done:
            ticket.answer(json.dumps(envelope, ensure_ascii=False))

    def _end(self, envelope: dict, *, close: bool = True) -> None:
        """The session takes no more calls (`envelope` says why); `close`: nor any errand."""
        with self._gate:
            self._ended = envelope
            if close:
                self._closed = True
                self._model.close()
        ticket, self._model.in_flight = self._model.in_flight, None
        if ticket is not None:
            ticket.answer(json.dumps(envelope, ensure_ascii=False))

    def _turned_away(self, ticket: Ticket) -> None:
        """A call that reached the session after it ended."""
        ticket.answer(json.dumps(self._ended or fail("session_ended", t("mcp.session_closed")), ensure_ascii=False))

    def _refreshed(self, call: _Call) -> None:
        try:
            self._refresh()
        except OrderbotError as exc:
            call.answer(json.dumps(fail("orders_unreadable", say(exc)), ensure_ascii=False))

    def _settle(self, question: Question, approved: bool, *, reason: str | None = None) -> Reply:
        """Settle the paused run `question` names as a desk would (`orderbot approvals
        approve|reject`): every re-check first, the decision claimed once in the run store
        (a run someone settled meanwhile is theirs); then the call's own result."""
        store, run_id = self._runner.store, question.run_id
        runner = replace(self._runner, model=ClientModel.ended())
        try:
            record = store.load(run_id)
            policy = store.policy()
            operator, four_eyes, approvers = store.operator, policy.four_eyes, policy.approvers
            check_decider(record, operator=operator, approve=approved, four_eyes=four_eyes, approvers=approvers)
            user = None if record.state.signed_in else record.state.user
            now = self._runner.wall_clock()
            check_resume(record, runner.toolbox, user=user, approve=approved, now=now, ttl_hours=self._ttl_hours)
            runner.resume(record, self._limits, approve=approved, reason=reason, kind="mcp")  # its save is the claim
        except OrderbotError as exc:
            log.info("mcp session: run %s was not settled here: %s", run_id, exc)
            return Reply.of(fail("not_settled", say(exc)))
        done = next((c for c in record.state.calls if c.call_id == question.pending.call_id), None)
        if done is None or done.result is None:
            return Reply.of(fail("not_executed", t("mcp.not_executed")))
        return Reply.of(done.result)

    def _reject(self, question: Question, reason: str) -> None:
        """Settle `question` as rejected on the engine thread, without waiting for it."""
        self._errand(_Job(lambda: self._settle(question, False, reason=t(reason))))

    def _errand(self, job: _Job) -> bool:
        """Queue `job` for the engine thread: False when the session has closed (nothing
        would run it; a question then stays in the approval queue, as after a disconnect)."""
        with self._gate:
            if self._closed:
                return False
            if self._thread is None:
                self._start()
            self._model.errand(job)
            return True

    def _outcome(self, run_id: str) -> Reply:
        if not run_id:
            return Reply.of(ok({"waiting": self._waiting()}))
        unknown = Reply.of(fail("unknown_run", t("mcp.not_this_customers_run")))
        if not RUN_ID.fullmatch(run_id):  # a full id only: never `last` or a prefix
            return unknown
        try:
            record = self._runner.store.load(run_id)
        except OrderbotError:
            return unknown
        if not self._owns(record):
            return unknown  # the same answer as for no run at all: another's runs are not told apart
        return Reply.of(outcome_of(record))

    def _waiting(self) -> list[dict]:
        """The actions of this session's customer (or, without one, of this operator's runs
        with no customer) that wait for approval now, oldest first."""
        store, user = self._runner.store, self._current_user()
        if user is not None:
            queued = store.waiting(limit=MAX_LISTED, customer=user)
        else:
            queued = [w for w in store.waiting(limit=MAX_LISTED, requested_by=store.operator) if w.customer is None]
        listed = []
        for waiting in queued:
            try:
                record = store.load(waiting.run_id)
            except OrderbotError:
                continue
            if self._owns(record):
                action = action_words(waiting.description)
                listed.append({"run_id": waiting.run_id, "action": action, "since": waiting.requested_at})
        return listed

    def _current_user(self) -> str | None:
        running = self._state
        return running.user if running is not None else self._user

    def _owns(self, record: RunRecord) -> bool:
        """Whether the run is this session's to ask about: an MCP run on the same shop, of
        the session's customer, or, for a session without one, of no customer and this operator."""
        runner = self._runner
        if record.provider != ClientModel.provider or _place(record.orders) != _place(runner.orders):
            return False
        if record.shop != (runner.shop.name if runner.shop is not None else None):
            return False
        user = self._current_user()
        if user is not None:
            return record.state.user == user
        return record.state.user is None and record.operator == runner.store.operator

    # ---- helpers ------------------------------------------------------------------------

    async def _on_thread(self, work: Callable[[], Reply], *, withdrawn: Callable[[], None] | None = None) -> Reply:
        """`work` on the engine thread, awaited; a caller cancelled before it started
        withdraws it (then `withdrawn` runs in its place)."""
        handoff = _Handoff()
        job = _Job(work, handoff)
        if not self._errand(job):
            return Reply.of(self._ended or fail("session_ended", t("mcp.session_closed")))
        try:
            return await handoff
        except BaseException:
            if job.withdraw() and withdrawn is not None:
                withdrawn()
            raise

    def _rate_limited(self, wait: float) -> dict:
        retry = math.ceil(wait * 10) / 10
        window = self._window
        envelope = fail("rate_limited", t("mcp.rate_limited", calls=window.calls, seconds=window.seconds, retry=retry))
        envelope["retry_after"] = retry
        return envelope

    def _same_call(self, pending: PendingCall, name: str, arguments: dict[str, Any] | None) -> bool:
        tool = self._runner.toolbox.get(name)
        if tool is None or name != pending.name:
            return False
        try:
            args = tool.args.model_validate(arguments or {})
        except ValidationError:
            return False
        call = FunctionCall(call_id=pending.call_id, name=name, arguments="")
        return Prepared(call, tool, args).canonical_arguments == pending.arguments  # as the binding was made


def outcome_of(record: RunRecord) -> dict:
    """What became of the call a run of an MCP session left waiting for approval."""
    state, run_id = record.state, record.run_id
    if state.stop_reason is StopReason.AWAITING_APPROVAL and state.pending:
        action = action_words(state.pending[0].description)
        return ok({"status": "awaiting_approval", "run_id": run_id, "action": action})
    waited = list(record.decisions)  # the calls that waited, in the order they were asked about
    done = next((c for c in state.calls if waited and c.call_id == waited[-1] and c.result is not None), None)
    if done is None:
        return ok({"status": "not_executed", "run_id": run_id})
    status = "approved" if done.decision == "executed" else done.decision
    return ok({"status": status, "run_id": run_id, "result": done.result})


def _reply_of(output: str | None) -> Reply:
    if output is None:
        return Reply.of(fail("not_executed", t("mcp.not_executed")))
    try:
        envelope = json.loads(output)
    except ValueError:
        envelope = fail("internal_error", t("mcp.internal_error"))
    return Reply(envelope, output) if isinstance(envelope, dict) else Reply.of(fail("internal_error", ""))


def _place(orders: object) -> str:
    """Where a run's orders are, whoever reached them: servers of one team log in to the same
    database with roles of their own (the record keeps the URL with its user name)."""
    return without_credentials(str(orders)) if is_postgres(str(orders)) else str(orders)


def client_name(name: str | None, version: str | None) -> str:
    """The client's own name and version as it gave them: outside text, cut short."""
    return cut(whole_characters(" ".join(f"{name or ''} {version or ''}".split())), 80)
