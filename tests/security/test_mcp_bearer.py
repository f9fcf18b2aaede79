"""Bearer tokens of the real `orderbot mcp --http` (the mcp package's own client and plain
HTTP): a token for C001 never reads C002's order, not by a lookup, not by check_approval of
C002's queued cancel, not by the connection C002's token opened; a revoked token is refused at
the very next request; a client without a token is refused once tokens exist, on loopback
too; and the token itself is in no file the server wrote, no log and no output but the one
line `tokens add` printed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import httpx2
import pytest
from clikit import cli
from httpkit import connected, serving
from mcpkit import envelope

from orderbot.shops.sample.model import SAMPLE_PATH

pytestmark = pytest.mark.slow  # a server of their own
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A server over the sample orders (no --user), with tokens for C001 and C002 in its store;
    the state directory, the tokens (by customer), and every line the tokens' commands printed."""
    work = tmp_path_factory.mktemp("bearer")
    orders = work / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    env = {"ORDERBOT_STATE_DIR": str(work / "state")}
    printed, secrets = [], {}
    for customer in ("C001", "C002"):
        made = cli("mcp", "tokens", "add", "--customer", customer, env=env)
        assert made.exit_code == 0, made.output
        secrets[customer] = made.stdout.strip()
        printed.append(made.stderr)
    with serving("--orders", str(orders), env=env, cwd=work) as server:
        yield server, work, secrets, printed, env


def test_a_token_for_c001_never_reads_c002s_order(shop) -> None:
    server, _, secrets, _, _ = shop

    async def main():
        async with connected(server.url, token=secrets["C002"]) as theirs:
            queued = envelope(await theirs.call_tool("cancel_order", {"order_id": "ORD-1008", "reason": "不要了"}))
        async with connected(server.url, token=secrets["C001"], mode="auto") as mine:
            lookup = envelope(await mine.call_tool("get_order_details", {"order_id": "ORD-1008"}))
            own = envelope(await mine.call_tool("list_my_orders", {}))
            check = envelope(await mine.call_tool("check_approval", {"run_id": queued["data"]["run_id"]}))
            listed = envelope(await mine.call_tool("check_approval", {}))
        return queued, lookup, own, check, listed

    queued, lookup, own, check, listed = anyio.run(main)
    assert queued["data"]["status"] == "awaiting_approval"
    assert lookup["code"] == "no_access"
    assert {o["order_id"] for o in own["data"]["orders"]} == {
        "ORD-1001",
        "ORD-1002",
        "ORD-1007",
        "ORD-1010",
        "ORD-1013",
    }
    assert check["code"] == "unknown_run"  # as for no run at all
    assert listed["data"]["waiting"] == []


def test_a_connection_opened_with_one_token_is_not_served_to_another(shop) -> None:
    server, _, secrets, _, _ = shop
    with httpx2.Client(timeout=30) as http:
        opened = http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {secrets['C002']}"})
        assert opened.status_code == 200
        connection = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        borrowed = http.post(
            server.url,
            json=listing,
            headers={**HEADERS, "Authorization": f"Bearer {secrets['C001']}", "Mcp-Session-Id": connection},
        )
        tokenless = http.post(server.url, json=listing, headers={**HEADERS, "Mcp-Session-Id": connection})
    assert borrowed.status_code == 404  # as if the connection did not exist
    assert tokenless.status_code == 401


def test_a_revoked_token_is_refused_at_once_and_a_forged_one_always(shop) -> None:
    server, _, _, _, env = shop
    made = cli("mcp", "tokens", "add", "--customer", "C003", env=env)
    secret, token_id = made.stdout.strip(), made.stderr.split("Token ", 1)[1].split()[0]
    with httpx2.Client(timeout=30) as http:
        before = http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {secret}"})
        assert cli("mcp", "tokens", "revoke", token_id, env=env).exit_code == 0
        after = http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {secret}"})
        forged = [
            http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {value}"})
            for value in (secret[:-1] + ("A" if secret[-1] != "A" else "B"), "obt_" + "A" * 43, "x" * 20)
        ]
    assert before.status_code == 200
    assert after.status_code == 401 and after.json()["error"] == "invalid_token"
    assert [r.status_code for r in forged] == [401, 401, 401]


def test_the_token_is_in_no_file_no_log_and_no_output_but_its_one_line(shop) -> None:
    server, work, secrets, printed, _ = shop
    with httpx2.Client(timeout=30) as http:  # a wrong token and a right one, for the log to have something
        http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {secrets['C001']}x"})
        http.post(server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {secrets['C001']}"})
    listed = cli("mcp", "tokens", "list", env={"ORDERBOT_STATE_DIR": str(work / "state")}).output
    server.process.terminate()
    server.process.wait(timeout=30)
    said = server.log() + listed + "".join(printed)
    state = Path(work / "state")
    assert (state / "orderbot.log").exists() and (state / "runs.db").exists()
    for secret in secrets.values():
        assert secret not in said
        assert [p for p in work.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []
    assert not os.environ.get("ORDERBOT_MCP_TOKEN")
