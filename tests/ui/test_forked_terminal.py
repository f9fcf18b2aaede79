"""The forked `orderbot` of tests/forked_terminal.py shows in a terminal what the installed
command shows: the same final screen for the same command, colours and live table included."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import pexpect
import pyte
import pytest
from forked_terminal import _Spawned, orderbot_in_a_terminal

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
