"""The state machine at every width: the transition table of a lookup, a refused call, a
step-limit stop and an approval pause, at 60 to 200 columns, in English and in Chinese,
piped and in a terminal, shows each row's from → to, has no line wider than the screen,
and breaks no word, id, number, tool name or argument value across lines; the detail has
at least half the line. The REPL's step lines and the --trace panels likewise. Rendered
in-process onto a pyte screen wider than the width asked for, so that a line too long shows
as one rather than being wrapped by the screen."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pyte
import pytest
from clikit import cli
from rich.cells import cell_len
from rich.console import Console

from orderbot import models
from orderbot.i18n import set_language, t
from orderbot.loop.engine import Limits
from orderbot.loop.transitions import Called, Transition
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.ui.console import SafeConsole
from orderbot.ui.describe import describe
from orderbot.ui.escape import visible
from orderbot.ui.layout import QUOTED, SHORT_VALUE, wrap_cell
from orderbot.ui.render import (
    SUMMARY_LINES,
    call_detail,
    column_needs,
    format_transitions,
    padded,
    table_widths,
)
from orderbot.ui.trace import StepLines, TraceView

RETAIL = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
OLIVIA = "olivia_ito_3591"
WIDTHS = (60, 80, 100, 120, 160, 200)
SCREEN = 260  # the pyte screen's width: wider than any table asked for
# A word, an id, a number, a tool name, a JSON key: what must stay on one line.
TOKEN = re.compile(r"[A-Za-z0-9_#\-@.]*[A-Za-z0-9_#@]")


@pytest.fixture(params=["en", "zh"])
def lang(request):
    set_language(request.param)
    yield request.param
    set_language(None)


_RUNS: dict[str, tuple[list[Transition], Limits]] = {}


@pytest.fixture
def runs(monkeypatch) -> dict[str, tuple[list[Transition], Limits]]:
    """The four runs, made once for the module through the real command line."""
    if not _RUNS:
        refused = ScriptedModel(
            [
                calls(call("return_delivered_order_items", {"order_id": "#W5866402", "item_ids": ["9727387530"],
                                                             "payment_method_id": "credit_card_9753331"})),
                text("A refund goes back to PayPal or a gift card; nothing was returned."),
            ]
        )  # fmt: skip
        monkeypatch.setitem(models.FACTORIES, "scripted", lambda settings, shop: refused)
        retail = ("--orders", str(RETAIL), "--user", OLIVIA)
        asked = {
            "lookup": ("--user", "C001", "查询 ORD-1001 和 ORD-1002 的详情"),
            "refused": ("--provider", "scripted", *retail, "Return the sneakers of #W5866402 to my credit card"),
            "step_limit": ("--max-steps", "2", *retail, "my orders"),
            "approval": (*retail, "I want to return the sneakers from order #W5866402"),
        }
        for name, args in asked.items():
            doc = json.loads(cli("ask", "--json", *args).stdout)
            limits = Limits(**doc["limits"])
            _RUNS[name] = [Transition.from_json(t, limits) for t in doc["transitions"]], limits
        kinds = {name: {str(t.kind) for t in transitions} for name, (transitions, _) in _RUNS.items()}
        assert "refused" in kinds["refused"] and "awaiting_approval" in kinds["approval"], kinds  # the controls
        assert _RUNS["step_limit"][0][-1].stop_reason == "step_limit"
    return _RUNS


def drawn(renderable, width: int, *, plain: bool) -> list[str]:
    """What a screen shows of `renderable` printed for `width` columns."""
    out = io.StringIO()
    console = SafeConsole(file=out, width=width, color_system=None, force_terminal=not plain, legacy_windows=False)
    console.print(renderable)
    return on_screen(out.getvalue())


def on_screen(output: str) -> list[str]:
    shown = pyte.Screen(SCREEN, output.count("\n") + 2)
    pyte.Stream(shown).feed(output.replace("\n", "\r\n"))
    return [line.rstrip() for line in shown.display if line.strip()]


def cells_from(line: str, start: int, end: int) -> str:
    """`line` between screen columns `start` and `end` (a CJK character takes two)."""
    out, cells = [], 0
    for char in line:
        if start <= cells < end:
            out.append(char)
        cells += cell_len(char)
    return "".join(out).strip(" │")


def columns(widths: dict[str, int], *, plain: bool) -> dict[str, tuple[int, int]]:
    """Where each column's text sits on a line: a space of padding either side of a cell, a
    rule between cells; a drawn table has its edges and pads them."""
    spans, start = {}, 0 if plain else 2 if padded(len(widths), plain=plain) else 1
    for name, cells in widths.items():
        spans[name] = (start, start + cells)
        start += cells + 3
    return spans


def rows_of(lines: list[str], spans: dict[str, tuple[int, int]]) -> list[dict[str, list[str]]]:
    """Each row's cells, line by line: a row starts where its step number is."""
    body = [line for line in lines if line[:1] not in "╭├╰" and not set(line) <= set("─ ")]
    heading = next(i for i, line in enumerate(body) if t("table.detail") in line)
    rows: list[dict[str, list[str]]] = []
    for line in body[heading + 1 :]:
        cells = {name: cells_from(line, *span) for name, span in spans.items()}
        if cells["table.step"].isdigit():
            rows.append({name: [] for name in spans})
        for name, cell in cells.items():
            if cell:
                rows[-1][name].append(cell)
    return rows


def drawn_cell(text: str, width: int) -> list[str]:
    return wrap_cell(Console(width=width), text, width).plain.splitlines()


def whole(expected: str) -> list[str]:
    """What must be on one line: each token, and each short quoted value (`"已发货"`)."""
    shown = visible(expected, one_line=True)
    quoted = [m.group() for m in QUOTED.finditer(shown) if len(m.group()) <= SHORT_VALUE + 2 and " " not in m.group()]
    return TOKEN.findall(shown) + quoted


def assert_whole(expected: str, lines: list[str], width: int, screen: list[str]) -> None:
    for token in whole(expected):
        if cell_len(token) <= width:
            assert any(token in line for line in lines), f"{token!r} broken:\n" + "\n".join(screen)


@pytest.mark.parametrize("plain", [False, True], ids=["terminal", "piped"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["lookup", "refused", "step_limit", "approval"])
def test_the_table_at_each_width_shows_every_from_to_and_breaks_no_value(runs, name, lang, width, plain):
    transitions, limits = runs[name]
    lines = drawn(format_transitions(transitions, limits, plain=plain, width=width), width, plain=plain)
    assert max(map(cell_len, lines)) <= width, "\n".join(lines)
    widths = table_widths(column_needs(transitions, limits), width, plain=plain)
    assert widths["table.detail"] >= width / 2
    stacked = "table.event" not in widths  # the event under its from → to
    rows = rows_of(lines, columns(widths, plain=plain))
    assert len(rows) == len(transitions), "\n".join(lines)
    for transition, row in zip(transitions, rows, strict=True):
        assert row["table.step"] == [str(transition.step)]
        phases = " ".join(row["table.transition"])
        pair = f"{t(f'phase.{transition.from_}')} → {t(f'phase.{transition.to}')}"
        assert phases.startswith(pair), f"{pair!r} not in its row:\n" + "\n".join(lines)
        said = describe(transition)
        event = row["table.transition"] if stacked else row["table.event"]
        assert_whole(said.event, event, widths["table.transition" if stacked else "table.event"], lines)
        detail = said.detail
        if isinstance(transition.payload, Called):  # a result is summarised, in a line or two more than the call
            detail = call_detail(transition, lang, widths["table.detail"])
        if isinstance(transition.payload, Called) and transition.payload.result.get("ok"):
            alone = f"{transition.payload.call.line()} → {t('detail.call_ok', data='…')}"  # no value of the result
            call_alone = len(drawn_cell(alone, widths["table.detail"]))
            assert len(row["table.detail"]) <= max(SUMMARY_LINES, call_alone + 1), "\n".join(lines)
        assert_whole(detail, row["table.detail"], widths["table.detail"], lines)


def test_wider_columns_come_in_order_and_the_phases_never_go(runs, lang):
    """The ms column goes first as the line gets shorter, then the budget, then the event's
    own column (it goes under its from → to); from → to stays at every width."""
    transitions, limits = runs["approval"]
    layouts = [list(table_widths(column_needs(transitions, limits), w, plain=True)) for w in range(60, 201)]
    assert all("table.transition" in layout for layout in layouts)
    counts = [len(layout) for layout in layouts]
    assert counts == sorted(counts) and counts[0] in (3, 4) and counts[-1] == 6, counts  # 4: short event words
    at_100 = table_widths(column_needs(transitions, limits), 100, plain=True)
    assert "table.event" in at_100  # the docs' width: from → to and the event, each in its column


@pytest.mark.parametrize("plain", [False, True], ids=["terminal", "piped"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("view", [StepLines, TraceView], ids=["repl", "trace"])
def test_the_repl_lines_and_the_trace_show_every_from_to_and_break_no_value(runs, lang, width, plain, view):
    for transitions, limits in runs.values():
        out = io.StringIO()
        console = Console(file=out, width=width, color_system=None, force_terminal=not plain, legacy_windows=False)
        printer = view(console, limits)
        for transition in transitions:
            printer(transition, None)
        assert "\x1b" not in out.getvalue()  # no colour, no cursor: the lines are what a screen shows
        lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
        assert max(map(cell_len, lines)) <= width, "\n".join(lines)
        flat = " ".join(" ".join(line.strip(" |│") for line in lines).split())
        for transition in transitions:
            pair = f"{t(f'phase.{transition.from_}')} → {t(f'phase.{transition.to}')}"
            assert pair in flat, f"{pair!r} not shown:\n" + "\n".join(lines)
            if isinstance(transition.payload, Called):
                call_line = transition.payload.call.line()
                assert_whole(call_line if view is StepLines else transition.payload.call.name, lines, width - 24, lines)
