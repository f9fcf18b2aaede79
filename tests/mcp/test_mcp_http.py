"""The real `orderbot mcp --http` on loopback, driven by the mcp package's own client over
streamable HTTP: one server, behind a bearer token (as --allow-remote requires), for the
requests without it (401), a lookup, and a cancel the person in the host approves. The
address and token checks of the command are quick tests of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from clikit import cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcpkit import Person, envelope, fan_out_while_asked

TOKEN = "s3cret-token-for-the-test-0123456789"


@pytest.mark.slow
def test_streamable_http_behind_a_bearer_token(orders, tmp_path) -> None:
    env = {**os.environ, "ORDERBOT_MCP_TOKEN": TOKEN}
    command = ["mcp", "--user", "C001", "--orders", str(orders), "--http", "127.0.0.1:0", "--allow-remote"]
    command += ["--max-tool-calls", "200"]
    server = subprocess.Popen(
        [sys.executable, "-m", "orderbot", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    watchdog = threading.Timer(60, server.kill)  # a server that stops answering fails the test, never hangs it
    watchdog.start()
    try:
        listening = server.stderr.readline()
        url = listening.split(" on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), listening
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        refused = [
            httpx2.post(url, json=ping, headers=headers)
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN})
        ]
        asked: list[str] = []

        async def person(ctx, params) -> types.ElicitResult:  # yes to ORD-1002, no to anything else
            asked.append(params.message)
            if "ORD-1002" in params.message:
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action="decline")

        thinking = Person(action="decline")

        async def main():
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode="legacy", elicitation_callback=person) as client:
                    tools = (await client.list_tools()).tools
                    lookup = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
                    cancelled = await client.call_tool("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"})
                    declined = await client.call_tool("cancel_order", {"order_id": "ORD-1013", "reason": "不要了"})
                # A second client whose person thinks while a hundred lookups go out at once.
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode="legacy", elicitation_callback=thinking) as client:
                    fanned = await fan_out_while_asked(client, thinking, {"order_id": "ORD-1013", "reason": "不要了"})
                return tools, lookup, cancelled, declined, fanned

        tools, lookup, cancelled, declined, (replies, answered_before) = anyio.run(main)
    finally:
        watchdog.cancel()
        server.terminate()
        server.wait(timeout=30)
    assert [r.status_code for r in refused] == [401, 401, 401]
    missing, wrong, schemeless = refused
    assert missing.headers["www-authenticate"] == schemeless.headers["www-authenticate"] == 'Bearer realm="orderbot"'
    assert missing.json()["error"] == "unauthorized" and "bearer token" in missing.json()["error_description"]
    # RFC 6750: a token that is not the one says so, and an OAuth client does not take it for "log in".
    assert wrong.headers["www-authenticate"].startswith('Bearer realm="orderbot", error="invalid_token"')
    assert wrong.json() == {
        "error": "invalid_token",
        "error_description": "the bearer token is not valid for this server",
    }
    assert next(t for t in tools if t.name == "get_order_status").annotations == types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    assert envelope(lookup)["data"]["status"] == "已发货"
    assert len(asked) == 2 and envelope(cancelled)["data"]["status"] == "已取消"
    assert envelope(declined)["code"] == "rejected"
    assert answered_before == 100 and all(envelope(r)["data"]["status"] == "已发货" for r in replies[:100])
    assert envelope(replies[100])["code"] == "rejected"  # that person said no, after the lookups
    statuses = {o["order_id"]: o["status"] for o in json.loads(orders.read_text(encoding="utf-8"))["orders"]}
    assert (statuses["ORD-1002"], statuses["ORD-1013"]) == ("已取消", "待付款")
    state = Path(os.environ["ORDERBOT_STATE_DIR"])  # records, the audit log, orderbot.log
    assert (state / "orderbot.log").exists()
    assert not [p for p in state.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    executed = [e for e in json.loads(cli("audit", "--json").stdout) if e["event"] == "executed"]
    assert [e["tool"] for e in executed] == ["cancel_order"]


def test_beyond_loopback_needs_allow_remote_and_a_token_and_flags_are_checked_first(orders) -> None:
    remote = cli("mcp", "--orders", str(orders), "--http", "0.0.0.0:8765")
    assert remote.exit_code == 2 and "--allow-remote" in remote.stderr
    tokenless = cli("mcp", "--orders", str(orders), "--http", "0.0.0.0:8765", "--allow-remote")
    assert tokenless.exit_code == 6 and "ORDERBOT_MCP_TOKEN" in tokenless.stderr
    short = cli("mcp", "--http", "0.0.0.0:8765", "--allow-remote", env={"ORDERBOT_MCP_TOKEN": "short"})
    assert short.exit_code == 6 and "short" not in short.stderr
    bad = cli("mcp", "--http", "nowhere")
    assert bad.exit_code == 2 and "HOST:PORT" in bad.stderr
    window = cli("mcp", "--window", "0")
    assert window.exit_code == 2 and "--window" in window.stderr
    assert "Traceback" not in remote.stderr + tokenless.stderr + bad.stderr + window.stderr
