"""Output that is not a colour terminal: piped text, NO_COLOR, and wide Chinese text in tables."""

from __future__ import annotations

import io
import os
import re
import subprocess

import pexpect
import pytest
import warm_orderbot
from forked_terminal import orderbot_in_a_terminal
from rich.cells import cell_len
from rich.console import Console

from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import Event, Phase
from orderbot.loop.transitions import Call, Called, Finished, Proposed, Request, Started, Transition
from orderbot.ui.render import format_transitions

pytestmark = pytest.mark.slow  # real processes, piped and in a terminal

ESC = "\x1b"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour, bold, dim: what NO_COLOR is about


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")}
    return {**env, **extra}


def orderbot_piped(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [warm_orderbot.command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=clean_env(**env),
        timeout=60,
    )


def orderbot_in_terminal(*args: str, **env: str) -> str:
    child = orderbot_in_a_terminal(list(args), env=clean_env(TERM="xterm-256color", **env), dimensions=(40, 120))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


@pytest.mark.parametrize("flags", [[], ["--trace"]])
def test_piped_ask_has_no_escape_codes_and_is_line_oriented(flags):
    result = orderbot_piped("ask", *flags, "查询 ORD-1001 和 ORD-9999")
    assert result.returncode == 0, result.stderr
    assert ESC not in result.stdout
    assert "订单 ORD-1001 的状态是：已发货。" in result.stdout
    assert all(len(line) <= 120 for line in result.stdout.splitlines())  # no terminal, fixed width


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(["ask", "查询 ORD-1001"], ""), (["ask", "--trace", "查询 ORD-1001"], ""), (["repl"], "查询 ORD-1001\n/exit\n")],
)
def test_piped_lines_are_not_padded_with_spaces(args, stdin):
    result = orderbot_piped(*args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "ORD-1001" in result.stdout
    padded = [line for line in result.stdout.splitlines() if line.endswith(" ")]
    assert padded == [], padded


def test_piped_repl_reads_lines_and_prints_plain_text():
    result = orderbot_piped("repl", stdin="查询 ORD-1001\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert ESC not in result.stdout
    assert 'step 1 · start → plan → act → observe → plan · get_order_status(order_id="ORD-1001") → executed' in (
        result.stdout
    )
    assert "订单 ORD-1001 的状态是：已发货。" in result.stdout


def test_no_color_in_a_terminal_means_no_colour_or_styles():
    coloured = orderbot_in_terminal("ask", "--trace", "查询 ORD-1001")
    assert SGR.search(coloured), "the control run should be coloured"
    plain = orderbot_in_terminal("ask", "--trace", "查询 ORD-1001", NO_COLOR="1")
    assert not SGR.search(plain)
    assert "订单 ORD-1001 的状态是：已发货。" in plain


def chinese_transitions() -> list[Transition]:
    question, call = "请查询订单 ORD-1001 的状态，谢谢", Call("call_1", "list_my_orders", "{}")
    answer = "订单 ORD-1001 的状态是：已发货。"
    limits = Limits()
    request = Request(1, len(question), ("list_my_orders",), 10.0, None, (call,), None)
    result = {"ok": True, "data": "已发货 顺丰速运"}
    return [
        Transition(0, Phase.START, Phase.PLAN, Event.STARTED, Started(question, limits), 0.0, 0, 0, limits),
        Transition(1, Phase.PLAN, Phase.ACT, Event.PROPOSED, Proposed(request), 0.01, 1, 0, limits),
        Transition(1, Phase.ACT, Phase.OBSERVE, Event.EXECUTED, Called(call, "executed", result), 0.02, 1, 1, limits),
        Transition(
            2, Phase.PLAN, Phase.FINISH, Event.FINISHED, Finished(StopReason.ANSWERED, answer), 0.03, 2, 1, limits
        ),
    ]


def render(table, width: int = 100) -> list[str]:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(table)
    return buffer.getvalue().splitlines()


def test_wide_chinese_text_keeps_table_columns_aligned():
    lines = render(format_transitions(chinese_transitions(), Limits(), plain=False))
    rows = [line for line in lines if line.startswith("│")]
    assert any("已发货" in row for row in rows)
    # every border sits at the same terminal column, counted in cells (a CJK character is two)
    positions = {tuple(cell_len(row[:i]) for i, ch in enumerate(row) if ch == "│") for row in rows}
    assert len(positions) == 1, positions


def test_wide_chinese_text_in_the_plain_table_pads_every_line_to_one_width():
    # Wide enough for the budget columns (orderbot.ui.render.table_widths).
    lines = render(format_transitions(chinese_transitions(), Limits(), plain=True, width=200), width=200)
    widths = {cell_len(line) for line in lines if line.strip()}
    assert len(widths) == 1, widths
    rows = [line for line in lines if "/3 " in line]
    assert sum(1 for row in rows if re.search(r"[\u4e00-\u9fff]", row)) == 3
    budget_column = {cell_len(row[: row.index("/3 ")]) for row in rows}
    assert len(budget_column) == 1, budget_column  # rows with Chinese put it at the same cell as the others
