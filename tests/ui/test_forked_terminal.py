"""The forked `orderbot`s of tests/forked_terminal.py show in a terminal what the installed
command shows: the same final screen for the same command, colours and live table included,
and for the REPL the same line editing."""

from __future__ import annotations

import io
import os
import re
import signal
import sys
from pathlib import Path

import pexpect
import pyte
import pytest
from forked_terminal import _Spawned, orderbot_in_a_terminal, orderbot_process_in_a_terminal

pytestmark = pytest.mark.slow  # terminal sessions

ORDERBOT = str(Path(sys.executable).with_name("orderbot"))
COLUMNS = 100
RUN_ID = re.compile(r"\d{6}-\d{6}-[0-9a-f]{4}")
SECONDS = re.compile(r"\d+\.\d+ ?s\b")
PADDING = re.compile(r"[ ─]+")


def comparable(line: str) -> str:
    """A screen line without what differs from run to run: the run id, the times, and in the
    transitions table everything right of the event (the width of the time columns decides
    how much of the detail fits, so the cut of the detail varies too)."""
    line = SECONDS.sub("N s", RUN_ID.sub("RUN", line))
    if line.count("│") >= 6:  # a row of the transitions table
        line = "│".join(line.split("│")[:4])
    return PADDING.sub(" ", line).strip()


def screen(child: pexpect.spawn) -> list[str]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before[-2000:]
    display = pyte.Screen(COLUMNS, 120)
    pyte.ByteStream(display).feed(child.before.encode())
    return [comparable(line) for line in display.display if line.strip()]


def test_a_forked_ask_shows_what_the_installed_command_shows(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env |= {"TERM": "xterm-256color", "LANG": "C.UTF-8", "ORDERBOT_STATE_DIR": str(tmp_path / "state")}
    for args in (["ask", "--user", "C001", "查询 ORD-1001 的详情"], ["runs", "show", "last"]):
        installed = pexpect.spawn(ORDERBOT, args, env=env, encoding="utf-8", dimensions=(40, COLUMNS), timeout=30)
        real = screen(installed)
        forked = screen(orderbot_in_a_terminal(args, env=env, dimensions=(40, COLUMNS)))
        assert forked == real
        assert any("ORD-1001" in line for line in real)  # the screen holds the run, not an error


def repl_screen(child: pexpect.spawn) -> list[str]:
    """A conversation: a question, then a line longer than the terminal is wide, edited
    (Ctrl-A, Ctrl-K and a line typed again: readline's own keys) before it is sent."""
    child.logfile_read = shown = io.StringIO()
    child.expect_exact("C001> ")
    child.sendline("查询 ORD-1001 的详情")
    child.expect_exact("C001> ")
    child.send("我想知道 " + "ORD-1003 " * 14)
    child.sendcontrol("a")
    child.sendcontrol("k")
    child.sendline("请查询 ORD-1002 的状态")
    child.expect_exact("C001> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, shown.getvalue()[-2000:]
    display = pyte.Screen(COLUMNS, 120)
    pyte.ByteStream(display).feed(shown.getvalue().encode())
    return [comparable(line) for line in display.display if line.strip()]


def test_the_warm_repl_edits_and_shows_lines_as_the_installed_one_does(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env |= {"TERM": "xterm-256color", "LANG": "C.UTF-8", "ORDERBOT_STATE_DIR": str(tmp_path / "state")}
    args = ["repl", "--user", "C001"]
    installed = repl_screen(pexpect.spawn(ORDERBOT, args, env=env, encoding="utf-8", dimensions=(40, COLUMNS)))
    warm = repl_screen(orderbot_process_in_a_terminal(args, env=env, dimensions=(40, COLUMNS)))
    assert warm == installed
    # The screen holds both answers, and the edited line as sent, not the long one.
    assert any("ORD-1001" in line for line in installed) and any("ORD-1002" in line for line in installed)
    assert not any("ORD-1003" in line for line in installed)


def test_a_terminal_child_takes_ctrl_c_though_the_suite_was_started_ignoring_it():
    """A script's background job ignores SIGINT and Python keeps it ignored: the suite run
    that way must still give the terminal's process Ctrl-C, as a person's shell does."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = _Spawned(sys.executable, ["-c", "import signal; print(signal.getsignal(signal.SIGINT))"],
                         encoding="utf-8", timeout=30)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    child.expect(pexpect.EOF)
    child.close()
    assert "default_int_handler" in child.before, child.before
