"""Many servers, one PostgreSQL: two `orderbot mcp --http` processes on docs/team.md's team
database (desk1's and desk3's roles), as a load balancer would put them side by side. They
share the tokens (one made by desk1 is taken by both, and refused by both once revoked), the
approval queue and the audit chain: a cancel queued through one, approved by desk2 at her
desk, is reported approved by the other and executed once; a 2026-07-28 question one asks is
answered through the other, once. The mcp package's own client over streamable HTTP."""

from __future__ import annotations

import json

import anyio
import httpx2
import mcp_types as types
import psycopg
import pytest
from httpkit import connected, serving
from mcpkit import approving, envelope
from teamkit import make_team, run

pytestmark = pytest.mark.slow  # a cluster and two servers of their own
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture
def team(postgres_server, tmp_path):
    database = f"servers_{tmp_path.name[-20:].replace('-', '_').lower()}"
    yield make_team(postgres_server, database)
    postgres_server.drop_database(database)


def status(url: str, order_id: str) -> str:
    with psycopg.connect(url) as connection:
        return connection.execute("SELECT status FROM orders WHERE order_id = %s", (order_id,)).fetchone()[0]


def test_two_servers_share_tokens_the_queue_and_the_audit_chain(team, tmp_path) -> None:
    desk1, desk2, desk3 = team("desk1"), team("desk2"), team("desk3")
    made = run("mcp", "tokens", "add", "--customer", "C001", "--runs", desk1)
    assert made.exit_code == 0, made.output
    token, token_id = made.stdout.strip(), made.stderr.split("Token ", 1)[1].split()[0]
    one = ["--runs", desk1, "--orders", desk1]
    other = ["--runs", desk3, "--orders", desk3]
    with serving(*one, cwd=tmp_path) as first, serving(*other, cwd=tmp_path) as second:

        async def queued_on_one_reported_on_the_other():
            async with connected(first.url, token=token) as client:  # no person to ask: the queue
                queued = envelope(await client.call_tool("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}))
            run_id = queued["data"]["run_id"]
            approved = await anyio.to_thread.run_sync(
                run, "approvals", "approve", run_id, "--runs", desk2, "--orders", desk2
            )
            async with connected(second.url, token=token) as client:
                reported = envelope(await client.call_tool("check_approval", {"run_id": run_id}))
                waiting = envelope(await client.call_tool("check_approval", {}))
            return queued, approved, reported, waiting

        async def asked_by_one_answered_through_the_other():
            async with connected(first.url, token=token, mode="auto", elicitation_callback=approving([])) as client:
                asked = await client.session.call_tool(
                    "cancel_order", {"order_id": "ORD-1013", "reason": "不要了"}, allow_input_required=True
                )
            yes = {"approval": types.ElicitResult(action="accept", content={"approve": True})}
            async with connected(second.url, token=token, mode="auto", elicitation_callback=approving([])) as client:
                answered = await client.session.call_tool(
                    "cancel_order",
                    {"order_id": "ORD-1013", "reason": "不要了"},
                    allow_input_required=True,
                    input_responses=yes,
                    request_state=asked.request_state,
                )
            return asked, answered

        queued, approved, reported, waiting = anyio.run(queued_on_one_reported_on_the_other)
        asked, answered = anyio.run(asked_by_one_answered_through_the_other)
        assert run("mcp", "tokens", "revoke", token_id, "--runs", desk1).exit_code == 0
        revoked = [
            httpx2.post(server.url, json=PING, headers={"Authorization": f"Bearer {token}"}).status_code
            for server in (first, second)
        ]
    assert queued["data"]["status"] == "awaiting_approval"
    assert approved.exit_code == 0, approved.output
    assert reported["data"]["status"] == "approved" and reported["data"]["result"]["data"]["status"] == "已取消"
    assert waiting["data"]["waiting"] == []
    assert isinstance(asked, types.InputRequiredResult)
    assert envelope(answered)["data"]["status"] == "已取消"
    assert status(desk1, "ORD-1002") == status(desk1, "ORD-1013") == "已取消"
    assert revoked == [401, 401]
    audit = json.loads(run("audit", "--json", "--runs", desk2).stdout)
    executed = sorted((e["arguments"], e["decided_by"]) for e in audit if e["event"] == "executed")
    assert [json.loads(arguments)["order_id"] for arguments, _ in executed] == ["ORD-1002", "ORD-1013"]
    assert sorted(by for _, by in executed) == ["desk2", "desk3"]  # each executed once, by who approved it
    assert run("audit", "--verify", "--runs", desk2).exit_code == 0
