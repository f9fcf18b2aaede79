"""What the REPL carries between turns, and how /limits is read."""

from __future__ import annotations

import pytest
from saying import raises

from orderbot.errors import ConfigError
from orderbot.loop.conversation import SHORTENED, Conversation, carry, parse_limits
from orderbot.loop.engine import Limits
from orderbot.loop.items import FunctionCall, FunctionCallOutput, ProviderItem, assistant, user


def turn(question: str, answer: str, output: str = '{"ok":true}', call_id: str = "c1") -> list:
    return [
        user(question),
        FunctionCall(call_id=call_id, name="get_order_status", arguments='{"order_id":"ORD-1001"}'),
        FunctionCallOutput(call_id=call_id, output=output),
        assistant(answer),
    ]


def test_carry_keeps_complete_pairs_and_drops_calls_without_results():
    items = [
        user("q"),
        ProviderItem(provider="openai", data={"type": "reasoning"}),
        FunctionCall(call_id="done", name="get_order_status", arguments="{}"),
        FunctionCall(call_id="cut", name="get_order_status", arguments="{}"),  # a limit or Ctrl-C stopped it
        FunctionCallOutput(call_id="done", output='{"ok":true}'),
        FunctionCallOutput(call_id="stray", output='{"ok":true}'),
    ]
    kept = carry(items)
    assert [getattr(i, "call_id", i.type) for i in kept] == ["message", "done", "done"]


def test_long_tool_outputs_are_shortened():
    (_, _, output, _) = carry(turn("q", "a", output="x" * 5000), max_output_chars=100)
    assert len(output.output) == 100 and output.output.endswith(SHORTENED)


def test_oldest_turns_are_dropped_first_when_over_the_budget():
    conversation = Conversation(max_chars=200)
    for n in range(5):
        conversation.add(turn(f"question {n}", "a" * 40, call_id=f"c{n}"))
    questions = [i.content for i in conversation.history() if getattr(i, "role", "") == "user"]
    assert questions == ["question 3", "question 4"]  # each turn is ~90 characters
    conversation.reset()
    assert conversation.history() == []


def test_turn_count_is_bounded_too():
    conversation = Conversation(max_turns=2)
    for n in range(4):
        conversation.add([user(f"q{n}"), assistant("a")])
    assert [i.content for i in conversation.history()] == ["q2", "a", "q3", "a"]


def test_parse_limits_changes_only_what_is_named():
    limits = parse_limits("steps=5 timeout=20 calls=4 per-step=2", Limits(max_response_chars=500))
    assert (limits.max_steps, limits.timeout, limits.max_tool_calls, limits.max_calls_per_step) == (5, 20.0, 4, 2)
    assert limits.max_response_chars == 500


@pytest.mark.parametrize(
    "text, message",
    [
        ("steps=0", "invalid value for steps: input should be greater than or equal to 1"),
        ("timeout=abc", "invalid value for timeout"),
        ("speed=3", "'speed=3' is not a limit"),
        ("steps", "'steps' is not a limit"),
    ],
)
def test_parse_limits_refuses_bad_input_with_one_sentence(text, message):
    with raises(ConfigError, match=message):
        parse_limits(text, Limits())
