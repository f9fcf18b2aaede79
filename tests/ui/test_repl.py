"""`orderbot repl` driven as a person would: in a pseudo-terminal, through pexpect.

Each test starts the program (`orderbot repl`, forked by the warm orderbot onto a terminal
of its own: tests/forked_terminal.py) with its own state directory and a private copy of
the orders. The slow model for Ctrl-C is the real openai
SDK talking to a loopback fake API that holds its reply until the test lets go.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import sys
import termios
import threading
from pathlib import Path

import pexpect
import pyte
import pytest
from clikit import cli
from fakeapi import FakeAPI, completion, hang, sse, stream_of, tool_call
from forked_terminal import orderbot_process_in_a_terminal
from runkit import only_run, record_doc, run_ids

pytestmark = pytest.mark.slow  # the REPL in a terminal

PROMPT = "orderbot C001> "
WAIT = 30  # seconds pexpect waits for text that should come at once; never slept


@pytest.fixture
def spawn(tmp_path: Path, orders_file: Path):
    children: list[pexpect.spawn] = []

    def start(*args: str, user: str | None = "C001", live: bool = False) -> pexpect.spawn:
        """The REPL; `live`: in a terminal that draws the waiting line and the streamed
        answer (TERM=dumb draws no live display), every byte it prints kept in `child.seen`."""
        env = {
            **os.environ,
            "ORDERBOT_STATE_DIR": str(tmp_path / "state"),
            "NO_COLOR": "1",
            "TERM": "xterm" if live else "dumb",
            "COLUMNS": "120",
            "LINES": "40",
            "HOME": str(tmp_path),
        }
        argv = ["repl", "--orders", str(orders_file), *(["--user", user] if user else []), *args]
        child = orderbot_process_in_a_terminal(argv, env=env, dimensions=(40, 120), timeout=WAIT)
        child.seen = child.logfile_read = io.StringIO()
        children.append(child)
        return child

    yield start
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def say(child: pexpect.spawn, line: str, prompt: str = PROMPT) -> str:
    """Type a line, wait for the next prompt, return everything printed in between."""
    child.sendline(line)
    child.expect_exact(prompt)
    return child.before


def leave(child: pexpect.spawn) -> int:
    """Ctrl-D; the exit code. Whatever the session did, the terminal is left as it was found."""
    child.sendeof()
    child.expect(pexpect.EOF)
    left = termios.tcgetattr(child.child_fd)
    child.close()
    assert left == fresh_terminal()
    return child.exitstatus


def final_screen(child: pexpect.spawn) -> list[str]:
    """The terminal as a person sees it now: everything the REPL printed, on a pyte screen."""
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(child.seen.getvalue())
    return [line.rstrip() for line in screen.display if line.strip()]


def order_status(orders_file: Path, order_id: str) -> str:
    return next(o["status"] for o in json.loads(orders_file.read_text("utf-8"))["orders"] if o["order_id"] == order_id)


def test_three_turns_with_carried_context_inline_approval_and_ctrl_d(spawn, orders_file, tmp_path):
    child = spawn()
    child.expect_exact(PROMPT)
    first = say(child, "查询 ORD-1001")
    assert 'step 1 · start → plan → act → observe → plan · get_order_status(order_id="ORD-1001") → executed' in first
    assert "step 2 · plan → finish · answered" in first and "订单 ORD-1001 的状态是：已发货。" in first
    second = say(child, "那 ORD-1002 呢？")
    assert "订单 ORD-1002 的状态是：处理中。" in second
    # "它" is the order of the turn before: only the carried history can say which one
    child.sendline("取消它")
    child.expect_exact("Cancel ORD-1002")
    child.expect_exact("[y/N]")
    assert order_status(orders_file, "ORD-1002") == "处理中"  # nothing done before the yes
    third = say(child, "y")
    assert 'cancel_order(order_id="ORD-1002"' in third and "approved, executed" in third
    assert "订单 ORD-1002 已取消。" in third
    assert order_status(orders_file, "ORD-1002") == "已取消"
    assert leave(child) == 0
    history = (tmp_path / "state" / "repl_history").read_text("utf-8").splitlines()
    assert history == ["查询 ORD-1001", "那 ORD-1002 呢？", "取消它"]  # the "y" was an answer, not a line


def test_reset_forgets_the_earlier_turns(spawn):
    child = spawn()
    child.expect_exact(PROMPT)
    say(child, "查询 ORD-1002")
    assert "forgotten" in say(child, "/reset")
    out = say(child, "取消它")
    assert "请提供要查询的订单号" in out and "cancel_order" not in out
    assert leave(child) == 0


def test_rejected_approval_leaves_the_order_alone(spawn, orders_file):
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("取消 ORD-1002")
    child.expect_exact("[y/N]")
    out = say(child, "n")
    assert "rejected" in out and "你没有确认" in out
    assert order_status(orders_file, "ORD-1002") == "处理中"
    assert leave(child) == 0


def test_limits_change_what_the_next_run_obeys_and_a_stopped_run_can_continue(spawn):
    child = spawn()
    child.expect_exact(PROMPT)
    assert "3 steps" in say(child, "/limits")
    assert "Invalid value for steps" in say(child, "/limits steps=0")  # refused, unchanged
    assert "1 step · 4 tool calls" in say(child, "/limits steps=1 calls=4")
    child.sendline("查询 ORD-1001")
    child.expect_exact("Press c to continue")
    out = child.before
    assert "stopped: step_limit" in out and "[1/1 steps" in out and "not executed" in out
    child.send("c")  # one key, no Enter
    child.expect_exact(PROMPT)
    assert 'get_order_status(order_id="ORD-1001") → executed' in child.before.split("step 2 · ")[1]
    assert "订单 ORD-1001 的状态是：已发货。" in child.before
    child.sendline("查询 ORD-1002")
    child.expect_exact("Press c to continue")
    child.send("x")  # any other key: back to the prompt, the run stays stopped
    child.expect_exact(PROMPT)
    assert "已发货" not in child.before and "处理中" not in child.before
    assert leave(child) == 0


def segment_limits(tmp_path: Path, run_id: str) -> list[dict]:
    record = record_doc(run_id, tmp_path / "state")
    return [segment["limits"] for segment in record["segments"]]


def test_c_in_the_repl_and_the_resume_hint_after_ask_continue_with_the_same_limits(spawn, tmp_path, orders_file):
    stops = [  # /limits in the REPL, the same as flags of ask, and a question that stops there
        ("steps=1", ["--max-steps", "1"], "查询 ORD-1001"),
        ("steps=3 per-step=1", ["--max-calls-per-step", "1"], "查询 ORD-1001 和 ORD-1002"),
    ]
    child = spawn("--timeout", "12")  # a limit the command line set, kept by both
    child.expect_exact(PROMPT)
    for limits, _, question in stops:
        say(child, f"/limits {limits}")
        child.sendline(question)
        child.expect_exact("Press c to continue")
        child.send("c")
        child.expect_exact(PROMPT)
    assert leave(child) == 0
    records = [record_doc(run_id, tmp_path / "state") for run_id in run_ids(tmp_path / "state")]
    in_repl = [record["run_id"] for record in sorted(records, key=lambda record: record["created_at"])]
    assert len(in_repl) == 2
    for run_id, (_, flags, question) in zip(in_repl, stops, strict=True):
        asked = cli("ask", "--json", "--orders", str(orders_file), "--user", "C001", "--timeout", "12", *flags,
                    question)  # fmt: skip
        doc = json.loads(asked.stdout)
        assert asked.exit_code == 3 and doc["stop_reason"] in ("step_limit", "tool_call_limit"), asked.output
        command = shlex.split(doc["resume_command"])
        assert command[:2] == ["orderbot", "resume"]
        assert cli(*command[1:], "--orders", str(orders_file)).exit_code == 0
        repl_first, repl_continued = segment_limits(tmp_path, run_id)
        ask_first, ask_continued = segment_limits(tmp_path, doc["run_id"])
        assert repl_first == ask_first and repl_continued == ask_continued, (doc["resume_command"], repl_continued)
        assert repl_continued != repl_first and repl_continued["timeout"] == 12


def test_ctrl_c_cancels_the_running_request_and_the_next_prompt_works(spawn):
    arrived = threading.Event()

    def hold(request):
        arrived.set()
        return hang()  # answers only when the server closes

    with FakeAPI() as api:
        api.enqueue("chat", hold, completion("你好，我在。"))
        child = spawn("--provider", "chat", "--base-url", api.url, "--model", "fake-model", "--timeout", "60")
        child.expect_exact(PROMPT)
        child.sendline("第一个问题")
        assert arrived.wait(WAIT), "the request never reached the fake API"
        child.sendintr()
        child.expect_exact(PROMPT)
        assert "run · start → plan → finish · stopped: cancelled" in child.before and "Cancelled." in child.before
        assert "stop reason: cancelled" in child.before
        out = say(child, "第二个问题")
        assert "你好，我在。" in out
        # the second request carried the first question, and nothing from the cancelled run
        messages = api.requests_for("chat")[1].body["messages"]
        assert [m["content"] for m in messages if m["role"] == "user"] == ["第一个问题", "第二个问题"]
        assert leave(child) == 0


def test_ctrl_c_mid_stream_keeps_the_partial_answer_on_screen_marked_as_cut(spawn, tmp_path):
    said = "Order ORD-1001 has shipped and should arrive on Friday"
    events = sse("chat", completion(said + ", unless the courier is late again."), piece=8)
    pieces = 1 + -(-len(said) // 8)  # the role's event, then the deltas that hold `said`
    with FakeAPI() as api:
        api.enqueue("chat", stream_of(events[:pieces], hang_after=True))  # then silence
        child = spawn("--provider", "chat", "--base-url", api.url, "--model", "fake-model", "--timeout", "60",
                      live=True)  # fmt: skip
        child.expect_exact(PROMPT)
        child.sendline("when does ORD-1001 come?")
        child.expect_exact("Friday")  # streamed in, on screen
        child.sendintr()
        child.expect_exact(PROMPT)
        screen = final_screen(child)
        assert leave(child) == 0
    text = "\n".join(screen)
    assert "Partial answer (cut off)" in text, text
    assert said in " ".join(line.strip("│ ") for line in screen), text
    assert "Cut off here: the run was cancelled while the answer was coming in." in text
    assert "Cancelled." in text and "stop reason: cancelled" in text
    state = record_doc(only_run(tmp_path / "state"), tmp_path / "state")["state"]
    assert state["stop_reason"] == "cancelled" and state["answer"] is None


def held_until(release: threading.Event, arrived: threading.Event, answer: dict):
    """A fake API reply that arrives only once the test lets go of it."""

    def reply(request):
        arrived.set()
        release.wait(WAIT)
        return answer

    return reply


def test_keys_typed_during_a_run_are_neither_echoed_nor_sent_as_the_next_question(spawn):
    arrived, release = threading.Event(), threading.Event()
    with FakeAPI() as api:
        api.enqueue("chat", held_until(release, arrived, completion("第一个回答。")), completion("第二个回答。"))
        child = spawn("--provider", "chat", "--base-url", api.url, "--model", "fake-model", live=True)
        child.expect_exact(PROMPT)
        child.sendline("第一个问题")
        assert arrived.wait(WAIT), "the request never reached the fake API"
        child.expect_exact("waiting for the model")  # the spinner line is on screen
        assert not child.getecho()  # the terminal echoes nothing while the run is going
        child.send("typed ahead\r")  # typed while the model works, Enter included
        child.send("more keys")
        release.set()
        child.expect_exact(PROMPT)
        assert "第一个回答。" in child.before, child.seen.getvalue()[-3000:]
        out = say(child, "第二个问题")
        assert "第二个回答。" in out
        screen = "\n".join(final_screen(child))
        assert f"{PROMPT}第二个问题" in screen  # a line typed at the prompt is echoed as ever
        assert leave(child) == 0
        asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"] for r in api.requests_for("chat")]
    assert "typed ahead" not in screen and "more keys" not in screen, screen
    assert asked == [["第一个问题"], ["第一个问题", "第二个问题"]]  # what was typed ahead reached no model


def test_a_key_typed_during_a_run_does_not_answer_the_offer_to_continue(spawn):
    arrived, release = threading.Event(), threading.Event()
    call = completion(tool_calls=[tool_call("get_order_status", {"order_id": "ORD-1001"})])
    with FakeAPI() as api:
        api.enqueue("chat", held_until(release, arrived, call))
        child = spawn("--provider", "chat", "--base-url", api.url, "--model", "fake-model", "--max-steps", "1",
                      live=True)  # fmt: skip
        child.expect_exact(PROMPT)
        child.sendline("查询 ORD-1001")
        assert arrived.wait(WAIT), "the request never reached the fake API"
        child.expect_exact("waiting for the model")
        assert not child.getecho()  # a key typed now does not show on the waiting line
        child.send("c")  # before the run stopped and the offer was made: not its answer
        release.set()
        child.expect_exact("Press c to continue")
        child.send("x")  # a key pressed after the offer is shown is its answer
        child.expect_exact(PROMPT)
        assert "step 2" not in child.before
        assert leave(child) == 0
        assert len(api.requests_for("chat")) == 1  # the run was not continued


def test_sigterm_during_a_run_ends_the_repl_with_the_terminal_as_it_was(spawn):
    arrived = threading.Event()

    def hold(request):
        arrived.set()
        return hang()

    with FakeAPI() as api:
        api.enqueue("chat", hold)
        child = spawn("--provider", "chat", "--base-url", api.url, "--model", "fake-model", live=True)
        child.expect_exact(PROMPT)
        child.sendline("第一个问题")
        assert arrived.wait(WAIT), "the request never reached the fake API"
        child.expect_exact("waiting for the model")
        assert not child.getecho()
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
        after = termios.tcgetattr(child.child_fd)  # what the shell gets back
        child.close()
    assert child.exitstatus == 143
    assert "Terminated by a signal (SIGTERM)." in child.seen.getvalue()
    assert after == fresh_terminal()  # echo and line editing back on, as the REPL found them


def fresh_terminal() -> list:
    """The settings of a pseudo-terminal nobody has changed: what the REPL was started in."""
    master, slave = os.openpty()
    try:
        return termios.tcgetattr(slave)
    finally:
        os.close(master)
        os.close(slave)


def test_ctrl_c_at_an_empty_prompt_exits_cleanly(spawn):
    child = spawn(user=None)
    child.expect_exact("orderbot> ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_repl_started_with_ctrl_c_ignored_takes_it_back(tmp_path, orders_file):
    """A script's background job starts with SIGINT ignored, and Python keeps it so; the
    conversation needs Ctrl-C (it cancels a run, it leaves at an empty prompt). A process
    started afresh that way, since that start is what is tested."""
    env = {**os.environ, "ORDERBOT_STATE_DIR": str(tmp_path / "state"), "TERM": "dumb", "HOME": str(tmp_path)}
    child = pexpect.spawn(
        sys.executable, ["-m", "orderbot", "repl", "--user", "C001", "--orders", str(orders_file)],
        env=env, encoding="utf-8", dimensions=(40, 120), timeout=WAIT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    child.expect_exact(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_slash_commands_help_user_trace_and_exit(spawn):
    child = spawn()
    child.expect_exact(PROMPT)
    out = say(child, "/help")
    for command in ("/trace on|off", "/limits", "/user [ID]", "/reset", "/runs", "/exit"):
        assert command in out
    assert "Unknown command /nope" in say(child, "/nope")
    assert "User: C001." in say(child, "/user")
    assert "Trace is on." in say(child, "/trace on")
    out = say(child, "查询 ORD-1001")
    assert "budget left" in out and "allowed, executed" in out  # the per-step panels
    assert "starts afresh" in say(child, "/user C002", prompt="orderbot C002> ")
    out = say(child, "/runs", prompt="orderbot C002> ")
    assert "查询 ORD-1001" in out and "answered" in out
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_help_and_clear_typed_as_in_a_shell_list_the_commands_and_clear_the_screen(spawn, tmp_path):
    child = spawn(live=True)
    child.expect_exact(PROMPT)
    assert "/trace on|off" in say(child, "help") and "/clear" in say(child, "/help")
    assert "已发货" in say(child, "查询 ORD-1001")
    say(child, "clear")
    assert final_screen(child) == [PROMPT.rstrip()]  # the answer is gone; a fresh prompt at the top
    assert leave(child) == 0
    assert len(run_ids(tmp_path / "state")) == 1  # neither word was sent as a question


def test_small_talk_and_follow_ups_about_the_order_last_talked_about(spawn):
    child = spawn()
    child.expect_exact(PROMPT)
    hello = say(child, "你好")
    assert "你好！" in hello and "请提供要查询的订单号" not in hello
    assert "订单 ORD-1001 的状态是：已发货。" in say(child, "ORD1001 的状态")
    details = say(child, "and its details?")
    assert 'get_order_details(order_id="ORD-1001")' in details and "¥227.00" in details
    where = say(child, "它到哪了")
    assert 'get_order_details(order_id="ORD-1001")' in where
    assert "顺丰速运" in where and "收货城市：杭州" in where
    assert "订单 ORD-1002 的状态是：处理中。" in say(child, "1002 的状态")
    assert 'get_order_details(order_id="ORD-1002")' in say(child, "详细信息呢？")
    assert "不客气！" in say(child, "谢谢")
    assert leave(child) == 0
