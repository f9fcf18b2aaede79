"""The transition table at every width: the detail has at least half the line, a wider
terminal never gives it less, and no word, id, number or call is broken across lines, for
both shops, in English and in Chinese. Rendered in-process on a pyte screen of each width."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pyte
import pytest
from clikit import cli
from rich.cells import cell_len

from orderbot.i18n import set_language, t
from orderbot.loop.engine import Limits
from orderbot.loop.transitions import Called, Transition
from orderbot.ui.describe import describe
from orderbot.ui.escape import visible
from orderbot.ui.render import SUMMARY_LINES, SafeConsole, call_detail, format_transitions, table_widths

RETAIL = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
WIDTHS = (80, 100, 120, 160)
# A word, an id, a number, a JSON key: what must stay on one line.
TOKEN = re.compile(r"[A-Za-z0-9_#\-]+")


@pytest.fixture(params=["en", "zh"])
def lang(request):
    set_language(request.param)
    yield request.param
    set_language(None)


def transitions_of(*args: str, tmp_path: Path) -> tuple[list[Transition], Limits]:
    doc = json.loads(cli("ask", "--json", *args, env={"ORDERBOT_STATE_DIR": str(tmp_path / "state")}).stdout)
    limits = Limits(**doc["limits"])
    return [Transition.from_json(t, limits) for t in doc["transitions"]], limits


@pytest.fixture(params=["sample", "retail"])
def run(request, orders_file: Path, tmp_path: Path) -> tuple[list[Transition], Limits]:
    if request.param == "sample":
        return transitions_of("--user", "C001", "--orders", str(orders_file), "查询 ORD-1001 和 ORD-1002 的详情",
                              tmp_path=tmp_path)  # fmt: skip
    return transitions_of("--user", "noah_brown_6181", "--orders", str(RETAIL), "details of order #W7678072",
                          tmp_path=tmp_path)  # fmt: skip


def screen(transitions: list[Transition], limits: Limits, width: int, *, plain: bool) -> list[str]:
    out = io.StringIO()
    console = SafeConsole(file=out, width=width, color_system=None, force_terminal=not plain, legacy_windows=False)
    console.print(format_transitions(transitions, limits, plain=plain, width=width))
    shown = pyte.Screen(width, 400)
    pyte.Stream(shown).feed(out.getvalue().replace("\n", "\r\n"))
    return [line.rstrip() for line in shown.display if line.strip()]


def from_cell(line: str, column: int) -> str:
    """`line` from screen column `column` on (a CJK character takes two)."""
    cells = 0
    for index, char in enumerate(line):
        if cells >= column:
            return line[index:]
        cells += cell_len(char)
    return ""


def detail_rows(lines: list[str], heading: str) -> list[list[str]]:
    """The detail cell's lines, row by row (a row starts where its step number is), found
    by the heading's column."""
    head = next(line for line in lines if heading in line)
    start = cell_len(head[: head.index(heading)])
    rows: list[list[str]] = []
    for line in lines[lines.index(head) + 1 :]:
        if line[:1] in "╭├╰" or set(line) <= set("─ "):
            continue
        cell = from_cell(line, start).split("│")[0].rstrip()
        if re.search(r"\d", line[: head.index(t("table.event"))]) or not rows:  # its step number
            rows.append([cell])
        else:
            rows[-1].append(cell)
    return rows


def test_the_detail_has_half_the_line_and_more_on_a_wider_terminal(lang):
    limits = Limits()
    for plain in (False, True):
        details = [table_widths(limits, width, plain=plain)["table.detail"] for width in range(60, 201)]
        assert all(d >= -(-w // 2) for w, d in zip(range(60, 201), details, strict=True)), details
        assert details == sorted(details), details


@pytest.mark.parametrize("plain", [False, True], ids=["terminal", "piped"])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_table_at_each_width(run, lang, width, plain):
    transitions, limits = run
    lines = screen(transitions, limits, width, plain=plain)
    assert all(cell_len(line) <= width for line in lines), "\n".join(lines)
    widths = table_widths(limits, width, plain=plain)
    assert widths["table.detail"] >= width / 2
    if not plain:  # the detail column as drawn: its segment of the top border, less its padding
        segments = lines[0].strip("╭╮").split("┬")
        narrow = len(segments) == 3  # without pad_edge: one space of padding at the table's edge
        assert len(segments[2 if narrow else 3]) - (1 if narrow else 2) == widths["table.detail"], lines[0]
    rows = detail_rows(lines, t("table.detail"))
    assert len(rows) == len(transitions), "\n".join(lines)
    for transition, row in zip(transitions, rows, strict=True):
        shown = describe(transition).detail
        if isinstance(transition.payload, Called):  # a call's result is summarised, in a line or two
            shown = call_detail(transition, lang, widths["table.detail"])
            assert len(row) <= SUMMARY_LINES, "\n".join(lines)
            assert f"{transition.payload.call.line()} → " in "".join(row) or len(row) > 1, row
        # Every word, id, number and JSON key that fits a line is on one line of the table.
        for token in TOKEN.findall(visible(shown, one_line=True)):
            if cell_len(token) <= widths["table.detail"]:
                assert any(token in text for text in row), f"{token!r} broken:\n" + "\n".join(lines)
