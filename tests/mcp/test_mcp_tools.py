"""`orderbot mcp` through the mcp package's own client (in-process): the session shop's tools
with their schemas, titles, output schema and annotations, calls through the same dispatch and
record as a run's, identity from the session, results as structured content too, and the
bounds of a long session (a rate, not a count; a chain of bounded runs) holding without
ending the server."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from clikit import cli
from mcp.shared.exceptions import MCPError
from mcpkit import ERAS, Clock, Served, envelope

from orderbot.mcp.server import ENVELOPE_SCHEMA
from orderbot.mcp.session import RUN_CALLS
from orderbot.models.mcp_client import BusyClock


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
        return mine, theirs, named

    mine, theirs, named = served.drive(script)
    assert not mine.is_error and envelope(mine)["data"]["order_id"] == "ORD-1001"
    assert theirs.is_error and envelope(theirs)["code"] == "no_access"
    assert "C002" not in theirs.content[0].text
    assert named.is_error and envelope(named)["code"] == "invalid_arguments"  # the client cannot name a customer


@ERAS
def test_an_unknown_tool_is_a_protocol_error_and_the_session_goes_on(served, mode) -> None:
    async def script(client):
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("drop_table", {})
        return unknown.value, await client.call_tool("get_order_status", {"order_id": "ORD-1001"})

    unknown, after = served.drive(script, mode=mode)
    assert unknown.code == types.INVALID_PARAMS == -32602 and "drop_table" in unknown.message
    assert envelope(after)["ok"]


@ERAS
def test_every_tool_has_a_title_and_the_envelope_as_output_schema_every_result_is_structured(orders, tmp_path, mode):
    served = Served(orders, tmp_path / "state", user="C001", queue=True, max_tool_calls=5, now=Clock())

    async def script(client):
        tools = (await client.list_tools()).tools
        calls = [
            ("get_order_status", {"order_id": "ORD-1001"}),  # ok
            ("get_order_details", {"order_id": "ORD-1003"}),  # another customer's: an error
            ("cancel_order", {"order_id": "ORD-1002", "reason": "x"}),  # the queue's reply
            ("check_approval", {"run_id": "261201-000000-0000"}),  # unknown
            ("get_order_status", {"order_id": "x" * 50_000}),  # too large
            ("get_order_status", {"order_id": "ORD-1001"}),
            ("get_order_status", {"order_id": "ORD-1001"}),  # past the window
        ]
        return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    try:
        tools, results = served.drive(script, mode=mode)
    finally:
        served.close()
    for tool in tools:
        assert tool.title and tool.title[0].isupper() and "_" not in tool.title, tool.name
        assert tool.output_schema == ENVELOPE_SCHEMA, tool.name
    assert next(t for t in tools if t.name == "get_order_status").title == "Get order status"
    codes = [envelope(r).get("code") for r in results]  # envelope(): the text and the structure agree
    assert codes == [None, "no_access", None, "unknown_run", "too_large", None, "rate_limited"]
    assert all(r.structured_content["ok"] is not r.is_error for r in results)
    assert results[2].structured_content["data"]["status"] == "awaiting_approval"


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


def test_calls_are_bounded_by_a_window_refused_with_when_to_retry_and_served_as_it_moves(orders, tmp_path):
    """--max-tool-calls 5 --window 2: the 6th call in 2 s is refused, saying when to retry;
    2.5 s later calls are served again. A refused call never reaches the engine or the record."""
    clock = Clock()
    served = Served(orders, tmp_path / "state", user="C001", max_tool_calls=5, window=2.0, now=clock)

    async def script(client):
        first = [envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"})) for _ in range(5)]
        clock.now += 0.5
        refused = envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"}))
        listing = await client.list_tools()  # a protocol request is no tool call: answered
        clock.now += 2.0  # 2.5 s after the first five
        later = [envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"})) for _ in range(5)]
        return first, refused, listing, later

    try:
        first, refused, listing, later = served.drive(script)
    finally:
        served.close()
    assert all(r["ok"] for r in first + later) and listing.tools
    assert refused["code"] == "rate_limited" and refused["retry_after"] == 1.5
    assert "5 calls in any 2 seconds" in refused["error"] and "1.5 seconds" in refused["error"]
    (run_id,) = served.session.runs
    state = served.runs.load(run_id).state
    assert state.tool_calls == 10 and all(c.decision == "executed" for c in state.calls)


def test_a_long_session_is_a_chain_of_bounded_runs(orders, tmp_path) -> None:
    served = Served(orders, tmp_path / "state", user="C001", max_tool_calls=1000)
    count = 2 * RUN_CALLS + 5

    async def script(client):
        return [envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1001"})) for _ in range(count)]

    try:
        replies = served.drive(script)
    finally:
        served.close()
    assert all(r["ok"] for r in replies)
    runs = [served.runs.load(run_id) for run_id in served.session.runs]
    assert [len(r.state.calls) for r in runs] == [RUN_CALLS, RUN_CALLS, 5]
    assert [r.state.stop_reason for r in runs] == ["answered"] * 3
    assert runs[1].state.question.endswith(f"continued from run {runs[0].run_id}")
    assert runs[2].state.question.endswith(f"continued from run {runs[1].run_id}")
    assert not any(r.dropped for r in runs)  # each run is kept whole


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


def test_a_run_that_uses_its_working_time_stops_and_the_session_goes_on_in_the_next(orders, tmp_path) -> None:
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
    assert 0 < first < 11 and all(r["ok"] for r in replies[:first]) and replies[first + 1]["ok"]
    stopped = served.runs.load(served.session.runs[0]).state
    assert stopped.stop_reason == "time_limit" and len(served.session.runs) >= 2


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
