"""One MCP session as runs of the engine: the calls of a host's model, through orderbot's loop.

The session owns one engine thread. Each call the client sends is proposed to the engine by
the session's model (orderbot.models.mcp_client.ClientModel), so it passes the same budget,
dispatch (whitelist, validation, identity, the shop's policy checks), approval and record as
a call of `orderbot ask`; the reply is the bounded envelope the engine would have handed a
model. A side effect waits for a person in one of two ways:

- the client can ask its person (MCP elicitation): the engine's approver hands the exact
  call's description to the server, which asks and settles it with `answer`;
- it cannot (or the queue was chosen): the run pauses in `awaiting_approval`, in the run
  store's approval queue, and the reply names the run; `orderbot approvals approve` settles
  it from any desk, and `outcome` tells the client what became of it. The session goes on
  in a new run of kind `mcp`, with the same customer and what is left of the budget.

Nothing here imports the MCP SDK (orderbot.mcp.server does), so this part is tested and
read without it. Every public method is called from the server's worker threads.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
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
from orderbot.text import cut, whole_characters
from orderbot.ui.describe import action_words

log = logging.getLogger("orderbot")

MAX_STEPS = 100  # the table's bound on a run's steps (orderbot.loop.limits): one call per step


class Reply(NamedTuple):
    """What the client is told about one call: the envelope and its JSON text (bounded as a
    model's would be), or, while a person is being asked, what to ask."""

    envelope: dict
    text: str
    asking: Asking | None = None

    @property
    def error(self) -> bool:
        return not self.envelope.get("ok")

    @classmethod
    def of(cls, envelope: dict) -> Reply:
        return cls(*capped(envelope))


class Asking:
    """A side effect waiting for the person in the host: the call, as the engine bound it,
    and a token the server's answer must bring back."""

    def __init__(self, pending: PendingCall) -> None:
        self.pending = pending
        self.token = secrets.token_urlsafe(18)
        self.approved = False
        self.decided = threading.Event()
        self.detached = False  # handed to the client to answer with a later request


class McpSession:
    """The runs of one MCP session, over one runner (the session's shop, its tools and the
    run store). `limits` are the whole session's: its calls and its own working time."""

    def __init__(
        self,
        runner: Runner,
        limits: Limits,
        *,
        user: str | None,
        client: str = "",
        clock: BusyClock | None = None,
        refresh: Callable[[], None] | None = None,
    ) -> None:
        if limits.max_tool_calls > MAX_STEPS - 2:
            raise ValueError("an MCP session takes at most 98 tool calls")
        self._clock = clock or BusyClock()
        self._clock.idle()
        self._model = ClientModel(name="mcp client", clock=self._clock)
        self._runner = replace(runner, clock=self._clock, model=self._model)
        self._limits = limits
        self._user, self._signed_in = user, False
        self.client = client
        # Read a JSON shop file again when another desk wrote it: the session outlives calls.
        self._refresh = refresh
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()
        self._ticket: Ticket | None = None  # the client's call the engine is dealing with
        self._asking: Asking | None = None
        self._ended: dict | None = None  # why the session takes no more calls (a limit's envelope)
        self._used_calls = 0
        self._count = 0
        self.queued: dict[str, str] = {}  # run id -> the id of the call that waits in it
        self.runs: list[str] = []

    # ---- calls ------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | None, *, elicit: bool = False) -> Reply:
        """Hand the client's call to the engine and wait for what became of it. `elicit`:
        the client can ask its person (chosen once, when the session's first run starts)."""
        text = json.dumps(arguments or {}, ensure_ascii=False)
        with self._changed:
            # One call at a time: a call sent beside another waits for it. A question the
            # client was handed to answer later (detached) and did not is given up: declined.
            while self._ticket is not None and not self._ticket.done:
                if self._asking is not None and self._asking.detached:
                    self._decide(self._asking, approved=False)
                self._changed.wait()
            self._ticket = None
            if self._ended is not None:
                return Reply.of(self._ended)
            cap = self._limits.max_response_chars
            if len(text) + len(name) > cap:  # the response cap of a run, without ending the session
                return Reply.of(fail("too_large", t("mcp.arguments_too_large", size=len(text), cap=cap)))
            if self._refresh is not None:
                try:
                    self._refresh()
                except OrderbotError as exc:
                    return Reply.of(fail("orders_unreadable", say(exc)))
            if self._thread is None:
                self._start(elicit)
            self._count += 1
            ticket = Ticket(FunctionCall(call_id=f"mcp_{self._count}", name=name[:200], arguments=text), self._notify)
            self._ticket = ticket
            self._model.propose(ticket)
            return self._wait(ticket)

    def answer(self, token: str, name: str, arguments: dict[str, Any] | None, approved: bool) -> Reply:
        """The person's answer to the question `token` names, for exactly the call it was
        asked about (the same tool and arguments), then what became of the call."""
        with self._changed:
            asking, ticket = self._asking, self._ticket
            if asking is None or ticket is None or not secrets.compare_digest(token.encode(), asking.token.encode()):
                return Reply.of(fail("no_such_approval", t("mcp.no_such_approval")))
            if not self._same_call(asking.pending, name, arguments):
                return Reply.of(fail("not_the_same_call", t("mcp.not_the_same_call")))
            self._decide(asking, approved=approved)
            return self._wait(ticket)

    def detach(self, asking: Asking) -> None:
        """The question goes back to the client, answered (or not) by a later request."""
        with self._changed:
            asking.detached = True
            self._changed.notify_all()

    def outcome(self, run_id: str) -> Reply:
        """What became of a call this session left in the approval queue (`check_approval`)."""
        call_id = self.queued.get(run_id)
        if call_id is None:
            return Reply.of(fail("unknown_run", t("mcp.not_this_sessions_run")))
        try:
            record = self._runner.store.load(run_id)
        except OrderbotError as exc:
            return Reply.of(fail("record_error", say(exc)))
        state = record.state
        if state.stop_reason is StopReason.AWAITING_APPROVAL and state.pending:
            return Reply.of(ok({"status": "awaiting_approval", "run_id": run_id}))
        done = next((c for c in state.calls if c.call_id == call_id and c.result is not None), None)
        if done is None:
            return Reply.of(ok({"status": "not_executed", "run_id": run_id}))
        status = "approved" if done.decision == "executed" else done.decision
        return Reply.of(ok({"status": status, "run_id": run_id, "result": done.result}))

    def close(self) -> None:
        """The client has gone: a question still open is declined (nothing runs), a call
        queued for approval stays in the queue, and the run in progress stops as answered."""
        with self._changed:
            if self._asking is not None:
                self._decide(self._asking, approved=False)
            self._model.close()
            thread = self._thread
        if thread is not None:
            thread.join()

    # ---- the engine thread ------------------------------------------------------------

    def _start(self, elicit: bool) -> None:
        self._thread = threading.Thread(target=self._serve, args=(elicit,), name="orderbot-mcp", daemon=True)
        self._thread.start()

    def _serve(self, elicit: bool) -> None:
        """The session's runs, one after another: a new one whenever the last paused for
        approval and the client sends another call."""
        approver = self._approve if elicit else None
        started = self._clock()
        while self._model.wait_for_call():
            limits = self._run_limits(self._clock() - started)
            if limits is None:
                self._end(fail("time_limit", t("mcp.time_spent", seconds=self._limits.timeout)))
                break
            question = t("mcp.question", lang="en", client=self.client or "?")
            state = RunState.start(question, user=self._user)
            state.signed_in = self._signed_in
            try:
                self._runner.start(state, limits, kind="mcp", approver=approver)
            except Exception:  # noqa: BLE001 - a store that fails ends the session, never the server
                log.exception("mcp session: run %s failed", state.run_id)
                self._end(fail("internal_error", t("mcp.internal_error")))
                break
            self.runs.append(state.run_id)
            self._used_calls += state.tool_calls
            self._user, self._signed_in = state.user, state.signed_in
            self._stopped(state)

    def _run_limits(self, spent: float) -> Limits | None:
        """What is left of the session's budget, as the limits of its next run."""
        seconds = self._limits.timeout - spent
        if seconds <= 0:
            return None
        calls = max(self._limits.max_tool_calls - self._used_calls, 0)
        update = {"max_tool_calls": calls, "max_steps": min(calls + 2, MAX_STEPS), "timeout": seconds}
        return self._limits.model_copy(update=update)

    def _stopped(self, state: RunState) -> None:
        """A run of the session stopped: tell the call in flight, if the stop was its."""
        with self._changed:
            ticket, self._ticket = self._ticket, None
            reason = state.stop_reason
            if reason is StopReason.AWAITING_APPROVAL:
                pending = state.pending[0]
                self.queued[state.run_id] = pending.call_id
                data = {
                    "status": "awaiting_approval",
                    "run_id": state.run_id,
                    "action": action_words(pending.description),
                    "message": t("mcp.queued", run_id=state.run_id),
                }
                envelope = ok(data)
            elif reason is StopReason.ANSWERED:  # the client closed the session
                envelope = fail("session_ended", t("mcp.session_closed"))
            else:  # a limit: the session takes no more calls
                message = Phrase.from_json(state.stop_message)
                detail = say(message) if message else state.stop_detail
                envelope = fail(str(reason), detail)
                self._ended = envelope
            if ticket is not None and not ticket.done:
                ticket.answer(json.dumps(envelope, ensure_ascii=False))
            self._changed.notify_all()

    def _end(self, envelope: dict) -> None:
        with self._changed:
            self._ended = envelope
            self._model.close()
            ticket, self._ticket = self._ticket, None
            if ticket is not None and not ticket.done:
                ticket.answer(json.dumps(envelope, ensure_ascii=False))
            self._changed.notify_all()

    def _approve(self, pending: PendingCall) -> bool:
        """The engine's approver: the person in the host is asked about exactly this call."""
        asking = Asking(pending)
        with self._changed:
            self._asking = asking
            self._changed.notify_all()
        self._clock.idle()  # a person's time is not the session's
        try:
            asking.decided.wait()
        finally:
            self._clock.busy()
        return asking.approved

    # ---- helpers ----------------------------------------------------------------------

    def _wait(self, ticket: Ticket) -> Reply:
        """Under the lock: until the call is done, or a person has to be asked about it."""
        self._changed.wait_for(lambda: ticket.done or (self._asking is not None and not self._asking.decided.is_set()))
        if not ticket.done:
            return Reply(*capped(ok(None)), asking=self._asking)
        if self._ticket is ticket:
            self._ticket = None
        self._changed.notify_all()
        return _reply_of(ticket.output)

    def _decide(self, asking: Asking, *, approved: bool) -> None:
        asking.approved = approved
        self._asking = None
        asking.decided.set()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

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


def _reply_of(output: str | None) -> Reply:
    if output is None:
        return Reply.of(fail("not_executed", t("mcp.not_executed")))
    try:
        envelope = json.loads(output)
    except ValueError:
        envelope = fail("internal_error", t("mcp.internal_error"))
    return Reply(envelope, output) if isinstance(envelope, dict) else Reply.of(fail("internal_error", ""))


def client_name(name: str | None, version: str | None) -> str:
    """The client's own name and version as it gave them: outside text, cut short."""
    return cut(whole_characters(" ".join(f"{name or ''} {version or ''}".split())), 80)
