"""The state machine, driven by scripted models: every stop reason and every limit."""

from __future__ import annotations

import json

import pytest
from saying import stop_said

from orderbot.commands.common import EXIT_CODES
from orderbot.errors import ModelError, ModelTimeout
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.items import FunctionCallOutput, assistant, text_chars
from orderbot.loop.model import ModelRequest, Turn
from orderbot.loop.state import Event, Phase, RunState
from orderbot.loop.tools import Tool
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.sample.tools import OrderIdArgs
from orderbot.ui.describe import describe


def run(model, toolbox, limits=None, **kwargs) -> tuple[RunState, list]:
    seen = []
    engine = Engine(model, toolbox, limits or Limits(), observers=[lambda t, s: seen.append(t)], **kwargs)
    state = engine.run(RunState.start("请查询订单 ORD-1001 的状态。"))
    return state, seen


def outputs(state: RunState) -> list[dict]:
    return [json.loads(i.output) for i in state.items if isinstance(i, FunctionCallOutput)]


def test_one_call_then_an_answer_goes_plan_act_observe_plan_finish(toolbox):
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
    state, seen = run(model, toolbox)
    assert state.stop_reason is StopReason.ANSWERED
    assert state.answer == "已发货"
    assert outputs(state) == [{"ok": True, "data": {"order_id": "ORD-1001", "status": "已发货"}}]
    assert [(t.from_, t.to) for t in seen] == [
        (Phase.START, Phase.PLAN),
        (Phase.PLAN, Phase.ACT),
        (Phase.ACT, Phase.OBSERVE),
        (Phase.OBSERVE, Phase.PLAN),
        (Phase.PLAN, Phase.FINISH),
    ]
    # The second request carried the call and its result back to the model.
    second = model.requests[1].items
    assert [i.type for i in second] == ["message", "function_call", "function_call_output"]
    model.assert_complete()


def test_each_request_counts_the_characters_of_everything_it_sent(toolbox):
    """Counted as the run goes (only what was added since the last request), the same as
    counting every item of each request afresh."""
    lookups = [calls(call("get_order_status", {"order_id": f"ORD-10{n:02d}"})) for n in range(1, 6)]
    model = ScriptedModel([*lookups, text("已发货")])
    _, seen = run(model, toolbox, Limits(max_steps=10, max_tool_calls=10))
    sent = [t.payload.request for t in seen if t.kind is Event.PROPOSED]
    assert [r.chars for r in sent] == [sum(map(text_chars, q.items)) for q in model.requests[:5]]
    assert sent[-1].chars > sent[0].chars > 0


def test_the_english_a_record_keeps_is_the_catalogues(toolbox, monkeypatch):
    """The labels and details the engine writes (English in records and --json; a person's
    table says them in the UI language) come from the catalogue: one text for both."""
    for message_id in ("event.proposed_one", "detail.returned_one"):
        monkeypatch.setitem(MESSAGES, message_id, {**MESSAGES[message_id], "en": "EN " + MESSAGES[message_id]["en"]})
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
    _, seen = run(model, toolbox)
    assert [describe(t, "en").event for t in seen if t.kind is Event.PROPOSED] == ["EN proposed 1 call"]
    assert [describe(t, "en").detail for t in seen if t.kind is Event.RETURNED] == [
        "EN 1 result to the model: 1 ok, 0 failed"
    ]


def test_model_that_always_asks_for_tools_gets_exactly_max_steps_requests(toolbox):
    forever = [calls(call("get_order_status", {"order_id": "ORD-1001"})) for _ in range(10)]
    model = ScriptedModel(forever)
    state, _ = run(model, toolbox, Limits(max_steps=3, max_tool_calls=100))
    assert state.stop_reason is StopReason.STEP_LIMIT
    assert len(model.requests) == 3
    # Two steps executed their call; the third step's call was not executed.
    assert [c.decision for c in state.calls] == ["executed", "executed", "not_executed"]
    assert len(outputs(state)) == 2


def test_call_at_the_last_step_is_not_executed(toolbox):
    ran = []
    spy = Tool("spy", "records that it ran", OrderIdArgs, lambda args, ctx: ran.append(args.order_id))
    model = ScriptedModel([calls(call("spy", {"order_id": "ORD-1"}))])
    state, seen = run(model, Toolbox([spy]), Limits(max_steps=1))
    assert state.stop_reason is StopReason.STEP_LIMIT
    assert ran == []
    assert state.calls[0].decision == "not_executed"
    assert "not executed" in describe(seen[-1], "en").detail


def test_limit_stop_keeps_what_was_observed(toolbox):
    model = ScriptedModel(
        [
            calls(call("get_order_status", {"order_id": "ORD-1001"})),
            calls(call("get_order_status", {"order_id": "ORD-1002"})),
        ]
    )
    state, _ = run(model, toolbox, Limits(max_steps=2))
    assert state.stop_reason is StopReason.STEP_LIMIT
    assert [c.result["data"]["status"] for c in state.observed] == ["已发货"]


def test_time_limit_checked_before_each_request(toolbox, clock):
    def slow_turn(request: ModelRequest) -> Turn:
        clock.advance(20)
        return calls(call("get_order_status", {"order_id": "ORD-1001"}))

    model = ScriptedModel([slow_turn, slow_turn, text("never requested")])
    state, _ = run(model, toolbox, Limits(timeout=30), clock=clock)
    assert state.stop_reason is StopReason.TIME_LIMIT
    assert len(model.requests) == 2  # the third request was never made
    # The second request was given only the time that was left.
    assert model.requests[0].timeout == pytest.approx(30)
    assert model.requests[1].timeout == pytest.approx(10)


def test_time_limit_when_the_model_outlasts_the_deadline(toolbox, clock):
    def hangs(request: ModelRequest) -> Turn:
        clock.advance(request.timeout)
        raise ModelTimeout("no answer in time")

    model = ScriptedModel([hangs, text("never")])
    state, seen = run(model, toolbox, Limits(timeout=5), clock=clock)
    assert state.stop_reason is StopReason.TIME_LIMIT
    assert len(model.requests) == 1
    assert seen[-1].to is Phase.FINISH


def test_time_limit_checked_before_each_tool_call(toolbox, clock):
    def late_turn(request: ModelRequest) -> Turn:
        clock.advance(31)
        return calls(call("get_order_status", {"order_id": "ORD-1001"}))

    model = ScriptedModel([late_turn])
    state, _ = run(model, toolbox, Limits(timeout=30), clock=clock)
    assert state.stop_reason is StopReason.TIME_LIMIT
    assert state.calls[0].decision == "not_executed"


def test_per_step_call_cap(toolbox):
    turn = calls(*[call("get_order_status", {"order_id": f"ORD-100{i}"}) for i in range(1, 5)])
    model = ScriptedModel([turn])
    state, _ = run(model, toolbox, Limits(max_calls_per_step=3))
    assert state.stop_reason is StopReason.TOOL_CALL_LIMIT
    assert all(c.decision == "not_executed" for c in state.calls)
    assert outputs(state) == []


def test_total_call_cap(toolbox):
    def two():
        return calls(
            call("get_order_status", {"order_id": "ORD-1001"}), call("get_order_status", {"order_id": "ORD-1002"})
        )

    model = ScriptedModel([two(), two(), text("never")])
    state, _ = run(model, toolbox, Limits(max_steps=5, max_tool_calls=3))
    assert state.stop_reason is StopReason.TOOL_CALL_LIMIT
    assert len(model.requests) == 2
    assert [c.decision for c in state.calls] == ["executed", "executed", "not_executed", "not_executed"]


def test_response_too_large(toolbox):
    model = ScriptedModel([text("x" * 20_000)])
    state, _ = run(model, toolbox, Limits(max_response_chars=16_000))
    assert state.stop_reason is StopReason.RESPONSE_TOO_LARGE
    assert state.answer is None


def test_model_error_stops_without_another_request(toolbox):
    model = ScriptedModel([ModelError("authentication failed: check OPENAI_API_KEY"), text("never")])
    state, _ = run(model, toolbox)
    assert state.stop_reason is StopReason.MODEL_ERROR
    assert "authentication failed" in stop_said(state.model_dump())
    assert len(model.requests) == 1


def test_keyboard_interrupt_cancels(toolbox):
    model = ScriptedModel([KeyboardInterrupt()])
    state, seen = run(model, toolbox)
    assert state.stop_reason is StopReason.CANCELLED
    assert seen[-1].to is Phase.FINISH
    assert seen[-1].from_ is Phase.PLAN  # the model request was under way, not a tool


def test_keyboard_interrupt_during_a_tool_is_labelled_act():
    def interrupted(args, ctx):
        raise KeyboardInterrupt

    slow = Tool("slow", "is interrupted", OrderIdArgs, interrupted)
    model = ScriptedModel([calls(call("slow", {"order_id": "ORD-1"}))])
    state, seen = run(model, Toolbox([slow]))
    assert state.stop_reason is StopReason.CANCELLED
    assert (seen[-1].from_, seen[-1].to) == (Phase.ACT, Phase.FINISH)


def test_answer_loses_trailing_newlines(toolbox):
    state, _ = run(ScriptedModel([text("好的。\n\n  \n")]), toolbox)
    assert state.answer == "好的。"


def test_truncated_response_is_its_own_stop_with_the_partial_text(toolbox):
    cut = Turn((assistant("订单 ORD-1001 的状态是\n"),), truncated=True, server_model="qwen2.5-1.5b", fingerprint="b1")
    state, _ = run(ScriptedModel([cut]), toolbox)
    assert state.stop_reason is StopReason.RESPONSE_TRUNCATED and EXIT_CODES[state.stop_reason] == 3
    assert state.answer is None and state.partial_answer == "订单 ORD-1001 的状态是"
    assert (state.server_model, state.system_fingerprint) == ("qwen2.5-1.5b", "b1")


@pytest.mark.parametrize(
    ("the_call", "code"),
    [
        (call("delete_everything", {}), "unknown_tool"),
        (call("get_order_status", "{not json"), "invalid_json"),
        (call("get_order_status", {"order_id": "ORD-1001", "extra": 1}), "invalid_arguments"),
        (call("get_order_status", {"order_id": 1001}), "invalid_arguments"),
        (call("get_order_status", {}), "invalid_arguments"),
        (call("get_order_status", {"order_id": "ORD-" + "9" * 40}), "invalid_arguments"),
        (call("get_order_status", {"order_id": "1001"}), "invalid_arguments"),
    ],
)
def test_bad_calls_reach_the_model_as_structured_errors_and_the_run_goes_on(toolbox, the_call, code):
    model = ScriptedModel([calls(the_call), text("抱歉")])
    state, _ = run(model, toolbox)
    assert state.stop_reason is StopReason.ANSWERED
    [envelope] = outputs(state)
    assert envelope["ok"] is False and envelope["code"] == code
    assert len(envelope["error"]) < 300
    # The model saw the error in its next request.
    assert any(isinstance(i, FunctionCallOutput) for i in model.requests[1].items)


def test_no_tool_outside_the_whitelist_ever_runs(toolbox):
    ran = []
    secret = Tool("secret_tool", "not offered", OrderIdArgs, lambda args, ctx: ran.append(1))
    offered = Toolbox([Tool("get_order_status", "status", OrderIdArgs, lambda a, c: {"status": "x"})])
    assert offered.get("secret_tool") is None
    model = ScriptedModel([calls(call("secret_tool", {"order_id": "ORD-1"}), call("__import__", {})), text("ok")])
    state, _ = run(model, offered)
    assert ran == [] and secret.name not in [s["name"] for s in offered.specs]
    assert [c.decision for c in state.calls] == ["unknown_tool", "unknown_tool"]


def test_unexpected_tool_exception_becomes_internal_error_without_details(toolbox, caplog):
    def explode(args, ctx):
        raise RuntimeError(
            "connection to db.internal:5432 failed at /srv/app/secrets.py with key sk-live-abcdefgh12345678"
        )

    boom = Tool("boom", "fails", OrderIdArgs, explode)
    model = ScriptedModel([calls(call("boom", {"order_id": "ORD-1"})), text("sorry")])
    with caplog.at_level("ERROR", logger="orderbot"):
        state, _ = run(model, Toolbox([boom]))
    [envelope] = outputs(state)
    assert envelope["code"] == "internal_error"
    sent = json.dumps(envelope)
    for leak in ("db.internal", "/srv", "sk-live", "RuntimeError", "Traceback"):
        assert leak not in sent
    assert state.run_id in caplog.text  # logged locally with the run id


def test_tool_versions_change_with_the_spec():
    a = Tool("t", "one", OrderIdArgs, lambda a, c: None)
    b = Tool("t", "two", OrderIdArgs, lambda a, c: None)
    assert a.version != b.version
    assert a.spec["strict"] is True
    assert a.spec["parameters"]["additionalProperties"] is False
    assert a.spec["parameters"]["required"] == ["order_id"]


def test_transitions_report_budget_used(toolbox):
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("ok")])
    _, seen = run(model, toolbox)
    assert [(t.steps_used, t.calls_used) for t in seen] == [(0, 0), (1, 0), (1, 1), (1, 1), (2, 1)]
    assert seen[1].budget_left["steps"] == 2


def test_resuming_a_limit_stopped_run_tells_the_model_which_calls_did_not_run(toolbox):
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"}, call_id="late")), text("好的")])
    engine = Engine(model, toolbox, Limits(max_steps=1))
    state = engine.run(RunState.start("查询 ORD-1001"))
    assert state.stop_reason is StopReason.STEP_LIMIT
    Engine(model, toolbox, Limits(max_steps=2)).run(state)
    assert state.stop_reason is StopReason.ANSWERED
    [late] = [i for i in model.requests[1].items if isinstance(i, FunctionCallOutput)]
    assert late.call_id == "late" and json.loads(late.output)["code"] == "not_executed"


def test_a_provider_that_raises_something_unexpected_stops_as_model_error(toolbox):
    model = ScriptedModel([RuntimeError("socket at 10.0.0.7 exploded"), text("never")])
    state, _ = run(model, toolbox)
    assert state.stop_reason is StopReason.MODEL_ERROR
    assert "RuntimeError" in stop_said(state.model_dump()) and "10.0.0.7" not in stop_said(state.model_dump())
    assert len(model.requests) == 1


def test_a_time_limit_stop_says_what_was_being_retried(toolbox):
    model = ScriptedModel([ModelTimeout("rate limited; no time left", cause="rate limited (HTTP 429)")])
    state, _ = run(model, toolbox)
    assert state.stop_reason is StopReason.TIME_LIMIT
    assert stop_said(state.model_dump()).endswith("(last error: rate limited (HTTP 429))")


def test_one_engine_runs_two_runs_interleaved(toolbox):
    """A run's state, budget and phase belong to that run, not to the engine: a second run
    started on the same engine while the first waits for its model (here from inside the
    first run's model request) leaves the first one's counts, calls and answer alone."""
    seen: list[tuple[str, Event, int, int]] = []
    second = RunState.start("请查询订单 ORD-1002 的状态。")

    def first_plan(request: ModelRequest) -> Turn:
        engine.run(second)  # the second run goes from start to finish in the middle of the first one's step
        return calls(call("get_order_status", {"order_id": "ORD-1001"}, call_id="a1"))

    model = ScriptedModel(
        [
            first_plan,
            calls(call("get_order_status", {"order_id": "ORD-1002"}, call_id="b1")),
            calls(call("get_order_status", {"order_id": "ORD-1003"}, call_id="b2")),
            text("B answered"),
            text("A answered"),
        ]
    )
    engine = Engine(
        model,
        toolbox,
        Limits(max_steps=3),
        observers=[lambda t, s: seen.append((s.run_id, t.kind, t.steps_used, t.calls_used))],
    )
    first = engine.run(RunState.start("请查询订单 ORD-1001 的状态。"))
    model.assert_complete()
    assert (first.stop_reason, first.answer, first.steps, first.tool_calls) == (StopReason.ANSWERED, "A answered", 2, 1)
    assert (second.stop_reason, second.answer, second.steps, second.tool_calls) == (
        StopReason.ANSWERED,
        "B answered",
        3,
        2,
    )
    assert [c.call_id for c in first.calls] == ["a1"] and [c.call_id for c in second.calls] == ["b1", "b2"]
    # Each run's transitions count its own budget, though the second ran inside the first.
    of_first = [(kind, steps, used) for run_id, kind, steps, used in seen if run_id == first.run_id]
    assert of_first == [
        (Event.STARTED, 0, 0),
        (Event.PROPOSED, 1, 0),
        (Event.EXECUTED, 1, 1),
        (Event.RETURNED, 1, 1),
        (Event.FINISHED, 2, 1),
    ]
    assert [kind for run_id, kind, *_ in seen if run_id == second.run_id][-1] is Event.FINISHED
