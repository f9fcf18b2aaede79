"""Side effects wait for a person: paused when nobody can be asked, asked exactly what will
happen in a terminal, rejected unless the answer is yes, and run at most once when approved."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

import pexpect
import pyte
import pytest
from clikit import cli
from fakeapi import FakeAPI, completion, reply, tool_call
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal
from rich.console import Console
from saying import english

from orderbot.errors import Phrase
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.items import FunctionCallOutput
from orderbot.loop.state import PendingCall, RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.sample.tools import order_tools
from orderbot.ui.presentation import terminal_approver
from orderbot.ui.render import TransitionView

CANCEL = {"order_id": "ORD-1002", "reason": "不想要了"}
DESCRIPTION = "Cancel ORD-1002 (处理中, ¥199.00), reason: 不想要了"
PROMPTED = "Cancel ORD-1002 (处理中, ¥199.00), reason: 用户要求取消"  # what the offline planner gives as the reason


@pytest.fixture
def store(shop):
    """Every test here that uses the store (or the toolbox over it) runs on each kind of store."""
    return shop.open()


def fresh_toolbox(shop) -> Toolbox:
    """A toolbox over the orders as they are now: what a new process would open."""
    return Toolbox(order_tools(shop.open()))


def results_sent(request) -> list[dict]:
    return [json.loads(i.output) for i in request.items if isinstance(i, FunctionCallOutput)]


# ---- nobody to ask: the run pauses --------------------------------------------------------


def test_piped_ask_pauses_with_exit_4_and_writes_nothing(shop):
    before = shop.snapshot()
    result = cli("ask", "--user", "C001", "--orders", shop.source, "取消订单 ORD-1002，不想要了")
    assert result.exit_code == 4, result.output
    assert shop.snapshot() == before
    assert f"Paused: an action is waiting for your approval. {DESCRIPTION}." in result.output
    run_id = result.output.split("run id: ")[1].split()[0]
    assert f"orderbot resume {run_id} --approve --user C001" in result.output


def test_piped_json_holds_the_pending_call_and_the_resume_command(shop):
    before = shop.snapshot()
    result = cli("ask", "--user", "C001", "--orders", shop.source, "--json", "取消订单 ORD-1002，不想要了")
    assert result.exit_code == 4
    doc = json.loads(result.output)
    assert doc["stop_reason"] == "awaiting_approval" and doc["exit_code"] == 4
    [pending] = doc["pending"]
    assert pending["name"] == "cancel_order" and pending["user"] == "C001"
    assert pending["arguments"] == CANCEL  # an object a program reads, not JSON inside JSON
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", pending["requested_at"])  # ISO as every --json time
    assert english(pending["description"]) == DESCRIPTION  # its id and values: said where it is read
    assert pending["version"] == fresh_toolbox(shop).versions["cancel_order"]
    assert doc["resume_command"] == f"orderbot resume {doc['run_id']} --approve --user C001"
    assert shop.snapshot() == before


def test_a_scripted_model_asking_to_cancel_pauses_the_real_cli(shop, use_model):
    before = shop.snapshot()
    use_model(ScriptedModel([calls(call("cancel_order", CANCEL))]))
    result = cli("ask", "--provider", "scripted", "--user", "C001", "--orders", shop.source, "--json", "cancel it")
    assert result.exit_code == 4
    assert [p["name"] for p in json.loads(result.output)["pending"]] == ["cancel_order"]
    assert shop.snapshot() == before


def test_a_cancel_that_cannot_happen_is_refused_before_anyone_is_asked(shop):
    # ORD-1001 has shipped: there is nothing to approve, the model hears why.
    result = cli("ask", "--user", "C001", "--orders", shop.source, "--json", "取消订单 ORD-1001")
    doc = json.loads(result.output)
    assert result.exit_code == 0 and doc["pending"] == []
    assert doc["calls"][0]["result"]["code"] == "not_cancellable"


@pytest.mark.parametrize("order_id", ["ORD-1001", "ORD-1005"])
def test_a_chinese_question_hears_why_a_cancel_cannot_happen_in_chinese(shop, order_id):
    # the store's reason is English (for the model); the offline answer to a Chinese question is all Chinese
    owner = {"ORD-1001": "C001", "ORD-1005": "C003"}[order_id]
    result = cli("ask", "--user", owner, "--orders", shop.source, "--json", f"取消订单 {order_id}")
    doc = json.loads(result.output)
    assert doc["calls"][0]["result"]["code"] == "not_cancellable"
    status = {"ORD-1001": "已发货", "ORD-1005": "已取消"}[order_id]
    assert doc["answer"] == f"订单 {order_id} 当前状态不能取消：订单状态是{status}，只有处理中或待付款的订单可以取消。"


def test_the_pending_call_is_bound_to_tool_version_arguments_and_user(toolbox):
    model = ScriptedModel([calls(call("cancel_order", {"reason": "  不想要了 ", "order_id": "ORD-1002"}))])
    state = Engine(model, toolbox, Limits()).run(RunState.start("q", user="C001"))
    assert state.stop_reason is StopReason.AWAITING_APPROVAL
    [pending] = state.pending
    assert (pending.name, pending.version, pending.user) == ("cancel_order", toolbox.versions["cancel_order"], "C001")
    assert pending.arguments == '{"order_id": "ORD-1002", "reason": "不想要了"}'  # validated, canonical
    assert [c.decision for c in state.calls] == []  # nothing ran, nothing was answered yet


# ---- a person answers --------------------------------------------------------------------


def test_rejected_approval_writes_nothing_and_the_model_is_told(shop, toolbox):
    before = shop.snapshot()
    asked: list[PendingCall] = []
    model = ScriptedModel([calls(call("cancel_order", CANCEL)), text("好的，没有取消。")])
    engine = Engine(model, toolbox, Limits(), approver=lambda p: asked.append(p) or False)
    state = engine.run(RunState.start("取消订单 ORD-1002", user="C001"))
    assert [english(Phrase.from_text(p.description)) for p in asked] == [DESCRIPTION]
    assert state.stop_reason is StopReason.ANSWERED and state.answer == "好的，没有取消。"
    assert results_sent(model.requests[1]) == [
        {"ok": False, "error": "the person did not approve this action; nothing was done", "code": "rejected"}
    ]
    assert shop.snapshot() == before


def test_approved_call_is_written_exactly_once(shop, toolbox):
    model = ScriptedModel([calls(call("cancel_order", CANCEL)), text("已取消。")])
    state = Engine(model, toolbox, Limits(), approver=lambda p: True).run(RunState.start("q", user="C001"))
    assert state.stop_reason is StopReason.ANSWERED
    assert [c.decision for c in state.calls] == ["executed"]
    assert results_sent(model.requests[1])[0]["data"]["status"] == "已取消"
    order = shop.open().get("ORD-1002")
    assert order.status == "已取消" and order.cancelled_by == f"{state.run_id}/{state.calls[0].call_id}"


def test_time_spent_deciding_does_not_count_against_the_time_limit(shop, toolbox, clock):
    def slow_person(pending: PendingCall) -> bool:
        clock.advance(120)  # two minutes to read and say yes, with a 30 s run limit
        return True

    model = ScriptedModel([calls(call("cancel_order", CANCEL)), text("已取消。")])
    engine = Engine(model, toolbox, Limits(timeout=30), clock=clock, approver=slow_person)
    state = engine.run(RunState.start("取消订单 ORD-1002", user="C001"))
    assert state.stop_reason is StopReason.ANSWERED
    assert model.requests[1].timeout == pytest.approx(30)  # the next request still got the time left


def test_resuming_the_same_paused_run_twice_cancels_once(shop, toolbox):
    paused = Engine(ScriptedModel([calls(call("cancel_order", CANCEL))]), toolbox, Limits()).run(
        RunState.start("取消订单 ORD-1002", user="C001")
    )
    assert paused.stop_reason is StopReason.AWAITING_APPROVAL
    saved = paused.model_dump_json()  # what the run record holds
    first_copy, second_copy = RunState.model_validate_json(saved), RunState.model_validate_json(saved)

    first = Engine(ScriptedModel([text("已取消。")]), fresh_toolbox(shop), Limits()).run(
        first_copy, approve_pending=True
    )
    written = shop.snapshot()
    second = Engine(ScriptedModel([text("已取消。")]), fresh_toolbox(shop), Limits()).run(
        second_copy, approve_pending=True
    )

    assert first.stop_reason is second.stop_reason is StopReason.ANSWERED
    assert [c.decision for c in first.calls] == [c.decision for c in second.calls] == ["executed"]
    assert first.calls[0].result == second.calls[0].result  # the same answer, from what was stored
    assert shop.snapshot() == written  # no second write (the JSON file's inode: tests/shops/sample/test_writes.py)
    assert shop.status("ORD-1002") == "已取消"


def test_resuming_with_a_rejection_writes_nothing(shop, toolbox):
    before = shop.snapshot()
    paused = Engine(ScriptedModel([calls(call("cancel_order", CANCEL))]), toolbox, Limits()).run(
        RunState.start("q", user="C001")
    )
    model = ScriptedModel([text("没有取消。")])
    state = Engine(model, fresh_toolbox(shop), Limits()).run(paused, approve_pending=False)
    assert [c.decision for c in state.calls] == ["rejected"]
    assert results_sent(model.requests[0])[-1]["code"] == "rejected"
    assert shop.snapshot() == before


def test_an_approval_is_checked_again_when_it_is_settled(shop, toolbox):
    paused = Engine(ScriptedModel([calls(call("cancel_order", CANCEL))]), toolbox, Limits()).run(
        RunState.start("q", user="C001")
    )
    # Meanwhile the order was cancelled by someone else (another run, another call).
    shop.open().cancel("ORD-1002", "电话取消", "other-run/call_9", user="C001")
    before = shop.snapshot()
    state = Engine(ScriptedModel([text("已经取消过了。")]), fresh_toolbox(shop), Limits()).run(
        paused, approve_pending=True
    )
    assert [c.decision for c in state.calls] == ["not_cancellable"]
    assert shop.snapshot() == before


def test_resuming_without_a_decision_stays_paused(shop, toolbox):
    before = shop.snapshot()
    paused = Engine(ScriptedModel([calls(call("cancel_order", CANCEL))]), toolbox, Limits()).run(
        RunState.start("q", user="C001")
    )
    model = ScriptedModel([])
    state = Engine(model, toolbox, Limits(), approver=lambda p: True).run(paused)
    assert state.stop_reason is StopReason.AWAITING_APPROVAL and model.requests == []
    assert shop.snapshot() == before


# ---- the terminal prompt -----------------------------------------------------------------


def prompt(monkeypatch, reply: str, description: str = DESCRIPTION) -> tuple[bool, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(reply))
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    approve = terminal_approver(TransitionView(console, Limits()), console)
    pending = PendingCall(
        step=1,
        call_id="c",
        name="cancel_order",
        version="v",
        arguments="{}",
        user="C001",
        description=description,
        requested_at=0.0,
    )
    return approve(pending), out.getvalue()


@pytest.mark.parametrize(
    "reply, approved",
    [
        ("y\n", True),
        ("Y\n", True),
        ("yes\n", True),
        (" 是 \n", True),
        ("n\n", False),
        ("\n", False),
        ("no\n", False),
        ("yes please\n", False),
        ("", False),  # "" is end of input
    ],
)
def test_only_yes_approves(monkeypatch, reply, approved):
    decision, shown = prompt(monkeypatch, reply)
    assert decision is approved
    assert shown == f"{DESCRIPTION}? [y/N] " + ("\n" if not reply else "")  # end of input ends the prompt's line


def test_the_prompt_shows_model_text_literally(monkeypatch):
    _, shown = prompt(monkeypatch, "n\n", "Cancel ORD-1002 (处理中, ¥199.00), reason: [bold red]urgent[/]")
    assert shown == "Cancel ORD-1002 (处理中, ¥199.00), reason: [bold red]urgent[/]? [y/N] "


def spawn_ask(source: str, question: str) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    args = ["ask", "--user", "C001", "--orders", source, question]
    return orderbot_in_a_terminal(args, env=env, dimensions=(50, 120))


@pytest.mark.slow  # a terminal session
def test_in_a_terminal_ask_asks_first_and_cancels_on_yes(shop):
    child = spawn_ask(shop.source, "取消订单 ORD-1002，不想要了")
    child.expect_exact(f"{DESCRIPTION}? [y/N]")
    assert shop.status("ORD-1002") == "处理中"  # asked before anything ran
    child.sendline("y")
    child.expect_exact("订单 ORD-1002 已取消。")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert shop.status("ORD-1002") == "已取消"


@pytest.mark.slow  # a terminal session
def test_in_a_terminal_anything_but_yes_leaves_the_order_alone(shop):
    before = shop.snapshot()
    child = spawn_ask(shop.source, "取消订单 ORD-1002")
    child.expect_exact("Cancel ORD-1002 (处理中, ¥199.00), reason: 用户要求取消? [y/N]")
    child.sendline("sure")
    child.expect_exact("你没有确认，所以没有对订单 ORD-1002 做任何操作。")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert shop.snapshot() == before


def wait_until_reading(pid: int, within: float = 10) -> None:
    """Until process `pid` sleeps in a read of its standard input (Linux /proc), so that a key
    sent now reaches input(), not a prompt Rich is still writing (a Ctrl-C there would leave
    the prompt in Rich's buffer, printed again by the next write: not what a person sees)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            number, fd, *_ = Path(f"/proc/{pid}/syscall").read_text().split()
        except (OSError, ValueError):  # no such file here, or the process is running
            number = fd = ""
        if number in ("0", "63") and fd == "0x0":  # read(0, ...) on x86-64, on arm64
            return
        if not number and Path(f"/proc/{pid}/wchan").read_text() in ("n_tty_read", "wait_woken"):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never read its terminal")


@pytest.mark.slow  # a terminal session
@pytest.mark.parametrize(("key", "code"), [("ctrl-c", 130), ("ctrl-d", 0)])
def test_ctrl_c_or_ctrl_d_at_the_prompt_ends_its_line_before_the_table_goes_on(orders_file, key, code):
    """The terminal echoes ^C (Ctrl-D echoes nothing) and leaves the cursor on the prompt's
    line: the table drawn next (the cancelled step, or the rejection) starts on a line of its
    own, every border closed, nothing after the prompt. A process of its own: the test
    process has loaded readline, which would end the line itself."""
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    args = ["ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002"]
    child = orderbot_process_in_a_terminal(args, env=env, dimensions=(50, 120))
    child.expect_exact("[y/N]")
    seen = child.before + child.after
    wait_until_reading(child.pid)
    if key == "ctrl-c":
        child.sendintr()
    else:
        child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == code, child.before[-2000:]
    display = pyte.Screen(120, 50)
    pyte.ByteStream(display).feed((seen + child.before).encode())
    lines = [line.rstrip() for line in display.display if line.strip()]
    [prompt] = [line for line in lines if "[y/N]" in line]
    assert prompt in (f"{PROMPTED}? [y/N]", f"{PROMPTED}? [y/N] ^C"), lines
    tables = [line for line in lines if line[:1] in "╭│├╰"]
    assert len(tables) > 8 and all(line[-1] in "╮│┤╯" for line in tables), lines


def copied(output: str) -> list[str]:
    """The command under "To resume:" as a shell reads it when it is pasted: its lines
    joined where each ends in ` \\`, split into its words."""
    lines = output.split("To resume:\n")[1].splitlines()
    end = next(i for i, line in enumerate(lines) if not line.endswith(" \\"))
    return shlex.split("\n".join(lines[: end + 1]).replace("\\\n", ""))


def test_a_command_to_copy_is_continued_between_its_arguments_at_80_columns(orders_file, tmp_path):
    runs = f"sqlite:///{tmp_path / 'a-team-store-whose-path-is-long-enough-to-pass-the-edge' / 'runs.db'}"
    (tmp_path / "a-team-store-whose-path-is-long-enough-to-pass-the-edge").mkdir()
    result = cli(
        "ask", "--user", "C001", "--orders", str(orders_file), "--runs", runs, "取消订单 ORD-1002",
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    [run_id] = re.findall(r"\d{6}-\d{6}-[0-9a-f]{4}", result.output.split("To resume:")[1])
    command = f"orderbot approvals approve {run_id} --runs {runs}"
    assert len(command) > 80
    assert copied(result.output) == shlex.split(command)  # copied, it runs
    assert f"      --runs {runs}" in result.output.splitlines()  # a value longer than the line: whole on its own


def test_the_resume_command_naming_its_server_is_continued_within_80_columns(orders_file):
    with FakeAPI(streams=False) as api:
        api.enqueue("chat", reply(completion(tool_calls=[tool_call("get_order_status", {"order_id": "ORD-1001"})])))
        args = ["--provider", "chat", "--base-url", api.url, "--model", "fake", "--max-steps", "1"]
        result = cli(
            "ask", *args, "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001",
            env={"COLUMNS": "80", "OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    [run_id] = re.findall(r"\d{6}-\d{6}-[0-9a-f]{4}", result.output.split("To resume:")[1])
    command = f"orderbot resume {run_id} --max-steps 3 --user C001 --base-url {api.url}"
    assert len(command) > 80 and copied(result.output) == shlex.split(command)
    shown = result.output.split("To resume:\n")[1].splitlines()
    assert shown[0].endswith(" \\") and max(map(len, shown)) <= 80, shown
