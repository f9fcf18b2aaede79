"""80 columns: the table of `ask` fits with each call on at most two lines, and `runs`
never cuts a run id or its start time, in English or Chinese (a pseudo-terminal of 80x24)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pyte
import pytest
from forked_terminal import orderbot_in_a_terminal

ORDERBOT = str(Path(sys.executable).with_name("orderbot"))


def terminal(*args: str, state: Path, lang: str = "C.UTF-8") -> list[str]:
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm", "ORDERBOT_STATE_DIR": str(state), "LANG": lang}
    child = orderbot_in_a_terminal(list(args), env=env, dimensions=(24, 80))
    child.expect(pexpect.EOF)
    child.close()
    # What the person sees: the output replayed on an 80-column screen (taller than 24 rows
    # only so that nothing scrolls away before it is read).
    screen = pyte.Screen(80, 200)
    stream = pyte.Stream(screen)
    stream.feed(child.before.replace("\n", "\r\n") if "\r\n" not in child.before else child.before)
    return [line.rstrip() for line in screen.display if line.strip()]


def test_ask_fits_80_columns_with_each_call_on_at_most_two_lines(tmp_path):
    from rich.cells import cell_len

    lines = terminal("ask", "--quiet", "查询 ORD-1001 和 ORD-1002", state=tmp_path)
    assert all(cell_len(line) <= 80 for line in lines), [line for line in lines if cell_len(line) > 80]
    rows = [i for i, line in enumerate(lines) if re.match(r"[│ ]*\d+\s+│?\s*executed", line)]
    assert len(rows) == 2, lines
    for start in rows:
        assert "get_order_status" in lines[start]
        rest = lines[start + 1 :]
        ends = next(i for i, line in enumerate(rest) if re.match(r"[│ ]*\d+\s", line) or "─" in line)
        assert ends <= 1, lines[start : start + 1 + ends]  # the row and at most one more line


@pytest.mark.parametrize("lang", ["C.UTF-8", "zh_CN.UTF-8"])
def test_runs_shows_whole_run_ids_and_start_times_at_80_columns(tmp_path, lang):
    terminal("ask", "--quiet", "查询 ORD-1001", state=tmp_path)
    run_id = next(p.stem for p in (tmp_path / "runs").glob("*.json"))
    lines = terminal("runs", state=tmp_path, lang=lang)
    from rich.cells import cell_len

    assert all(cell_len(line) <= 80 for line in lines), lines
    [row] = [line for line in lines if run_id in line]
    assert re.search(rf"{run_id}[\s│]+\d{{4}}-\d\d-\d\d \d\d:\d\d[\s│]", row), lines
    assert "查询 ORD-1001" in row  # the question fits too (the step and call counts give way)
