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
from orderbot.loop.transitions import Transition, describe
from orderbot.ui.escape import visible
from orderbot.ui.render import SafeConsole, format_transitions, table_widths

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


def detail_cells(lines: list[str], heading: str) -> list[str]:
    """The detail cell's text on every line of the table, found by its heading's column."""
    head = next(line for line in lines if heading in line)
    start = cell_len(head[: head.index(heading)])
    cells = []
    for line in lines:
        if line[:1] in "╭├╰" or line is head or set(line) <= set("─ "):
            continue
        cell = from_cell(line, start)
        cells.append(cell.split("│")[0])
    return cells


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
    cells = detail_cells(lines, t("table.detail"))
    # Every word, id, number and JSON key of a detail that fits a line is on one line of the table.
    for said in (describe(tr).detail for tr in transitions):
        for token in TOKEN.findall(visible(said, one_line=True)):
            if cell_len(token) <= widths["table.detail"]:
                assert any(token in text for text in cells), f"{token!r} broken:\n" + "\n".join(lines)
