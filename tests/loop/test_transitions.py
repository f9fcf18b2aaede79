"""A transition is a value that says itself: one payload type per kind, one `describe` for
every reader, and the JSON of the record and --json reads back to the same values."""

from __future__ import annotations

import json

import pytest

from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.state import Event, RunState
from orderbot.loop.transitions import PAYLOADS, Transition, key
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.ui.describe import describe


def every_kind(toolbox) -> list[Transition]:
    """A run that passes through every kind but a resumption: a call that runs, one that is
    refused, one a person rejects, then a pause for approval, and (a second run) an answer."""
    seen: list[Transition] = []
    model = ScriptedModel(
        [
            calls(
                call("get_order_status", {"order_id": "ORD-1001"}),
                call("no_such_tool", {}),
                call("cancel_order", {"order_id": "ORD-1002", "reason": "不想要了"}),
            ),
            text("没有取消"),
        ]
    )
    answers = iter([False])
    Engine(model, toolbox, Limits(), observers=[lambda t, s: seen.append(t)], approver=lambda p: next(answers)).run(
        RunState.start("取消订单 ORD-1002", user="C001")
    )
    paused = ScriptedModel([calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "x"})), text("好")])
    Engine(paused, toolbox, Limits(), observers=[lambda t, s: seen.append(t)]).run(
        RunState.start("取消 ORD-1002", user="C001")
    )
    Engine(ScriptedModel([text("已发货")]), toolbox, Limits(), observers=[lambda t, s: seen.append(t)]).run(
        RunState.start("ORD-1001?")
    )
    return seen


def test_each_kind_has_one_frozen_payload_type():
    assert set(PAYLOADS) == set(Event)
    for payload in PAYLOADS.values():
        assert issubclass(payload, tuple) and hasattr(payload, "_fields")  # a named tuple: nobody changes it


def test_what_the_record_keeps_reads_back_as_the_same_values_and_words(toolbox):
    seen = every_kind(toolbox)
    kinds = {t.kind for t in seen}
    assert kinds >= set(Event) - {Event.RESUMED, Event.SIGNED_IN, Event.APPROVED}
    for transition in seen:
        doc = json.loads(json.dumps({**transition.as_dict(), "elapsed": transition.elapsed}))
        back = Transition.from_json(doc, transition.limits)
        assert key(back) == key(transition)
        assert back.budget_left == transition.budget_left
        for lang in ("en", "zh"):
            assert describe(back, lang) == describe(transition, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_word_of_a_description_is_the_catalogues(toolbox, monkeypatch, lang):
    """No view builds a transition's words itself: reword the catalogue and every event
    column follows."""
    seen = every_kind(toolbox)
    for message_id in [m for m in MESSAGES if m.startswith("event.")]:
        monkeypatch.setitem(
            MESSAGES, message_id, {**MESSAGES[message_id], lang: "«" + MESSAGES[message_id][lang] + "»"}
        )
    for transition in seen:  # the last row's too: its stop reason in words (the value is the stop line's)
        said = describe(transition, lang)
        assert said.event.startswith("«") and said.event.endswith("»"), said
