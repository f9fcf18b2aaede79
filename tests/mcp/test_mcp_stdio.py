"""The real `orderbot mcp` over standard input/output, as a host starts it, driven by the mcp
package's own client: one session for the whole story (a lookup, a refusal, a cancel the
client cannot ask about, approved by `orderbot approvals approve` in another process and
carried out once), a host that times out while its person thinks; and raw sessions for what
only the process shows: malformed JSON-RPC, a cancel during a question followed by a lookup
and the end of input, SIGTERM with input still open."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import anyio
import mcp_types as types
import pytest
from clikit import cli, on_time
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcpkit import CANCEL, Person, envelope, fan_out_while_asked, status

from orderbot.i18n import t


def orderbot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "orderbot", *args], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )


@pytest.mark.slow
def test_a_host_over_stdio_and_an_approval_from_another_process(orders, tmp_path) -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "orderbot", "mcp", "--user", "C001", "--orders", str(orders)],
        env=dict(os.environ), cwd=str(tmp_path),
    )  # fmt: skip

    async def script(client):
        tools = (await client.list_tools()).tools
        lookup = envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"}))
        theirs = envelope(await client.call_tool("get_order_details", {"order_id": "ORD-1003"}))
        queued = envelope(await client.call_tool("cancel_order", CANCEL))  # this client cannot ask a person
        run_id = queued["data"]["run_id"]
        before = status(orders)
        approved = await anyio.to_thread.run_sync(orderbot, "approvals", "approve", run_id)
        again = cli("approvals", "approve", run_id)
        done = envelope(await client.call_tool("check_approval", {"run_id": run_id}))
        return tools, lookup, theirs, queued, before, approved, again, done

    async def main():
        async with Client(server) as client:
            return await script(client)

    tools, lookup, theirs, queued, before, approved, again, done = anyio.run(main)
    assert {t.name for t in tools} >= {"get_order_status", "cancel_order", "check_approval"}
    assert next(t for t in tools if t.name == "cancel_order").annotations.destructive_hint is True
    assert lookup["data"]["status"] == "已发货"
    assert theirs["code"] == "no_access"
    assert queued["data"]["status"] == "awaiting_approval" and before == "处理中"
    assert approved.returncode == 0, approved.stderr
    assert again.exit_code != 0 and status(orders) == "已取消"  # exactly once
    assert done["data"]["status"] == "approved"

    run_id = queued["data"]["run_id"]
    runs = json.loads(cli("runs", "--json").stdout)
    assert run_id in [r["run_id"] for r in runs]
    assert any(r["question"].startswith("MCP session") for r in runs)
    executed = [e for e in json.loads(cli("audit", "--json").stdout) if e["event"] == "executed"]
    assert [(e["run_id"], e["tool"]) for e in executed] == [(run_id, "cancel_order")]


@pytest.mark.slow
def test_malformed_json_rpc_gets_an_error_and_the_server_goes_on(orders, tmp_path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    lines = [
        "not json at all",
        '{"jsonrpc": "2.0", "id": 7, "method": 12}',
        json.dumps(initialize),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}',
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5}}',
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "drop_table", "arguments": {}}}',
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_order_status",'
        ' "arguments": {"order_id": "ORD-1001"}}}',
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "orderbot", "mcp", "--orders", str(orders)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    watchdog = threading.Timer(60, server.kill)  # a server that stops answering fails the test, never hangs it
    watchdog.start()
    try:
        server.stdin.write("\n".join(lines) + "\n")
        server.stdin.flush()
        replies = []
        while {1, 2, 3, 4, 5} - {r.get("id") for r in replies}:
            line = server.stdout.readline()
            assert line, "the server ended before answering every request"
            replies.append(json.loads(line))
        server.stdin.close()  # the client goes: the server ends by itself
        stderr = server.stderr.read()
        assert server.wait() == 0 and "Traceback" not in stderr
    finally:
        watchdog.cancel()
        server.kill()
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["result"]["serverInfo"]["name"] == "orderbot"  # the garbage before it was dropped
    assert by_id[2]["error"]["code"] == -32601 and by_id[3]["error"]["code"] == -32602
    assert by_id[5]["error"]["code"] == -32602 and "drop_table" in by_id[5]["error"]["message"]  # an unknown tool
    assert json.loads(by_id[4]["result"]["content"][0]["text"])["data"]["status"] == "已发货"


class Raw:
    """`orderbot mcp` over pipes, spoken to in JSON-RPC lines: what the process does with its
    input, its signals and its exit, which the SDK's client hides. A reader thread collects
    what it writes; a watchdog kills it if the test would otherwise hang."""

    def __init__(self, orders, cwd, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "orderbot", "mcp", "--user", "C001", "--orders", str(orders), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=dict(os.environ),
        )
        self.watchdog = threading.Timer(60, self.process.kill)
        self.watchdog.start()
        self.messages: queue.Queue[dict | None] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.messages.put(json.loads(line))
        self.messages.put(None)

    def send(self, **message) -> None:
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def next(self, timeout: float = 30) -> dict:
        message = self.messages.get(timeout=timeout)
        assert message is not None, "the server ended before it answered"
        self.seen.append(message)
        return message

    def reply(self, request_id: int, timeout: float = 30) -> dict:
        """The answer to `request_id`, past the notifications that come before it."""
        while "method" in (message := self.next(timeout)) or message.get("id") != request_id:
            pass
        return message

    def start(self) -> None:
        capabilities = {"elicitation": {}}  # the 2025-06-18 spelling of form questions
        info = {"name": "raw", "version": "0"}
        params = {"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": info}
        self.send(id=1, method="initialize", params=params)
        assert self.next()["id"] == 1
        self.send(method="notifications/initialized")

    def call(self, request_id: int, name: str, arguments: dict) -> None:
        self.send(id=request_id, method="tools/call", params={"name": name, "arguments": arguments})

    def close(self) -> None:
        self.watchdog.cancel()
        self.process.kill()
        self.process.wait()


@pytest.mark.slow
def test_a_call_cancelled_during_its_question_then_a_lookup_then_the_end_of_input(orders, tmp_path) -> None:
    """The host cancels the call while its person is asked: the next lookup is answered
    within a second, the person's late yes runs nothing, the cancelled request is never
    answered, and closing standard input ends the process by itself."""
    server = Raw(orders, tmp_path)
    try:
        server.start()
        server.call(2, "cancel_order", CANCEL)
        question = server.next()
        assert question["method"] == "elicitation/create" and "ORD-1002" in question["params"]["message"]
        server.send(method="notifications/cancelled", params={"requestId": 2, "reason": "the host's stop button"})
        began = time.monotonic()
        server.call(3, "get_order_status", {"order_id": "ORD-1001"})
        lookup = server.reply(3, timeout=10)
        answered_in = time.monotonic() - began
        yes = {"action": "accept", "content": {"approve": True}}
        server.send(id=question["id"], result=yes)  # the person, too late
        server.call(4, "get_order_status", {"order_id": "ORD-1002"})
        after = server.reply(4)
        server.process.stdin.close()  # the host goes
        rest = []
        while (message := server.messages.get(timeout=30)) is not None:
            rest.append(message)
        code = server.process.wait(timeout=30)
        stderr = server.process.stderr.read()
    finally:
        server.close()
    assert lookup["id"] == 3 and on_time(answered_in, 1.0, slack=0.0), answered_in
    assert json.loads(lookup["result"]["content"][0]["text"])["data"]["status"] == "已发货"
    assert after["id"] == 4 and after["result"]["structuredContent"]["data"]["status"] == status(orders) == "处理中"
    assert not [m for m in server.seen + rest if m.get("id") == 2]  # a cancelled request is never answered
    withdrawn = [m for m in server.seen if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in withdrawn] == [question["id"]]  # the host may drop the question
    assert code == 0 and "Traceback" not in stderr
    runs = {r["run_id"]: r for r in json.loads(cli("runs", "--json").stdout)}
    paused = [r for r in runs.values() if "rejected" in r["decisions"]]
    assert len(paused) == 1, runs


@pytest.mark.slow
def test_sigterm_with_input_open_ends_the_server_at_once_as_ask_does(orders, tmp_path) -> None:
    """SIGTERM while the client keeps standard input open, a question open and a run in
    progress: exit 143 within a second, the orders file intact and unchanged, the open
    question settled as withdrawn, the run in progress saved as cancelled by the signal."""
    before = orders.read_bytes()
    server = Raw(orders, tmp_path)
    try:
        server.start()
        server.call(2, "cancel_order", CANCEL)
        assert server.next()["method"] == "elicitation/create"  # the person is being asked
        server.call(3, "get_order_status", {"order_id": "ORD-1001"})
        assert server.reply(3)["result"]["structuredContent"]["ok"]  # the session's next run is in progress
        began = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(timeout=30)
        took = time.monotonic() - began
        stderr = server.process.stderr.read()
    finally:
        server.close()
    assert code == 143 and on_time(took, 1.0, slack=0.0), (code, took)
    assert "Traceback" not in stderr
    assert orders.read_bytes() == before
    runs = json.loads(cli("runs", "--json").stdout)
    assert sorted(r["status"] for r in runs) == ["answered", "cancelled"], runs
    stopped = next(r for r in runs if r["status"] == "cancelled")
    shown = cli("runs", "show", stopped["run_id"]).output
    assert "SIGTERM" in shown
    paused = next(r for r in runs if r["status"] == "answered")
    assert paused["decisions"] == ["rejected"]
    record = json.loads(cli("runs", "show", paused["run_id"], "--json").stdout)
    assert t("mcp.withdrawn") in json.dumps(record, ensure_ascii=False)


@pytest.mark.slow
def test_hosts_with_a_1s_timeout_and_a_person_who_takes_3s_then_a_lookup(orders, tmp_path) -> None:
    """The SDK's client stops its request clock while its person is asked: with a 1 s
    timeout and a person who takes 3 s, the cancel is approved and carried out. A host whose
    own 1 s timeout runs on withdraws the call instead: the person's yes at 3 s runs nothing.
    Either way the next lookup is answered at once."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "orderbot", "mcp", "--user", "C001", "--orders", str(orders)],
        env=dict(os.environ), cwd=str(tmp_path),
    )  # fmt: skip
    answered: list[anyio.Event] = []

    async def person(ctx, params) -> types.ElicitResult:
        done = anyio.Event()
        answered.append(done)
        with anyio.CancelScope(shield=True):  # a person answers whatever the client does meanwhile
            await anyio.sleep(3)  # real time past the host's timeout is the point here
        done.set()
        return types.ElicitResult(action="accept", content={"approve": True})

    async def main():
        async with Client(server, elicitation_callback=person) as client:
            with anyio.fail_after(60):
                approved = await client.call_tool("cancel_order", CANCEL, read_timeout_seconds=1.0)
                first = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
                with anyio.move_on_after(1.0) as own_timeout:  # a host's own timeout, which runs on
                    await client.call_tool("cancel_order", {**CANCEL, "order_id": "ORD-1013"}, read_timeout_seconds=1.0)
                began = time.monotonic()
                second = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
                took = time.monotonic() - began
                await answered[-1].wait()  # the person's late yes has gone out
                after = await client.call_tool("get_order_status", {"order_id": "ORD-1013"})
            return approved, first, own_timeout.cancelled_caught, second, took, after

    approved, first, timed_out, second, took, after = anyio.run(main)
    assert envelope(approved)["data"]["status"] == status(orders) == "已取消"
    assert envelope(first)["data"]["status"] == envelope(second)["data"]["status"] == "已发货"
    assert timed_out and on_time(took, 1.0, slack=0.0), took
    assert envelope(after)["data"]["status"] == status(orders, "ORD-1013") == "待付款"


@pytest.mark.slow
def test_a_call_cancelled_before_the_engine_takes_it_never_runs(orders, tmp_path) -> None:
    """A host that sends a call and cancels it at once (both in one write): the call is never
    answered and never runs; the next one is answered, and it is the only call recorded."""
    server = Raw(orders, tmp_path)
    try:
        server.start()
        cancel = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
        params = {"name": "cancel_order", "arguments": CANCEL}
        call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        server.process.stdin.write(call + "\n" + cancel + "\n")
        server.call(3, "get_order_status", {"order_id": "ORD-1001"})
        lookup = server.reply(3)
        server.process.stdin.close()
        rest = []
        while (message := server.messages.get(timeout=30)) is not None:
            rest.append(message)
        code = server.process.wait(timeout=30)
    finally:
        server.close()
    assert lookup["result"]["structuredContent"]["data"]["status"] == "已发货" and code == 0
    assert not [m for m in server.seen + rest if m.get("id") == 2 or m.get("method") == "elicitation/create"]
    runs = json.loads(cli("runs", "--json").stdout)
    assert [r["tool_calls"] for r in runs] == [1] and status(orders) == "处理中"


@pytest.mark.slow
def test_a_hundred_lookups_while_a_person_thinks_are_answered_over_stdio(orders, tmp_path) -> None:
    """The jam, over the real pipes: a cancel whose person is asked, then a hundred lookups at
    once; all are answered before the person answers, and then the approval is taken."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "orderbot", "mcp", "--user", "C001", "--orders", str(orders), "--max-tool-calls", "200"],
        env=dict(os.environ), cwd=str(tmp_path),
    )  # fmt: skip
    person = Person()

    async def main():
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            return await fan_out_while_asked(client, person, CANCEL)

    replies, answered_before = anyio.run(main)
    assert answered_before == 100 and len(person.questions) == 1
    assert all(envelope(r)["data"]["status"] == "已发货" for r in replies[:100])
    assert envelope(replies[100])["data"]["status"] == status(orders) == "已取消"
