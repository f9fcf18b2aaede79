"""The real `orderbot mcp` over standard input/output, as a host starts it, driven by the mcp
package's own client: one session for the whole story (a lookup, a refusal, a cancel the
client cannot ask about, approved by `orderbot approvals approve` in another process and
carried out once), and one raw session for malformed JSON-RPC."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import anyio
import pytest
from clikit import cli
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcpkit import envelope

from orderbot.shops.sample.model import SAMPLE_PATH

CANCEL = {"order_id": "ORD-1002", "reason": "no longer needed"}


@pytest.fixture
def orders(tmp_path):
    path = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, path)
    return path


def orderbot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "orderbot", *args], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )


def status(orders, order_id: str = "ORD-1002") -> str:
    document = json.loads(orders.read_text(encoding="utf-8"))
    return next(o["status"] for o in document["orders"] if o["order_id"] == order_id)


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
        while {1, 2, 3, 4} - {r.get("id") for r in replies}:
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
    assert json.loads(by_id[4]["result"]["content"][0]["text"])["data"]["status"] == "已发货"
