"""The model of an MCP session (orderbot.models.mcp_client): it proposes each call its client
sends, hands the engine's output for it back, and answers once the session has ended."""

from __future__ import annotations

from orderbot.loop.items import FunctionCall, FunctionCallOutput
from orderbot.loop.model import ModelRequest
from orderbot.models.mcp_client import ClientModel, Ticket


def request(*items) -> ModelRequest:
    return ModelRequest("", items, [], 10.0)


def test_each_call_is_proposed_and_its_output_handed_back() -> None:
    model = ClientModel()
    call = FunctionCall(call_id="mcp_1", name="get_order_status", arguments='{"order_id": "ORD-1001"}')
    ticket = Ticket(call)
    model.propose(ticket)
    assert model.respond(request()).calls == (call,)
    model.close()
    output = FunctionCallOutput(call_id="mcp_1", output='{"ok":true,"data":1}')
    turn = model.respond(request(call, output))
    assert ticket.done and ticket.output == output.output
    assert not turn.calls and turn.text  # the session ended: an answer, and the run stops
    assert model.respond(request()).text == turn.text  # and it stays ended


def test_a_recorded_session_resumed_without_its_client_ends_at_once() -> None:
    model = ClientModel.ended()
    assert not model.wait_for_call()
    assert not model.respond(request()).calls
