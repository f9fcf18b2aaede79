"""Half a character from the model: JSON may escape a lone surrogate (`"\\ud800"`), and a server
(or a model behind it) can send one in its answer or in a tool call's name or arguments. It
must not stop orderbot from writing the run's record or printing (neither can hold one as
UTF-8): it becomes U+FFFD when the turn is made (loop.model.Turn), and the run ends as any."""

from __future__ import annotations

import json

from clikit import cli
from fakeapi import FakeAPI, completion, raw, tool_call
from runkit import open_store
from securitykit import state_dir

from orderbot.loop.items import FunctionCall, Message, ProviderItem
from orderbot.loop.model import Turn

HALF = "\ud800"


def escaped(body: dict) -> bytes:
    """A body as a server writes it, its lone surrogates escaped (as json.dumps does by default)."""
    return json.dumps(body).encode("ascii")


def test_a_lone_surrogate_from_a_server_is_recorded_and_shown_as_a_replacement_character():
    with FakeAPI() as api:
        first = completion(None, [tool_call(f"get_order_status{HALF}", {"order_id": f"ORD-1001{HALF}"})])
        api.enqueue("chat", raw(escaped(first), content_type="application/json"))
        api.enqueue("chat", raw(escaped(completion(f"Shipped {HALF}.")), content_type="application/json"))
        done = cli("ask", "--json", "--provider", "chat", "--base-url", api.url, "--model", "fake", "ORD-1001?")
    assert done.exit_code == 0, done.output
    shown = json.loads(done.stdout)
    assert shown["answer"] == "Shipped \ufffd."
    store = open_store(state_dir())
    [run_id] = store.ids()
    saved = store.load(run_id)
    assert saved.state.answer == "Shipped \ufffd."
    assert [c.name for c in saved.state.calls] == ["get_order_status\ufffd"]


def test_every_text_of_a_turn_is_made_whole_and_whole_items_are_left_as_they_are():
    items = (
        Message(role="assistant", content=f"a{HALF}"),
        FunctionCall(call_id=f"c{HALF}", name=f"n{HALF}", arguments=f'{{"x": "{HALF}"}}'),
        ProviderItem(provider="openai", data={"type": "reasoning", "summary": [{f"k{HALF}": f"v{HALF}"}]}),
    )
    made = Turn(items)
    assert made.text == "a\ufffd"
    assert (
        made.calls[0].model_dump()
        == FunctionCall(call_id="c\ufffd", name="n\ufffd", arguments='{"x": "\ufffd"}').model_dump()
    )
    assert made.items[2].data == {"type": "reasoning", "summary": [{"k\ufffd": "v\ufffd"}]}
    ordinary = (Message(role="assistant", content="已发货 😀"),)
    assert Turn(ordinary).items is ordinary
