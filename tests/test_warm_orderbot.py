"""The warm orderbot (tests/warm_orderbot.py) stands in for the installed command in the tests
that need a process of their own: what it prints, its exit code, what it reads from standard
input and the modes of the files it makes are the installed command's; and a shim that is
killed (a test's timeout) takes its command with it, so a hung command cannot outlive its test."""

from __future__ import annotations

import os
import re
import select
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import warm_orderbot

from orderbot.shops.sample.model import SAMPLE_PATH as SAMPLE

pytestmark = pytest.mark.slow  # real processes

RUN_ID = re.compile(r"\d{6}-\d{6}-[0-9a-f]{4}")
INSTALLED = shutil.which("orderbot", path=os.path.dirname(sys.executable))


def run(program: str, base: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`program ARGS` in base/work, its state in base/state, under a umask of 077."""
    (base / "work").mkdir(parents=True)
    env = {**os.environ, "ORDERBOT_STATE_DIR": str(base / "state")}
    return subprocess.run(
        [program, *args],
        cwd=base / "work",
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=lambda: os.umask(0o077),
    )


def modes(base: Path) -> list[tuple[str, int]]:
    named = [(RUN_ID.sub("RUNID", str(p.relative_to(base))), stat.S_IMODE(p.stat().st_mode)) for p in base.rglob("*")]
    return sorted(named)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(("ask", "--max-steps", "1", "查询 ORD-1001"), ""), (("repl", "--user", "C001"), "查询 ORD-1002\n/exit\n"),
     (("runs", "show", "not-an-id"), ""), (("orders", "import", str(SAMPLE), "--to", "sqlite:///shop.db"), "")],
)  # fmt: skip
def test_the_warm_command_does_what_the_installed_one_does(tmp_path, args, stdin):
    warm = run(warm_orderbot.command(), tmp_path / "warm", *args, stdin=stdin)
    installed = run(INSTALLED, tmp_path / "installed", *args, stdin=stdin)
    assert warm.returncode == installed.returncode
    assert warm.stderr == installed.stderr
    digits = str.maketrans("", "", "0123456789")  # durations
    assert RUN_ID.sub("", warm.stdout).translate(digits) == RUN_ID.sub("", installed.stdout).translate(digits)
    assert modes(tmp_path / "warm") == modes(tmp_path / "installed")


def test_a_killed_shim_takes_its_command_with_it(tmp_path):
    shim = subprocess.Popen(
        [warm_orderbot.command(), "repl", "--user", "C001"],  # waits for a line that never comes
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ORDERBOT_STATE_DIR": str(tmp_path / "state")},
    )
    try:
        shim.kill()
        shim.wait()
        # The command holds the same pipe, and its input stays open: the end of its output comes
        # only if the command is gone too.
        ended = False
        while not ended:
            readable, _, _ = select.select([shim.stdout], [], [], 30)
            assert readable, "the command outlived its shim"
            ended = not os.read(shim.stdout.fileno(), 65536)
    finally:
        shim.stdin.close()
        shim.stdout.close()


def test_a_terminal_command_goes_when_its_test_lets_go_and_says_how_it_ended(tmp_path):
    """The test's end of a terminal and the connection the wait status comes on: dropping the
    connection (a test process that died) ends the command, as a killed shim does."""
    env = {**os.environ, "ORDERBOT_STATE_DIR": str(tmp_path / "state"), "TERM": "xterm"}
    _, terminal, connection = warm_orderbot.terminal(["repl", "--user", "C001"], env, None, (24, 80))
    try:
        assert os.ttyname(terminal)  # the test's side of a terminal
        connection.close()  # as when the test process dies: nobody would ever read the terminal
        ended = False
        while not ended:  # its end of the terminal closes only if the command is gone
            readable, _, _ = select.select([terminal], [], [], 30)
            assert readable, "the command outlived its test"
            try:
                ended = not os.read(terminal, 65536)
            except OSError:  # EIO: no process holds the other side any more
                ended = True
    finally:
        os.close(terminal)

    _, terminal, connection = warm_orderbot.terminal(["--version"], env, None, (24, 80))
    with connection:
        assert warm_orderbot.read_line(connection) == "0\n"  # the wait status of a clean exit
    os.close(terminal)
