"""The forked `orderbot` of tests/forked_terminal.py shows in a terminal what the installed
command shows: the same final screen for the same command, colours and live table included."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pyte
from forked_terminal import orderbot_in_a_terminal

ORDERBOT = str(Path(sys.executable).with_name("orderbot"))
RUN_ID = re.compile(r"\d{6}-\d{6}-[0-9a-f]{4}")
SECONDS = re.compile(r"\d+\.\d+ ?s\b")
MILLISECONDS = re.compile(r"│ *\d+ *│")  # the table's duration column
PADDING = re.compile(r"[ ─]+")  # column widths follow the times shown, which differ run to run
WIDTH = 200  # wide enough that no cell is cut, whatever the widths of the times


def screen(child: pexpect.spawn) -> list[str]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before[-2000:]
    display = pyte.Screen(WIDTH, 120)
    pyte.ByteStream(display).feed(child.before.encode())
    lines = (RUN_ID.sub("RUN", line) for line in display.display if line.strip())
    return [PADDING.sub(" ", MILLISECONDS.sub("│ N │", SECONDS.sub("N s", line))).strip() for line in lines]


def test_a_forked_ask_shows_what_the_installed_command_shows(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env |= {"TERM": "xterm-256color", "LANG": "C.UTF-8", "ORDERBOT_STATE_DIR": str(tmp_path / "state")}
    for args in (["ask", "--user", "C001", "查询 ORD-1001 的详情"], ["runs", "show", "last"]):
        installed = pexpect.spawn(ORDERBOT, args, env=env, encoding="utf-8", dimensions=(40, WIDTH), timeout=30)
        real = screen(installed)
        forked = screen(orderbot_in_a_terminal(args, env=env, dimensions=(40, WIDTH)))
        assert forked == real
        assert any("ORD-1001" in line for line in real)  # the screen holds the run, not an error
