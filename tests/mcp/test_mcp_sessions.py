"""One `orderbot mcp --http` for many conversations: each client of the server (the mcp
package's own client over streamable HTTP) has its own session, with its own signed-in
customer, call window and chain of runs; none reads, spends or answers another's. Idle
sessions end, their runs closed (a clock the test moves)."""

from __future__ import annotations

import json
import shutil

import anyio
import pytest
from clikit import cli
from httpkit import connected, serving
from mcpkit import Clock, Served, envelope

from orderbot.i18n import t
from orderbot.shops.sample.model import SAMPLE_PATH

RETAIL = SAMPLE_PATH.parents[3] / "tests" / "fixtures" / "tau2-retail" / "db.json"
OLIVIA, OLIVIA_EMAIL, PENDING = "olivia_ito_3591", "olivia.ito5204@example.com", "#W5442520"
WINDOW = 4  # calls each client may make in the window (a minute)


@pytest.fixture(scope="module")
def retail_server(tmp_path_factory):
    """One server over a copy of the retail shop, nobody signed in, 4 calls a minute per client."""
    work = tmp_path_factory.mktemp("retail-http")
    shop = work / "db.json"
    shutil.copyfile(RETAIL, shop)
    env = {"ORDERBOT_STATE_DIR": str(work / "state")}
    with serving("--orders", str(shop), "--max-tool-calls", str(WINDOW), env=env, cwd=work) as server:
        yield server


def details(order_id: str = PENDING) -> tuple[str, dict]:
    return "get_order_details", {"order_id": order_id}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "auto-falls-back-to-the-handshake"])
def test_two_clients_one_signed_in_the_other_refused_her_order(retail_server, mode) -> None:
    """Client A signs Olivia in with her e-mail and reads her order; client B, connected to the
    same server at the same time, is refused it: its session has no customer. Without a
    token a 2026-07-28 client has nothing to tell it from others, so the SDK's client in
    `auto` mode falls back to the handshake, whose connection is the client."""

    async def main():
        async with connected(retail_server.url, mode=mode) as a, connected(retail_server.url, mode=mode) as b:
            signed_in = envelope(await a.call_tool("find_user_id_by_email", {"email": OLIVIA_EMAIL}))
            hers = envelope(await a.call_tool(*details()))
            refused = envelope(await b.call_tool(*details()))
            still_hers = envelope(await a.call_tool(*details()))
            return signed_in, hers, refused, still_hers

    signed_in, hers, refused, still_hers = anyio.run(main)
    assert signed_in["ok"] and hers["ok"] and hers["data"]["order_id"] == PENDING, hers
    assert refused["ok"] is False and refused["code"] == "sign_in_required", refused
    assert still_hers["ok"], still_hers


@pytest.mark.slow
def test_one_client_past_its_window_the_other_served(retail_server) -> None:
    async def main():
        async with connected(retail_server.url) as a, connected(retail_server.url) as b:
            spent = [envelope(await a.call_tool(*details())) for _ in range(WINDOW)]
            past = envelope(await a.call_tool(*details()))
            other = envelope(await b.call_tool(*details()))
            return spent, past, other

    spent, past, other = anyio.run(main)
    assert [e["code"] for e in spent] == ["sign_in_required"] * WINDOW  # served: refused by the shop, not the rate
    assert past["code"] == "rate_limited" and past["retry_after"] > 0
    assert other["code"] == "sign_in_required"  # the other client's calls are its own


def test_each_connection_has_its_own_session_and_an_idle_one_ends_with_its_run_closed(tmp_path) -> None:
    """In process, with the clock moved by hand: two connections, two sessions and chains of
    runs; after the idle time the one nobody used ends (its run closed, as answered), and
    the connection is told its session ended; the other, still used, goes on."""
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    clock = Clock()
    served = Served(orders, tmp_path / "state", user="C001", now=clock)
    sessions = served.sessions
    idle = sessions.idle

    async def lookup(session):
        return (await session.call("get_order_status", {"order_id": "ORD-1001"})).envelope

    try:
        first, second = sessions.of_connection("one", None), sessions.of_connection("two", None)
        assert first is not second and sessions.of_connection("one", None) is first
        answers = [anyio.run(lookup, first), anyio.run(lookup, second)]
        clock.now += idle - 1
        anyio.run(lookup, second)
        assert sessions.sweep() == 0
        clock.now += 1
        assert sessions.sweep() == 1  # "one", idle for the whole time; "two" was used a second ago
        gone = sessions.of_connection("one", None)
        ended = anyio.run(lookup, gone)
        still = anyio.run(lookup, sessions.of_connection("two", None))
    finally:
        served.close()
        sessions.close()
    assert all(a["data"]["status"] == "已发货" for a in answers) and still["ok"]
    assert ended["code"] == "session_ended" and ended["error"] == t("mcp.session_closed")
    (run_one,) = first.runs
    record = served.runs.load(run_one)
    assert record.state.stop_reason == "answered" and run_one not in second.runs
    shown = json.loads(cli("runs", "show", run_one, "--json").stdout)
    assert shown["state"]["stop_reason"] == "answered"


def test_a_customers_token_binds_her_and_no_sign_in_switches_it(tmp_path) -> None:
    """The session a customer's token opens (as orderbot.mcp.server finds it for a request
    with that token) is hers from its first call: a sign-in lookup of another customer is
    refused, and so is her order."""
    from orderbot.mcp.sessions import Principal

    shop = tmp_path / "db.json"
    shutil.copyfile(RETAIL, shop)
    served = Served(shop, tmp_path / "state")
    sophia_email, sophias_order = "sophia.thomas1364@example.com", "#W4862767"
    olivia = served.sessions.of_principal(Principal(key="token:x", customer=OLIVIA, label="customer olivia"))

    async def calls():
        switch = await olivia.call("find_user_id_by_email", {"email": sophia_email})
        theirs = await olivia.call("get_order_details", {"order_id": sophias_order})
        hers = await olivia.call("get_order_details", {"order_id": PENDING})
        return switch.envelope, theirs.envelope, hers.envelope

    try:
        switch, theirs, hers = anyio.run(calls)
    finally:
        served.sessions.close()
        served.close()
    assert switch["code"] == "other_customer" and theirs["code"] == "no_access"
    assert hers["ok"] and hers["data"]["order_id"] == PENDING
    (run_id,) = olivia.runs
    record = served.runs.load(run_id)
    assert record.state.user == OLIVIA and "customer olivia" in record.state.question
