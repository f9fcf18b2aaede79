"""An operator's token under four eyes, on docs/team.md's PostgreSQL with four eyes on for
everyone: desk1's token makes an MCP client desk1, whose server logs in as desk3. The host's
person is never asked (desk1 may not approve at her own prompt either); the cancel waits in
the queue, desk1 cannot approve it at her desk (the run was asked for on her behalf), and
desk2 can, once."""

from __future__ import annotations

import json

import anyio
import psycopg
import pytest
from httpkit import connected, serving
from mcpkit import approving, envelope
from teamkit import make_team, run, sql_block, statements

from orderbot.errors import ExitCode

pytestmark = pytest.mark.slow  # a cluster and a server of their own


@pytest.fixture
def team(postgres_server, tmp_path):
    database = f"optoken_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team(postgres_server, database)
    with psycopg.connect(url("runs_owner"), autocommit=True) as owner:
        for statement in statements(sql_block("as runs_owner: four eyes for everyone")):
            owner.execute(statement)
        owner.execute("DELETE FROM run_approvers")  # four eyes alone: any other desk may approve
    yield url
    postgres_server.drop_database(database)


def test_a_client_acting_as_desk1_cannot_have_desk1_approve_what_it_asked_for(team, tmp_path) -> None:
    desk1, desk2, desk3 = team("desk1"), team("desk2"), team("desk3")
    made = run("mcp", "tokens", "add", "--operator", "desk1", "--runs", desk1)
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    asked: list[str] = []
    with serving("--runs", desk3, "--orders", desk3, "--user", "C001", cwd=tmp_path) as server:

        async def main():
            async with connected(server.url, token=token, elicitation_callback=approving(asked)) as client:
                return envelope(await client.call_tool("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}))

        queued = anyio.run(main)
    assert asked == [] and queued["data"]["status"] == "awaiting_approval"
    run_id = queued["data"]["run_id"]
    shown = json.loads(run("runs", "show", run_id, "--json", "--runs", desk1).stdout)
    assert [s.get("on_behalf_of") for s in shown["segments"]] == ["desk1"]
    assert "operator desk1, token" in shown["state"]["question"]
    hers = run("approvals", "approve", run_id, "--runs", desk1, "--orders", desk1)
    assert hers.exit_code == ExitCode.REFUSED and "four eyes" in hers.stderr
    theirs = run("approvals", "approve", run_id, "--runs", desk2, "--orders", desk2)
    assert theirs.exit_code == 0, theirs.output
    executed = [e for e in json.loads(run("audit", "--json", "--runs", desk2).stdout) if e["event"] == "executed"]
    assert [(e["run_id"], e["decided_by"]) for e in executed] == [(run_id, "desk2")]
