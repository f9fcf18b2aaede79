"""The one table of limits, and the Budget that checks them with their messages."""

from __future__ import annotations

import pytest
from clikit import cli
from saying import raises

from orderbot.errors import ConfigError
from orderbot.loop.budget import Budget, LimitExceeded, Limits, continued_limits
from orderbot.loop.conversation import format_limits_short, parse_limits
from orderbot.loop.limits import LIMIT_SPECS, LIMIT_STOPS, SPEC_OF, StopReason
from orderbot.loop.state import Event, RunState
from orderbot.loop.transitions import Recorded, Transition
from orderbot.runs.record import upgrade
from orderbot.settings import load_settings


def test_limits_defaults_and_bounds_come_from_the_table():
    assert Limits().model_dump() == {limit.name: limit.default for limit in LIMIT_SPECS}
    for limit in LIMIT_SPECS:
        with pytest.raises(ValueError):
            Limits(**{limit.name: limit.bounds["le"] + 1})
    assert {
        StopReason.STEP_LIMIT,
        StopReason.TIME_LIMIT,
        StopReason.TOOL_CALL_LIMIT,
        StopReason.RESPONSE_TOO_LARGE,
    } == LIMIT_STOPS


def test_every_flag_in_the_table_is_an_option_with_its_help_and_default():
    shown = " ".join(cli("ask", "--help", env={"COLUMNS": "200"}).output.split())
    for limit in LIMIT_SPECS:
        if limit.flag:
            assert limit.flag in shown and f"{limit.help[:-1]} [default: {limit.default:g}]" in shown


def test_settings_read_each_limit_from_its_environment_variable_and_name_it_in_errors(monkeypatch):
    for limit in LIMIT_SPECS:
        monkeypatch.setenv(limit.env, str(limit.bounds["le"]))
    assert load_settings().limits.model_dump() == {limit.name: limit.bounds["le"] for limit in LIMIT_SPECS}
    monkeypatch.setenv("ORDERBOT_MAX_RESPONSE_CHARS", "5")
    with raises(
        ConfigError, match="invalid value for ORDERBOT_MAX_RESPONSE_CHARS in the environment: input should be greater"
    ):
        load_settings()
    with raises(ConfigError, match="invalid value for --max-steps"):
        load_settings(max_steps=0)


def test_the_repl_names_each_limit_as_the_table_does():
    changed = parse_limits("steps=5 time=20 calls=4 per_step=2", Limits())
    assert format_limits_short(changed) == "steps=5 timeout=20 calls=4 per-step=2"
    with raises(ConfigError, match="invalid value for per-step"):
        parse_limits("per-step=0", Limits())


def stopped(reason: StopReason, message_id: str = "") -> RunState:
    state = RunState.start("查询 ORD-1001")
    state.stop_reason, state.stop_message = reason, {"id": message_id, "params": {}}
    return state


@pytest.mark.parametrize(
    ("reason", "message", "run", "raised"),
    [
        (StopReason.STEP_LIMIT, "detail.step_limit_one", {"max_steps": 1}, {"max_steps": 3}),  # at least the default
        (StopReason.STEP_LIMIT, "detail.step_limit", {"max_steps": 5}, {"max_steps": 10}),  # twice the run's
        (StopReason.STEP_LIMIT, "detail.step_limit", {"max_steps": 80}, {"max_steps": 100}),  # within its bound
        (StopReason.TIME_LIMIT, "detail.model_timeout", {"timeout": 40}, {"timeout": 80}),
        (StopReason.TOOL_CALL_LIMIT, "detail.tool_calls", {"max_tool_calls": 0}, {"max_tool_calls": 6}),
        (StopReason.TOOL_CALL_LIMIT, "detail.calls_per_step", {"max_calls_per_step": 4}, {"max_calls_per_step": 8}),
        (StopReason.RESPONSE_TOO_LARGE, "detail.response_too_large", {}, {"max_response_chars": 32_000}),
        (StopReason.CANCELLED, "detail.interrupted", {"max_steps": 1}, {}),  # no limit stopped it
        (StopReason.MODEL_ERROR, "", {}, {}),
    ],
)
def test_a_continued_run_raises_only_the_limit_it_stopped_at(reason, message, run, raised):
    limits = Limits(**({"timeout": 12} | run))
    assert continued_limits(limits, stopped(reason, message)).model_dump() == limits.model_dump() | raised


def test_the_repl_offers_only_the_limits_that_change():
    was = Limits(max_steps=1, timeout=12)
    assert format_limits_short(continued_limits(was, stopped(StopReason.STEP_LIMIT)), since=was) == "steps=3"
    more = continued_limits(Limits(max_response_chars=5_000_000), stopped(StopReason.RESPONSE_TOO_LARGE))
    assert format_limits_short(more, since=Limits()) == "ORDERBOT_MAX_RESPONSE_CHARS=10000000"  # no /limits word


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_budget_checks_each_rule_with_the_number_it_passed():
    clock = Clock()
    budget = Budget(Limits(max_steps=2, timeout=10, max_tool_calls=3, max_calls_per_step=2), clock)
    budget.steps = 1
    budget.check_before_tool_calls(["a", "b"])  # within every cap
    with raises(LimitExceeded, match="asked for 3 tool calls in one step, over the cap of 2") as caught:
        budget.check_before_tool_calls(["a", "b", "c"])
    assert caught.value.reason is StopReason.TOOL_CALL_LIMIT
    budget.calls = 2
    with raises(LimitExceeded, match=r"2 more tool calls would pass the run's cap of 3 \(2 used\)"):
        budget.check_before_tool_calls(["a", "b"])
    budget.steps = 2
    with raises(LimitExceeded, match="asked for a at step 2 of 2; the call was not executed") as caught:
        budget.check_before_tool_calls(["a"])
    assert caught.value.reason is StopReason.STEP_LIMIT
    with raises(LimitExceeded, match="response had 16,001 characters, over the 16,000 cap") as caught:
        budget.check_response(16_001)
    assert caught.value.reason is StopReason.RESPONSE_TOO_LARGE


def test_the_budget_clock_excludes_time_a_person_took():
    clock = Clock()
    budget = Budget(Limits(timeout=10), clock)
    clock.now = 9.0
    budget.check_before_request()
    budget.exclude(5.0)  # a person took 5 s to decide
    clock.now = 12.0
    budget.check_before_tool_call()
    clock.now = 15.0
    with raises(LimitExceeded, match="the 10 s time limit passed during tool calls") as caught:
        budget.check_before_tool_call()
    assert caught.value.reason is StopReason.TIME_LIMIT
    assert budget.left()["seconds"] == 0.0 and SPEC_OF["timeout"].stop is StopReason.TIME_LIMIT


@pytest.mark.parametrize(
    ("doc", "kind"),
    [
        ({"from": "start", "to": "plan", "event": "resumed"}, Event.RESUMED),
        ({"from": "plan", "to": "act", "event": "proposed 2 calls"}, Event.PROPOSED),
        ({"from": "act", "to": "observe", "event": "approved and executed"}, Event.APPROVED),
        ({"from": "act", "to": "observe", "event": "unknown_tool"}, Event.REFUSED),
        ({"from": "act", "to": "awaiting_approval", "event": "approval needed"}, Event.AWAITING_APPROVAL),
        ({"from": "observe", "to": "plan", "event": "returned"}, Event.RETURNED),
        ({"from": "plan", "to": "finish", "event": "answered"}, Event.FINISHED),
    ],
)
def test_a_record_written_before_transitions_had_a_kind_still_reads_as_typed_events(doc, kind):
    upgraded = upgrade({"version": 1, "transitions": [{"step": 1, "detail": "", **doc}]})
    transition = Transition.from_json(upgraded["transitions"][0], Limits())
    assert upgraded["version"] == 3 and transition.kind is kind
    if kind is Event.FINISHED:  # version 1 kept a stop reason only as the row's words
        assert transition.stop_reason is StopReason.ANSWERED
    else:  # no data to rebuild the payload from: the recorded words, shown as they are
        assert transition.payload == Recorded(doc["event"], "")
