"""What an agent host does every day, through the mcp package's own client (in-process, the
same handlers and JSON-RPC framing as over stdio): fan out lookups while a person thinks
about a side effect, cancel a call while its question is open, flood the session. The
session never jams: a question holds no thread and no call, a cancelled call runs nothing
and says so, and the calls past the bound in flight are refused with a reason."""

from __future__ import annotations

import threading

import anyio
from mcpkit import CANCEL, ERAS, Person, Served, envelope, fan_out_while_asked, status

from orderbot.i18n import t
from orderbot.mcp.session import MAX_IN_FLIGHT

LOOKUP = {"order_id": "ORD-1001"}


@ERAS
def test_lookups_sent_while_a_question_is_open_are_all_answered_then_the_approval_is_taken(orders, tmp_path, mode):
    served = Served(orders, tmp_path / "state", user="C001", max_tool_calls=200)
    person = Person()

    async def script(client):
        return await fan_out_while_asked(client, person, CANCEL)

    try:
        replies, answered_before = served.drive(script, mode=mode, elicitation=person)
    finally:
        served.close()
    assert answered_before == 100 and len(person.questions) == 1
    lookups, (cancelled,) = replies[:100], replies[100:]
    assert all(envelope(r)["data"]["status"] == "已发货" for r in lookups)
    assert envelope(cancelled)["data"]["status"] == status(orders) == "已取消"
    paused = served.runs.load(served.session.runs[0])
    assert [c.decision for c in paused.state.calls] == ["executed"]


def test_a_call_cancelled_during_its_question_runs_nothing_and_the_next_lookup_is_answered_at_once(orders, tmp_path):
    """A host's stop button while the person is asked: the client sends notifications/cancelled;
    the person's late yes runs nothing, the record says the client withdrew the call, and the
    next lookup is answered within a second."""
    served = Served(orders, tmp_path / "state", user="C001")
    person = Person()

    async def script(client):
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "cancel_order", CANCEL)
            await person.asked.wait()
            group.cancel_scope.cancel()  # the SDK's client sends notifications/cancelled for it
        with anyio.fail_after(1):
            lookup = await client.call_tool("get_order_status", LOOKUP)
        person.may_answer.set()  # the person says yes, too late
        again = await client.call_tool("get_order_status", {"order_id": "ORD-1002"})
        return lookup, again

    try:
        lookup, again = served.drive(script, mode="legacy", elicitation=person)
    finally:
        served.close()
    assert envelope(lookup)["data"]["status"] == "已发货"
    assert envelope(again)["data"]["status"] == status(orders) == "处理中"
    paused = served.runs.load(served.session.runs[0])
    (call,) = paused.state.calls
    assert call.name == "cancel_order" and call.decision == "rejected"
    assert paused.decisions[call.call_id].reason == t("mcp.withdrawn")


def test_calls_past_the_bound_in_flight_are_refused_with_a_reason_and_the_others_answered(orders, tmp_path):
    served = Served(orders, tmp_path / "state", user="C001", max_tool_calls=1000)
    store, read = served.shop.store, served.shop.store.get
    busy, release = threading.Event(), threading.Event()

    def slow_get(order_id, **kwargs):  # the first lookup holds the engine until the test lets it go
        if not busy.is_set():
            busy.set()
            release.wait(30)
        return read(order_id, **kwargs)

    store.get = slow_get

    async def script(client):
        replies, refused, both = [], [], anyio.Event()

        async def look():
            reply = await client.call_tool("get_order_status", LOOKUP)
            replies.append(reply)
            if reply.is_error:
                refused.append(reply)
                if len(refused) == 2:
                    both.set()

        async with anyio.create_task_group() as group:
            group.start_soon(look)
            await anyio.to_thread.run_sync(busy.wait)
            for _ in range(MAX_IN_FLIGHT + 1):
                group.start_soon(look)
            with anyio.fail_after(30):
                await both.wait()  # the two past the bound are refused while the engine is still held
            answered_meanwhile = len(replies) - len(refused)
            release.set()
        return replies, refused, answered_meanwhile

    try:
        replies, refused, answered_meanwhile = served.drive(script)
    finally:
        served.close()
    assert answered_meanwhile == 0
    assert [envelope(r)["code"] for r in refused] == ["too_many_calls"] * 2
    assert f"{MAX_IN_FLIGHT} calls" in envelope(refused[0])["error"]
    answered = [envelope(r) for r in replies if not r.is_error]
    assert len(answered) == MAX_IN_FLIGHT and len(replies) == MAX_IN_FLIGHT + 2
