"""`--trace`: per step, what was sent, proposed, decided (and why), returned, timed and left."""

from __future__ import annotations

import json

import pytest
from clikit import cli
from saying import english

from orderbot.loop.engine import Engine, Limits
from orderbot.loop.model import Usage
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.ui.document import trace_steps


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wide enough that no checked sentence is wrapped inside a panel."""
    monkeypatch.setenv("COLUMNS", "250")


def ask(*args: str):
    return cli("ask", *args)


def two_step_script() -> ScriptedModel:
    """Step 1: one good call and three refused ones; step 2: a call at the last step."""
    return ScriptedModel(
        [
            calls(
                call("get_order_status", {"order_id": "ORD-1001"}, "c_ok"),
                call("delete_order", {"order_id": "ORD-1001"}, "c_unknown"),
                call("get_order_status", {"order_id": "1001"}, "c_invalid"),
                call("get_order_details", {"order_id": "ORD-1003"}, "c_foreign"),
                usage=Usage(input_tokens=321, output_tokens=45),
            ),
            calls(call("get_order_status", {"order_id": "ORD-1002"}, "c_late")),
        ]
    )


def test_trace_shows_every_decision_of_a_two_step_run(use_model, orders_file):
    use_model(two_step_script())
    result = ask(
        "--provider",
        "scripted",
        "--trace",
        "--user",
        "C001",
        "--orders",
        str(orders_file),
        "--max-steps",
        "2",
        "--max-calls-per-step",
        "4",
        "查询 ORD-1001",
    )
    out = result.output
    assert result.exit_code == 3, out
    assert out.count("step 1") >= 1 and "step 2" in out
    # what was sent, with the token counts the model reported and the tools offered
    assert "1 item, " in out and "tokens: 321 in / 45 out" in out
    assert "tools offered: get_order_status, get_order_details, list_my_orders, cancel_order" in out
    # each proposed call with its arguments, and the decision with its reason
    assert '{"order_id": "ORD-1001"}' in out and '{"order_id": "1001"}' in out
    assert "allowed, executed" in out
    assert "refused: unknown tool (not in the whitelist)" in out  # the decision, in words
    assert '"error": "tool \'delete_order\' is not available"' in out  # what the model got, as it got it
    assert "refused: invalid arguments" in out and "order_id: Value error, order id must start with 'ORD-'" in out
    assert "refused: no access" in out
    assert "not executed (step_limit): the model asked for get_order_status at step 2 of 2" in out
    # each result as the model saw it, the time of each phase, and the budget left
    assert '"status": "已发货"' in out and '"code": "unknown_tool"' in out
    assert "model request" in out and "tools " in out
    assert "budget left     1 step · 2 tool calls" in out  # after step 1 (4 calls of 6 used)
    assert "budget left     0 steps · 2 tool calls" in out
    assert "step_limit" in out.split("step 2", 1)[1]


def test_offline_trace_of_the_readme_question():
    result = ask("--trace", "查询 ORD-1001 和 ORD-9999")
    out = result.output
    assert result.exit_code == 0, out
    assert out.count("allowed, executed") == 2
    assert '{"order_id": "ORD-9999"}' in out and '"status": "不存在"' in out
    assert "model answered  订单 ORD-1001 的状态是：已发货。" in out
    assert "finish          answered" in out


def test_trace_shows_a_call_waiting_for_approval(orders_file):
    result = ask("--trace", "--user", "C001", "--orders", str(orders_file), "取消 ORD-1002")
    assert result.exit_code == 4, result.output
    assert "needs approval: waiting for a person: Cancel ORD-1002" in result.output


def test_without_trace_there_are_no_panels():
    result = ask("查询 ORD-1001")
    assert "budget left" not in result.output and "plan → act" in result.output


def test_json_trace_carries_the_same_detail(use_model, orders_file):
    use_model(two_step_script())
    result = ask(
        "--provider",
        "scripted",
        "--trace",
        "--json",
        "--user",
        "C001",
        "--orders",
        str(orders_file),
        "--max-steps",
        "2",
        "--max-calls-per-step",
        "4",
        "查询 ORD-1001",
    )
    doc = json.loads(result.output)
    steps = doc["trace"]
    assert [s["step"] for s in steps] == [1, 2]
    assert [(c["call_id"], c["decision"]) for s in steps for c in s["calls"]] == [
        ("c_ok", "executed"),
        ("c_unknown", "unknown_tool"),
        ("c_invalid", "invalid_arguments"),
        ("c_foreign", "no_access"),
        ("c_late", "not_executed"),
    ]
    assert steps[0]["calls"][0]["arguments"] == {"order_id": "ORD-1001"}  # parsed, not raw text
    assert steps[0]["usage"] == {"input_tokens": 321, "output_tokens": 45}
    assert steps[0]["sent"]["items"] == 1
    assert steps[0]["budget_left"]["steps"] == 1 and steps[0]["budget_left"]["tool_calls"] == 2
    assert steps[1]["stop"]["reason"] == "step_limit"
    assert steps[1]["calls"][0]["why"] == "step_limit"  # the stop's reason: its words are the stop's


def test_text_the_model_wrote_is_shown_literally_never_as_markup(use_model):
    use_model(ScriptedModel([calls(call("[/]oops[bold]", {"order_id": "[red]ORD-1[/red]"})), text("[/] done")]))
    result = ask("--provider", "scripted", "--trace", "查询")
    assert result.exit_code == 0, result.output
    assert "[/]oops[bold]" in result.output and '"[red]ORD-1[/red]"' in result.output
    assert "model answered  [/] done" in result.output


def test_json_without_trace_has_no_trace_key():
    doc = json.loads(ask("--json", "查询 ORD-1001").output)
    assert "trace" not in doc


def run_engine(model, toolbox, limits, clock):
    seen = []
    state = RunState.start("查询", run_id="r1")
    Engine(model, toolbox, limits, clock=clock, observers=[lambda t, s: seen.append(t)]).run(state)
    return state, trace_steps(seen)


def test_calls_cut_off_by_the_clock_are_not_executed_with_the_reason(toolbox, clock):
    def slow(request):
        clock.advance(31)  # the answer arrives, but the run's 30 s are gone before any call runs
        return calls(call("get_order_status", {"order_id": "ORD-1001"}, "a"))

    state, steps = run_engine(ScriptedModel([slow]), toolbox, Limits(), clock)
    assert state.stop_reason == "time_limit"
    (step,) = steps
    assert step["calls"][0]["decision"] == "not_executed"
    assert step["calls"][0]["why"] == "time_limit"
    assert step["budget_left"]["seconds"] == 0


def test_over_the_per_step_cap_none_run(toolbox, clock):
    model = ScriptedModel([calls(*(call("get_order_status", {"order_id": f"ORD-100{i}"}) for i in range(1, 4)))])
    state, steps = run_engine(model, toolbox, Limits(max_calls_per_step=2), clock)
    assert state.stop_reason == "tool_call_limit"
    assert [c["decision"] for c in steps[0]["calls"]] == ["not_executed"] * 3
    assert steps[0]["calls"][0]["why"] == "tool_call_limit"
    assert "over the cap of 2" in english(steps[0]["stop"]["message"])


def test_an_answer_step_has_its_text_and_no_calls(toolbox, clock):
    state, steps = run_engine(ScriptedModel([text("你好")]), toolbox, Limits(), clock)
    assert steps == [{**steps[0], "calls": [], "text": "你好", "stop": {"reason": "answered", "detail": "你好"}}]


def test_each_step_record_names_its_moves(toolbox, clock):
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("好的")])
    state, steps = run_engine(model, toolbox, Limits(), clock)
    assert [step["phases"] for step in steps] == [
        [["plan", "act"], ["act", "observe"], ["observe", "plan"]],
        [["plan", "finish"]],
    ]


def test_a_record_cut_off_mid_step_still_lists_its_calls(toolbox, clock):
    seen = []
    state = RunState.start("查询", run_id="r2")
    model = ScriptedModel(
        [
            calls(
                call("get_order_status", {"order_id": "ORD-1001"}, "a"),
                call("get_order_status", {"order_id": "ORD-1002"}, "b"),
            ),
            text("ok"),
        ]
    )
    Engine(model, toolbox, Limits(), clock=clock, observers=[lambda t, s: seen.append(t)]).run(state)
    cut = seen[:3]  # started, proposed, the first call's result: then the process died
    (step,) = trace_steps(cut)
    assert [(c["call_id"], c["decision"]) for c in step["calls"]] == [("a", "executed"), ("b", "not_executed")]
    assert step["stop"] is None
