"""80 columns: the table of `ask` fits with each call on at most two lines, and `runs`
never cuts a run id (a real pseudo-terminal of 80x24)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pyte
from forked_terminal import orderbot_in_a_terminal

ORDERBOT = str(Path(sys.executable).with_name("orderbot"))


def terminal(*args: str, state: Path) -> list[str]:
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm", "ORDERBOT_STATE_DIR": str(state), "LANG": "C.UTF-8"}
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


def test_runs_shows_whole_run_ids_at_80_columns(tmp_path):
    terminal("ask", "--quiet", "查询 ORD-1001", state=tmp_path)
    run_id = next(p.stem for p in (tmp_path / "runs").glob("*.json"))
    lines = terminal("runs", state=tmp_path)
    assert any(run_id in line for line in lines), lines
