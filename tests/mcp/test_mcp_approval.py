"""Side effects over MCP wait for a person, never for the model: asked in the host by
elicitation (in-band in the handshake era, as an InputRequiredResult on 2026-07-28), or left
in the run store's approval queue for `orderbot approvals approve`. Every test drives the
server with the mcp package's own client (in-process) and reads the orders file after."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from clikit import cli
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcpkit import CANCEL, ERAS, Served, answering, approving, envelope, status

ASKED = "Cancel ORD-1002 (处理中, ¥199.00), reason: no longer needed"  # what `ask` shows at its prompt


def cancel(served: Served, **client):
    async def script(client):
        return await client.call_tool("cancel_order", CANCEL)

    return served.drive(script, **client)


@ERAS
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_person_who_declines_runs_nothing(orders, tmp_path, mode, action) -> None:
    asked: list[str] = []
    served = Served(orders, tmp_path / "state", user="C001")
    try:
        result = cancel(served, mode=mode, elicitation=answering(action, asked))
    finally:
        served.close()
    assert asked == [f"orderbot asks you to approve this action: {ASKED}"]
    assert result.is_error and envelope(result)["code"] == "rejected"
    assert status(orders) == "处理中"
    (run_id,) = served.session.runs
    assert [c.decision for c in served.runs.load(run_id).state.calls] == ["rejected"]


@ERAS
def test_a_person_who_approves_runs_it_once(orders, tmp_path, mode) -> None:
    asked: list[str] = []
    served = Served(orders, tmp_path / "state", user="C001")
    try:
        result = cancel(served, mode=mode, elicitation=approving(asked))
    finally:
        served.close()
    assert len(asked) == 1 and not result.is_error
    assert envelope(result)["data"]["status"] == status(orders) == "已取消"
    audit = cli("audit", "--json")
    entries = [e for e in json.loads(audit.stdout) if e.get("tool") == "cancel_order"]
    assert [e["event"] for e in entries].count("executed") == 1, audit.stdout


def test_an_accept_that_does_not_say_approve_runs_nothing(orders, tmp_path) -> None:
    async def vague(ctx, params):
        return types.ElicitResult(action="accept", content={"approve": False})

    served = Served(orders, tmp_path / "state", user="C001")
    try:
        result = cancel(served, elicitation=vague)
    finally:
        served.close()
    assert envelope(result)["code"] == "rejected" and status(orders) == "处理中"


def test_an_answer_must_come_back_for_the_call_it_was_asked_about(orders, tmp_path) -> None:
    """On 2026-07-28 the answer rides a retry of the call: only the state orderbot minted
    (sealed by the SDK's boundary with the run store's key, bound to the call's tool and
    arguments), with the same tool and arguments, settles it, once; a forged state or one
    brought back for other arguments is a protocol error (-32602); a retry without the
    answer is asked again; the question holds nothing up, and other calls meanwhile leave it open."""
    served = Served(orders, tmp_path / "state", user="C001")
    yes = {"approval": types.ElicitResult(action="accept", content={"approve": True})}

    async def script(client):
        session = client.session

        async def retry(arguments=CANCEL, **kwargs):
            try:
                return await session.call_tool("cancel_order", arguments, allow_input_required=True, **kwargs)
            except MCPError as refused:
                return refused

        first = await retry()
        forged = await retry(input_responses=yes, request_state="guess")
        other = await retry({**CANCEL, "order_id": "ORD-1013"}, input_responses=yes, request_state=first.request_state)
        again = await retry(request_state=first.request_state)  # the retry brought no answer
        moved_on = await client.call_tool("get_order_status", {"order_id": "ORD-1001"})  # another call meanwhile
        late = await retry(input_responses=yes, request_state=again.request_state)
        twice = await retry(input_responses=yes, request_state=first.request_state)
        return first, forged, other, again, moved_on, late, twice

    try:
        # The client can ask its person; this one calls the session by hand, to answer wrongly.
        first, forged, other, again, moved_on, late, twice = served.drive(
            script, mode="auto", elicitation=approving([])
        )
    finally:
        served.close()
    assert isinstance(first, types.InputRequiredResult)
    assert ASKED in first.input_requests["approval"].params.message
    assert isinstance(forged, MCPError) and forged.error.code == types.INVALID_PARAMS
    assert isinstance(other, MCPError) and other.error.code == types.INVALID_PARAMS
    assert isinstance(again, types.InputRequiredResult)
    assert ASKED in again.input_requests["approval"].params.message
    assert not moved_on.is_error
    assert envelope(late)["data"]["status"] == status(orders) == "已取消"
    assert envelope(twice)["code"] == "no_such_approval"  # settled once
    assert status(orders, "ORD-1013") == "待付款"
    paused, after = served.session.runs  # the cancel's run paused for the person; the lookup went on in the next
    assert [c.decision for c in served.runs.load(paused).state.calls] == ["executed"]
    assert [c.name for c in served.runs.load(after).state.calls] == ["get_order_status"]


def test_without_elicitation_the_call_waits_in_the_queue_and_is_approved_once(orders, tmp_path) -> None:
    served = Served(orders, tmp_path / "state", user="C001")

    async def script(client):  # no elicitation callback: this client cannot ask a person
        queued = envelope(await client.call_tool("cancel_order", CANCEL))
        run_id = queued["data"]["run_id"]
        waiting = envelope(await client.call_tool("check_approval", {"run_id": run_id}))
        before = status(orders)
        listed = cli("approvals").output
        approved, again = cli("approvals", "approve", run_id), cli("approvals", "approve", run_id)
        done = envelope(await client.call_tool("check_approval", {"run_id": run_id}))
        stranger = envelope(await client.call_tool("check_approval", {"run_id": "261201-000000-0000"}))
        lookup = envelope(await client.call_tool("get_order_status", {"order_id": "ORD-1002"}))
        return queued, waiting, before, listed, approved, again, done, stranger, lookup

    try:
        queued, waiting, before, listed, approved, again, done, stranger, lookup = served.drive(script)
    finally:
        served.close()
    run_id = queued["data"]["run_id"]
    assert queued["ok"] and queued["data"]["status"] == waiting["data"]["status"] == "awaiting_approval"
    assert queued["data"]["action"] == ASKED and f"orderbot approvals approve {run_id}" in queued["data"]["message"]
    assert before == "处理中" and run_id in listed
    assert approved.exit_code == 0, approved.output
    assert "model: mcp/mcp client · user C001" in approved.output  # the session's own model, which only ends it
    assert again.exit_code != 0  # exactly once
    assert done["data"]["status"] == "approved" and done["data"]["result"]["data"]["status"] == "已取消"
    assert stranger["code"] == "unknown_run"
    assert lookup["data"]["status"] == status(orders) == "已取消"  # the session went on, in a new run
    assert len(served.session.runs) == 2
    entries = [e for e in json.loads(cli("audit", "--json").stdout) if e["run_id"] == run_id]
    assert [e["event"] for e in entries].count("executed") == 1


def test_a_disconnect_leaves_a_queued_call_waiting_not_executed(orders, tmp_path) -> None:
    served = Served(orders, tmp_path / "state", user="C001", queue=True)  # --queue

    async def script(client):
        return envelope(await client.call_tool("cancel_order", CANCEL))

    try:
        run_id = served.drive(script, elicitation=approving([]))["data"]["run_id"]
    finally:
        served.close()
    record = served.runs.load(run_id)
    assert record.state.stop_reason == "awaiting_approval" and record.state.pending
    assert status(orders) == "处理中"


def test_with_four_eyes_the_host_is_not_asked_the_call_waits_for_another_person(orders, tmp_path) -> None:
    asked: list[str] = []
    served = Served(orders, tmp_path / "state", user="C001", four_eyes=True)
    try:
        result = envelope(cancel(served, elicitation=approving(asked)))
    finally:
        served.close()
    assert asked == [] and result["data"]["status"] == "awaiting_approval"
    own = cli("approvals", "approve", result["data"]["run_id"], env={"ORDERBOT_FOUR_EYES": "1"})
    assert own.exit_code != 0 and status(orders) == "处理中"  # the operator who asked cannot approve it


@ERAS
def test_a_client_that_takes_only_url_questions_is_never_sent_a_form(orders, tmp_path, monkeypatch, mode) -> None:
    """The spec: a server MUST NOT send an elicitation mode the client did not declare. A
    client that declared only URL mode gets the approval queue's reply instead."""
    declared = ClientSession._build_capabilities

    def url_only(self, version):
        capabilities = declared(self, version)
        return capabilities.model_copy(
            update={"elicitation": types.ElicitationCapability(url=types.UrlElicitationCapability())}
        )

    monkeypatch.setattr(ClientSession, "_build_capabilities", url_only)
    asked: list[str] = []
    served = Served(orders, tmp_path / "state", user="C001")
    try:
        result = envelope(cancel(served, mode=mode, elicitation=approving(asked)))
    finally:
        served.close()
    assert asked == [] and result["data"]["status"] == "awaiting_approval"
    assert status(orders) == "处理中"


def test_check_approval_finds_the_customers_queued_call_from_a_new_session_and_never_anothers(orders, tmp_path):
    """A host that restarts the server, or starts one per call, asks about the run its call
    returned: any session of the same customer on the same run store finds it; a session of
    another customer, or of no customer, is told there is no such run."""
    state = tmp_path / "state"
    first = Served(orders, state, user="C001")

    async def queue_it(client):
        return envelope(await client.call_tool("cancel_order", CANCEL))

    try:
        run_id = first.drive(queue_it)["data"]["run_id"]  # no elicitation: the queue
    finally:
        first.close()

    def check(user, arguments=None):
        served = Served(orders, state, user=user)

        async def script(client):
            return envelope(
                await client.call_tool("check_approval", {"run_id": run_id} if arguments is None else arguments)
            )

        try:
            return served.drive(script)
        finally:
            served.close()

    waiting, listed = check("C001"), check("C001", {})
    others_list, nobodys_list = check("C002", {}), check(None, {})
    approved = cli("approvals", "approve", run_id)
    done, theirs, nobodys = check("C001"), check("C002"), check(None)
    assert waiting["data"] == {"status": "awaiting_approval", "run_id": run_id, "action": ASKED}
    assert [(w["run_id"], w["action"]) for w in listed["data"]["waiting"]] == [(run_id, ASKED)]
    assert others_list["data"] == nobodys_list["data"] == {"waiting": []}
    assert check("C001", {})["data"] == {"waiting": []}  # settled: no longer waiting
    assert approved.exit_code == 0, approved.output
    assert done["data"]["status"] == "approved" and done["data"]["result"]["data"]["status"] == "已取消"
    assert theirs["code"] == nobodys["code"] == "unknown_run"
    assert run_id not in json.dumps(theirs) + json.dumps(nobodys)


def test_a_question_one_server_asked_is_answered_on_another_of_the_same_run_store(orders, tmp_path) -> None:
    """Behind a load balancer a 2026-07-28 retry may reach another server: its state is
    sealed with the run store's key, so any server of the store takes the answer and
    settles the paused run, once; a server of another store cannot read the state."""
    one, other = Served(orders, tmp_path / "state", user="C001"), Served(orders, tmp_path / "state", user="C001")
    elsewhere = Served(orders, tmp_path / "elsewhere", user="C001")
    yes = {"approval": types.ElicitResult(action="accept", content={"approve": True})}

    async def main():
        async with one.client(mode="auto", elicitation=approving([])) as first:
            asked = await first.session.call_tool("cancel_order", CANCEL, allow_input_required=True)
        state = asked.request_state

        async def answer(served: Served):
            async with served.client(mode="auto", elicitation=approving([])) as client:
                try:
                    return await client.session.call_tool(
                        "cancel_order", CANCEL, allow_input_required=True, input_responses=yes, request_state=state
                    )
                except MCPError as refused:
                    return refused

        return asked, await answer(elsewhere), await answer(other), await answer(other)

    try:
        asked, foreign, answered, again = anyio.run(main)
    finally:
        for served in (one, other, elsewhere):
            served.close()
    assert isinstance(asked, types.InputRequiredResult)
    assert isinstance(foreign, MCPError) and foreign.error.code == types.INVALID_PARAMS
    assert envelope(answered)["data"]["status"] == status(orders) == "已取消"
    assert envelope(again)["code"] == "no_such_approval"
    audit = json.loads(cli("audit", "--json", "--state-dir", str(tmp_path / "state")).stdout)
    assert [e["event"] for e in audit].count("executed") == 1
