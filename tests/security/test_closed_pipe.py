"""`orderbot runs | head -1` over 2,000 records ends quietly with 141, as `ask` does: a
reader that leaves while orderbot writes is noticed however large the write
(orderbot.ui.terminal.WholeWrites), never a silent exit 0 with the output cut short."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from runkit import plant_runs

pytestmark = pytest.mark.slow  # real processes writing into closed pipes

RECORDS = 2_000  # a table of 1,000 rows, and the JSON of 2,000 runs: each several pipes' worth


def many_records() -> None:
    plant_runs(
        [f"2611{n // 3600 % 28 + 1:02d}-{n // 60 % 60:02d}{n % 60:02d}00-{n % 65536:04x}" for n in range(RECORDS)]
    )


def first_line_then_close(*args: str) -> tuple[str, int, str]:
    """What `orderbot ARGS | head -1` sees: the first line, then the reader is gone."""
    child = subprocess.Popen(
        [sys.executable, "-m", "orderbot", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ
    )
    first = child.stdout.readline().decode()
    child.stdout.close()
    err = child.stderr.read().decode()
    return first, child.wait(timeout=120), err


# More than a pipe holds (64 KiB) either way; the table fewer rows, as Rich lays out thousands slowly.
@pytest.mark.parametrize("args", [["--limit", "1000"], ["--limit", str(RECORDS), "--json"]], ids=["table", "json"])
def test_runs_into_a_closed_pipe_exits_141_quietly(args):
    many_records()
    first, code, err = first_line_then_close("runs", *args)
    assert first.strip(), "nothing was listed"
    assert code == 141, (code, err[-500:])
    assert err == "", err  # quietly: no traceback, no BrokenPipeError message
