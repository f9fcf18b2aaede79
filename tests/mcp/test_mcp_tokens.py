"""Identity from the bearer token: `orderbot mcp tokens add` makes a token for one customer
(shown once, its hash kept in the run store), the real `orderbot mcp --http` binds each
client to the customer its token names (the mcp package's own client over streamable HTTP,
in both protocol eras), a client without a token is refused once tokens exist (loopback too),
and a revoked token is refused at the next request."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import httpx2
import pytest
from clikit import cli
from httpkit import connected, serving
from mcp.shared.exceptions import MCPError
from mcpkit import envelope

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def add(*args: str) -> tuple[str, str]:
    """A new token (standard output: the token alone) and its id (named on standard error)."""
    made = cli("mcp", "tokens", "add", *args)
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    token_id = made.stderr.split("Token ", 1)[1].split()[0]
    return token, token_id


def files_holding(secret: str, *folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.slow
def test_tokens_for_c001_and_c002_each_see_their_own_orders_and_nothing_else(orders, tmp_path) -> None:
    c001, _ = add("--customer", "C001")
    c002, c002_id = add("--customer", "C002", "--expires", "30d")
    listed = json.loads(cli("mcp", "tokens", "list", "--json").stdout)
    assert sorted((t["customer"], t["state"]) for t in listed) == [("C001", "active"), ("C002", "active")]

    with serving("--orders", str(orders), "--user", "C003", cwd=tmp_path) as server:  # a token's customer wins

        async def reads(token: str, mode: str) -> dict:
            async with connected(server.url, token=token, mode=mode) as client:
                return {
                    order: envelope(await client.call_tool("get_order_details", {"order_id": order}))
                    for order in ("ORD-1001", "ORD-1003", "ORD-1005")
                }

        async def main():
            return {
                (who, mode): await reads(token, mode)
                for who, token in (("C001", c001), ("C002", c002))
                for mode in ("legacy", "auto")
            }

        seen = anyio.run(main)
        tokenless = httpx2.post(server.url, json=PING)
    for (who, _mode), replies in seen.items():
        own = {"C001": "ORD-1001", "C002": "ORD-1003"}[who]
        assert replies[own]["ok"] and replies[own]["data"]["order_id"] == own, replies
        assert all(r["code"] == "no_access" for order, r in replies.items() if order != own), replies
    assert tokenless.status_code == 401 and tokenless.headers["www-authenticate"] == 'Bearer realm="orderbot"'
    state = Path(os.environ["ORDERBOT_STATE_DIR"])
    assert files_holding(c001, state, tmp_path) == files_holding(c002, state, tmp_path) == []


@pytest.mark.slow
def test_a_revoked_token_is_refused_at_its_next_request(orders, tmp_path) -> None:
    token, token_id = add("--customer", "C001")

    with serving("--orders", str(orders), cwd=tmp_path) as server:

        async def main():
            async with connected(server.url, token=token) as client:
                before = envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"}))
                revoked = await anyio.to_thread.run_sync(cli, "mcp", "tokens", "revoke", token_id)
                try:
                    after = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
                except MCPError as refused:
                    after = refused
                return before, revoked, after

        before, revoked, after = anyio.run(main)
        fresh = httpx2.post(server.url, json=PING, headers={"Authorization": f"Bearer {token}"})
    assert before["ok"]
    assert revoked.exit_code == 0 and token_id in revoked.stdout
    assert isinstance(after, MCPError), after  # the connection's next request: 401, which the client raises
    assert fresh.status_code == 401 and 'error="invalid_token"' in fresh.headers["www-authenticate"]
    again = cli("mcp", "tokens", "revoke", token_id)
    assert again.exit_code == 0 and "already revoked" in again.stdout
    listed = json.loads(cli("mcp", "tokens", "list", "--json").stdout)
    assert [t["state"] for t in listed] == ["revoked"]


def test_tokens_add_list_revoke_on_the_command_line() -> None:
    none = cli("mcp", "tokens", "list")
    assert none.exit_code == 0 and "No tokens" in none.stdout
    neither = cli("mcp", "tokens", "add")
    both = cli("mcp", "tokens", "add", "--customer", "C001", "--operator", "me")
    assert neither.exit_code == both.exit_code == 2 and "--customer ID or --operator NAME" in neither.stderr
    past = cli("mcp", "tokens", "add", "--customer", "C001", "--expires", "2001-01-01")
    assert past.exit_code == 2 and "not in the future" in past.stderr
    bad = cli("mcp", "tokens", "add", "--customer", "C001", "--expires", "soon")
    assert bad.exit_code == 2 and "90m" in bad.stderr
    other = cli("mcp", "tokens", "add", "--operator", "someone-else")
    assert other.exit_code == 9 and "only in its own name" in other.stderr
    token, token_id = add("--customer", "C001", "--expires", "2w")
    assert token.startswith("obt_") and len(token) == 47 and token_id in cli("mcp", "tokens", "list").stdout
    assert token not in cli("mcp", "tokens", "list").output
    unknown = cli("mcp", "tokens", "revoke", "000000000000")
    assert unknown.exit_code != 0 and "no token 000000000000" in unknown.stderr
    assert "Traceback" not in neither.output + past.output + other.output + unknown.output


def test_the_token_connection_is_made_again_when_it_fails_and_a_store_that_cannot_answer_refuses(tmp_path) -> None:
    """A server outlives its database's restarts: the tokens' connection that fails is made
    again once; a store that still cannot answer is an error (503 over HTTP), never a yes."""
    from orderbot.errors import RecordError
    from orderbot.mcp import server
    from orderbot.mcp.identity import Authenticator, StoreTokens
    from orderbot.runs.sqlite import SqliteRunStore
    from orderbot.runs.tokens import new_token, token_hash

    state = tmp_path / "state"
    made = SqliteRunStore.in_state_dir(state)
    secret = new_token()
    made.add_token(token_hash(secret), customer="C001", operator=None, expires_at=None)
    made.close()
    opened = []

    def open_store():
        opened.append(SqliteRunStore.in_state_dir(state))
        return opened[-1]

    tokens = StoreTokens(open_store)
    opened[0].connection.close()  # the connection is gone (a restarted server)
    assert tokens.principal(secret).customer == "C001" and len(opened) == 2
    tokens.close()

    def then_unreachable():
        if opened:
            raise RecordError("runs.store_lost", where="postgresql://db/shop")
        return open_store()

    opened.clear()
    failing = StoreTokens(then_unreachable)
    opened[0].connection.close()
    with pytest.raises(RecordError):
        failing.principal(secret)
    sent = []

    async def send(message):
        sent.append(message)

    async def nothing(scope, receive, send):
        raise AssertionError("the request reached the server")

    guard = server.bearer(nothing, Authenticator([failing], tokens=failing))
    scope = {"type": "http", "path": "/mcp", "headers": [(b"authorization", f"Bearer {secret}".encode())]}
    anyio.run(guard, scope, None, send)
    assert sent[0]["status"] == 503 and secret.encode() not in sent[1]["body"]
