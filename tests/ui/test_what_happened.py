"""What the person sees is what happened: a stopped run says how to continue it, the time
shown is the time the limit counts, money and calls look the same wherever they are shown,
the model has one name, and an approval prompt does not break the table in two widths."""

from __future__ import annotations

import io
import json
import os
import re
import shlex

import pexpect
import pyte
import pytest
from clikit import cli
from forked_terminal import orderbot_in_a_terminal
from rich.console import Console

from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.state import PendingCall, RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.ui.presentation import resume_command
from orderbot.ui.render import TransitionView

QUESTION = "请查询订单 ORD-1001 的状态。"


def last_line(output: str) -> str:
    return output.rstrip("\n").splitlines()[-1]


# ---- after a limit stop or Ctrl-C: how to continue ------------------------------------------


def test_a_step_limit_ends_with_the_command_that_continues_the_run():
    stopped = cli("ask", "--max-steps", "1", QUESTION)
    assert stopped.exit_code == 3, stopped.output
    run_id = re.search(r"run id: (\S+)", stopped.output).group(1)
    lines = stopped.output.rstrip("\n").splitlines()
    assert lines[-2:] == ["To resume:", f"  orderbot resume {run_id} --max-steps 3"], lines  # more than the 1 it had
    command = shlex.split(last_line(stopped.output))
    continued = cli(*command[1:])
    assert continued.exit_code == 0, continued.output
    assert "订单 ORD-1001 的状态是：已发货。" in continued.output


def test_json_carries_the_same_command():
    doc = json.loads(cli("ask", "--json", "--max-steps", "1", QUESTION).stdout)
    assert doc["resume_command"] == f"orderbot resume {doc['run_id']} --max-steps 3"
    answered = json.loads(cli("ask", "--json", QUESTION).stdout)
    assert answered["resume_command"] is None  # nothing to continue


def test_the_hint_is_in_the_ui_language():
    stopped = cli("ask", "--lang", "zh", "--max-steps", "1", QUESTION)
    lines = stopped.output.rstrip("\n").splitlines()
    assert lines[-2] == "继续这次运行：" and lines[-1].startswith("  orderbot resume "), lines


def test_runs_show_of_a_stopped_run_ends_with_it_too():
    stopped = cli("ask", "--user", "C001", "--max-steps", "1", QUESTION)
    shown = cli("runs", "show", "last")
    assert last_line(shown.output) == last_line(stopped.output), shown.output
    assert last_line(shown.output).endswith(" --max-steps 3 --user C001")


def test_a_cancelled_run_says_how_to_continue_and_does(use_model):
    use_model(ScriptedModel([KeyboardInterrupt(), text("订单 ORD-1001 已发货。")]))
    stopped = cli("ask", "--provider", "scripted", "--user", "C001", "查询 ORD-1001")
    assert stopped.exit_code == 130, stopped.output
    run_id = re.search(r"run id: (\S+)", stopped.output).group(1)
    assert last_line(stopped.output) == f"  orderbot resume {run_id} --user C001"  # the limits did not stop it
    continued = cli(*shlex.split(last_line(stopped.output))[1:])
    assert continued.exit_code == 0 and "已发货" in continued.output, continued.output


def test_too_many_calls_in_one_step_names_the_per_step_cap(use_model):
    four = calls(*[call("get_order_status", {"order_id": "ORD-1001"}) for _ in range(4)])
    use_model(ScriptedModel([four, four, text("订单 ORD-1001 已发货。")]))
    stopped = cli("ask", "--provider", "scripted", "查询 ORD-1001")
    assert stopped.exit_code == 3
    command = last_line(stopped.output).strip()
    assert command.endswith(" --max-calls-per-step 6"), stopped.output
    continued = cli(*shlex.split(command)[1:])
    assert continued.exit_code == 0, continued.output


def stopped_state(reason: StopReason, message: str | None = None) -> RunState:
    state = RunState.start("q", user="C001")
    state.stop_reason = reason
    state.stop_message = {"id": message, "params": {}} if message else None
    return state


@pytest.mark.parametrize(
    ("reason", "message", "limits", "ending"),
    [
        (StopReason.STEP_LIMIT, "detail.step_limit_one", Limits(max_steps=5), " --max-steps 10 --user C001"),
        (StopReason.TIME_LIMIT, "detail.time_before_request", Limits(timeout=3), " --timeout 30 --user C001"),
        (StopReason.TIME_LIMIT, "detail.model_timeout", Limits(timeout=40), " --timeout 80 --user C001"),
        (StopReason.TOOL_CALL_LIMIT, "detail.tool_calls", Limits(max_tool_calls=6), " --max-tool-calls 12 --user C001"),
        (StopReason.TOOL_CALL_LIMIT, "detail.calls_per_step", Limits(), " --max-calls-per-step 6 --user C001"),
        (StopReason.STEP_LIMIT, "detail.step_limit", Limits(max_steps=80), " --max-steps 100 --user C001"),  # its bound
        (StopReason.CANCELLED, "detail.interrupted", Limits(), " --user C001"),
    ],
)
def test_each_limit_stop_lifts_its_own_limit(reason, message, limits, ending):
    state = stopped_state(reason, message)
    assert resume_command(state, limits=limits) == f"orderbot resume {state.run_id}{ending}"


def test_a_response_cap_has_no_flag_so_the_command_sets_its_variable():
    state = stopped_state(StopReason.RESPONSE_TOO_LARGE, "detail.response_too_large")
    command = resume_command(state, limits=Limits(max_response_chars=20_000))
    assert command == f"ORDERBOT_MAX_RESPONSE_CHARS=40000 orderbot resume {state.run_id} --user C001"


@pytest.mark.parametrize("reason", [StopReason.ANSWERED, StopReason.MODEL_ERROR, StopReason.TRANSFERRED])
def test_a_run_a_larger_budget_would_not_help_gets_no_command(reason):
    assert resume_command(stopped_state(reason), limits=Limits()) is None


def test_a_shared_store_names_itself_in_the_command(tmp_path):
    runs = f"sqlite:///{tmp_path / 'runs.db'}"
    stopped = cli("ask", "--runs", runs, "--max-steps", "1", QUESTION, env={"COLUMNS": "300"})  # on one line
    command = last_line(stopped.output).strip()
    assert command.endswith(f"--max-steps 3 --runs {runs}"), stopped.output
    doc = json.loads(cli("ask", "--json", "--runs", runs, "--max-steps", "1", QUESTION).stdout)
    assert doc["resume_command"].endswith(f"--runs {runs}")
    continued = cli(*shlex.split(command)[1:])
    assert continued.exit_code == 0, continued.output


# ---- the time shown is the run's own: a person's time to decide is not in it ----------------


def test_the_time_column_leaves_out_the_time_a_person_took_to_approve(toolbox, clock):
    def model_takes(seconds: float, turn):
        def respond(request):
            clock.advance(seconds)
            return turn

        return respond

    def person_takes_ten_seconds(pending: PendingCall) -> bool:
        clock.advance(10)
        return True

    cancel = calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不想要了"}))
    model = ScriptedModel([model_takes(0.5, cancel), model_takes(0.7, text("订单 ORD-1002 已取消。"))])
    out = io.StringIO()
    view = TransitionView(Console(file=out, width=200, color_system=None), Limits(timeout=3))  # all six columns
    engine = Engine(model, toolbox, Limits(timeout=3), clock=clock, observers=[view], approver=person_takes_ten_seconds)
    state = engine.run(RunState.start("取消订单 ORD-1002", user="C001"))
    view.close()
    assert state.stop_reason is StopReason.ANSWERED  # under --timeout 3, after a 10 s "yes"
    assert view.transitions[-1].elapsed == pytest.approx(1.2)  # the model's 0.5 s and 0.7 s only
    times = re.findall(r" (\d+\.\d)s *$", out.getvalue(), re.M)
    assert times and times[-1] == "1.2" and max(map(float, times)) <= 3.0, out.getvalue()
    assert "11.2" not in out.getvalue() and "11200" not in out.getvalue()


# ---- one way to show money, a call and the model --------------------------------------------


def test_money_is_shown_one_way_in_the_answer_the_facts_and_orders_show(orders_file):
    asked = cli("ask", "--user", "C001", "--orders", str(orders_file), "ORD-1001 的详情")
    answer, facts = asked.output.split("Facts from the tools:")
    assert "合计 ¥227.00" in answer and "total: ¥227.00" in facts, asked.output
    shown = cli("orders", "show", "ORD-1001", "--user", "C001", "--orders", str(orders_file))
    assert "total: ¥227.00" in shown.output and "@ ¥" in shown.output, shown.output
    assert not re.search(r"\b227\.0\b|currency: ", shown.output), shown.output


def test_a_call_reads_the_same_on_every_row(orders_file, tmp_path):
    """Proposed, waiting for approval, carried out: name(key="value"). (The audit log keeps
    the canonical arguments the approval was bound to, as they were bound.)"""
    question = "取消订单 ORD-1002，不想要了"
    paused = json.loads(cli("ask", "--json", "-u", "C001", "-o", str(orders_file), question).stdout)
    shown = cli("runs", "show", paused["run_id"]).output
    call = 'cancel_order(order_id="ORD-1002", reason="不想要了")'
    assert "proposed 1 call" in shown and "approval needed" in shown and shown.count(call) == 2, shown
    cli("resume", paused["run_id"], "--approve", "-u", "C001")
    done = " ".join(cli("runs", "show", paused["run_id"]).output.split())
    assert "approved and executed " + call + " → ok " in done, done


def model_line(output: str) -> str:
    """The `model: ...` part of a header, whatever the header's line breaks."""
    header = " ".join(output.split("\n")[:3])
    return re.search(r"model: (.+?)(?: \[auto| · )", " ".join(header.split())).group(1)


def test_the_model_has_one_name_in_ask_runs_show_and_eval():
    asked = model_line(cli("ask", QUESTION).output)
    shown = model_line(cli("runs", "show", "last").output)
    evaluated = model_line(cli("eval").output)
    assert asked == shown == evaluated == "offline (built-in planner, no network)"


def test_a_scripted_model_is_named_by_provider_and_name(use_model):
    use_model(ScriptedModel([text("好的。"), text("好的。")], name="gpt-test"))
    asked = model_line(cli("ask", "--provider", "scripted", QUESTION).output)
    assert asked == model_line(cli("runs", "show", "last").output) == "scripted/gpt-test"


# ---- an approval prompt keeps one table ---------------------------------------------------


def tables(lines: list[str]) -> list[tuple[str, str]]:
    """Each table's top and bottom border."""
    tops = [line for line in lines if line.startswith("╭") and "┬" in line]
    bottoms = [line for line in lines if line.startswith("╰") and "┴" in line]
    return list(zip(tops, bottoms, strict=True))


@pytest.mark.slow  # a terminal session
@pytest.mark.parametrize("columns", [80, 120])
def test_the_rows_after_an_approval_line_up_with_the_rows_before(orders_file, tmp_path, columns):
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm", "ORDERBOT_STATE_DIR": str(tmp_path / "state")}
    args = ["ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002，不想要了"]
    child = orderbot_in_a_terminal(args, env=env, dimensions=(60, columns))
    child.expect_exact("[y/N]")
    said = child.before + child.after
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    screen = pyte.Screen(columns, 200)
    pyte.Stream(screen).feed(said + child.before)
    lines = [line.rstrip() for line in screen.display if line.strip()]
    drawn = tables(lines)
    assert len(drawn) == 2, lines  # the part before the question, and the part after it
    (top1, bottom1), (top2, bottom2) = drawn
    assert top1 == top2 and bottom1 == bottom2, "\n".join(lines)
