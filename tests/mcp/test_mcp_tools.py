"""`orderbot mcp` through the mcp package's own client (in-process): the session shop's tools
with their schemas and annotations, calls through the same dispatch and record as a run's,
identity from the session, and the caps of a run holding without ending the server."""

from __future__ import annotations

import json
import shutil

import anyio
import pytest
from clikit import cli
from mcpkit import Served, envelope

from orderbot.models.mcp_client import BusyClock
from orderbot.shops.sample.model import SAMPLE_PATH


@pytest.fixture
def orders(tmp_path):
    path = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, path)
    return path


@pytest.fixture
def served(orders, tmp_path):
    served = Served(orders, tmp_path / "state", user="C001")
    yield served
    served.close()


def test_the_tools_are_the_shops_with_their_strict_schemas_and_annotations(served) -> None:
    async def script(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in served.drive(script)}
    specs = {spec["name"]: spec for spec in served.shop.toolbox.specs}
    assert set(tools) == {*specs, "check_approval"}
    for name, spec in specs.items():
        assert tools[name].input_schema == spec["parameters"]
        assert tools[name].input_schema["additionalProperties"] is False
    assert tools["cancel_order"].annotations.destructive_hint is True
    assert tools["cancel_order"].annotations.read_only_hint is False
    for name in ("get_order_status", "get_order_details", "list_my_orders", "check_approval"):
        assert tools[name].annotations.read_only_hint is True, name
    assert not any("user" in json.dumps(tool.input_schema) for tool in tools.values())  # no tool takes who


def test_a_lookup_answers_and_another_customers_order_is_refused(served) -> None:
    async def script(client):
        mine = await client.call_tool("get_order_details", {"order_id": "ORD-1001"})
        theirs = await client.call_tool("get_order_details", {"order_id": "ORD-1003"})
        named = await client.call_tool("list_my_orders", {"user_id": "C002"})
        unknown = await client.call_tool("drop_table", {})
        return mine, theirs, named, unknown

    mine, theirs, named, unknown = served.drive(script)
    assert not mine.is_error and envelope(mine)["data"]["order_id"] == "ORD-1001"
    assert theirs.is_error and envelope(theirs)["code"] == "no_access"
    assert "C002" not in theirs.content[0].text
    assert named.is_error and envelope(named)["code"] == "invalid_arguments"  # the client cannot name a customer
    assert unknown.is_error and envelope(unknown)["code"] == "unknown_tool"


def test_the_session_is_a_run_of_kind_mcp_in_runs_show_and_replay(served) -> None:
    async def script(client):
        await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
        await client.call_tool("get_order_details", {"order_id": "ORD-1003"})

    served.drive(script)
    (run_id,) = served.session.runs
    record = served.runs.load(run_id)
    assert [s.kind for s in record.segments] == ["mcp"]
    assert [(c.name, c.decision) for c in record.state.calls] == [
        ("get_order_status", "executed"),
        ("get_order_details", "no_access"),
    ]
    listed = cli("runs")
    assert run_id in listed.output and "MCP session" in listed.output
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0 and "get_order_details" in shown.output and "no_access" in shown.output
    replayed = cli("replay", run_id, "--orders", str(served.shop.source.path))
    assert replayed.exit_code == 0, replayed.output


def test_a_flood_of_calls_stops_at_the_sessions_cap_and_the_server_still_answers(orders, tmp_path) -> None:
    served = Served(orders, tmp_path / "state", user="C001", max_tool_calls=3)

    async def script(client):
        replies = [await client.call_tool("get_order_status", {"order_id": "ORD-1001"}) for _ in range(5)]
        return replies, await client.list_tools()

    try:
        replies, listing = served.drive(script)
    finally:
        served.close()
    assert [r.is_error for r in replies] == [False, False, False, True, True]
    assert envelope(replies[3])["code"] == envelope(replies[4])["code"] == "tool_call_limit"
    assert listing.tools  # a protocol request still answered
    (run_id,) = served.session.runs
    state = served.runs.load(run_id).state
    assert state.tool_calls == 3 and state.stop_reason == "tool_call_limit"
    assert state.calls[-1].decision == "not_executed"  # the fourth was proposed, never run


def test_huge_arguments_are_refused_without_ending_the_session(served) -> None:
    async def script(client):
        huge = await client.call_tool("get_order_status", {"order_id": "x" * 50_000})
        after = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})
        return huge, after

    huge, after = served.drive(script)
    assert huge.is_error and envelope(huge)["code"] == "too_large"
    assert len(huge.content[0].text) < 500
    assert not after.is_error


def test_what_a_store_holds_reaches_the_client_escaped(orders, tmp_path) -> None:
    document = json.loads(orders.read_text(encoding="utf-8"))
    document["orders"][0]["items"][0]["name"] = "龙井\x1b]8;;http://evil\x07\u202e"
    orders.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    served = Served(orders, tmp_path / "state", user="C001")

    async def script(client):
        return await client.call_tool("get_order_details", {"order_id": "ORD-1001"})

    try:
        text = served.drive(script).content[0].text
    finally:
        served.close()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "龙井" in text


def test_the_session_clock_stands_still_while_the_session_waits_for_its_client() -> None:
    now = [100.0]
    clock = BusyClock(lambda: now[0])
    start = clock()
    clock.idle()
    now[0] += 3600  # an hour with nothing to do
    clock.busy()
    now[0] += 2
    assert clock() - start == 2


def test_the_sessions_working_time_runs_out_and_every_later_call_is_refused(orders, tmp_path) -> None:
    now = [0.0]

    def ticking() -> float:  # every reading of the clock is half a second of work
        now[0] += 0.5
        return now[0]

    served = Served(orders, tmp_path / "state", user="C001", clock=BusyClock(ticking), timeout=10.0)

    async def script(client):
        return [envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"})) for _ in range(12)]

    try:
        replies = served.drive(script)
    finally:
        served.close()
    codes = [r.get("code") for r in replies]
    first = codes.index("time_limit")
    assert 0 < first < 11 and codes[first:] == ["time_limit"] * (12 - first)
    assert all(r["ok"] for r in replies[:first])


def test_calls_sent_side_by_side_are_taken_one_at_a_time(served) -> None:
    async def script(client):
        replies = {}

        async def look(order_id):
            replies[order_id] = envelope(await client.call_tool("get_order_status", {"order_id": order_id}))

        async with anyio.create_task_group() as group:
            for order_id in ("ORD-1001", "ORD-1002", "ORD-1007"):
                group.start_soon(look, order_id)
        return replies

    replies = served.drive(script)
    assert {k: v["data"]["order_id"] for k, v in replies.items()} == {k: k for k in replies} and len(replies) == 3
    (run_id,) = served.session.runs
    assert sorted(c.arguments for c in served.runs.load(run_id).state.calls) == sorted(
        json.dumps({"order_id": k}) for k in replies
    )
