"""The table of recorded runs (`orderbot runs`, the REPL's /runs): one row per run, newest
first, every value whole at any width."""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from orderbot.i18n import t
from orderbot.i18n.catalogue import MESSAGES
from orderbot.text import one_line
from orderbot.ui.escape import visible
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK, STYLE_WARN

RUN_ID_CELLS = len("261130-114943-3f2a")
STARTED_CELLS = len("2026-11-30 18:26")
QUESTION_CHARS = 28  # of the question, in the table of runs (twice that when it wraps)
QUESTION_MIN_CELLS = 16  # of the question, before a run takes two lines


def unreadable_words(error: str) -> str:
    """Why a record could not be read: its code in words, or the system's own words as they are."""
    known = f"runs.unreadable_{error}"
    return t(known) if known in MESSAGES else visible(error, one_line=True)


def _stop_text(row) -> str:
    """How the run ended, through each resumption, and what a person decided on the way."""
    text = " → ".join(row.history) if len(row.history) > 1 else row.status
    decided = "/".join(t(f"runs.{word}") for word in row.decisions)
    return f"{text} ({decided})" if decided else text


def format_runs(rows, *, plain: bool, width: int | None = None, operators: bool = False) -> Table:
    """Recorded runs (orderbot.runs.RunSummary), one row each, newest first: one line per
    run where that fits in `width` (and always when `plain`: piped output is read by grep),
    else a few (the start time and the customer under the run id, the step and call counts
    under the stop reason, the question wrapped beside them between its words), so that an
    80-column terminal shows every value whole in a closed table. `operators` (a store a
    team shares) adds who ran each run under its customer."""
    if plain:  # piped, a run stays one line to grep, its question whole (ui.layout.print_whole)
        return _runs_table(rows, plain=plain, stacked=False, question_cells=None, operators=operators)
    cells = _one_line_cells(rows, plain=plain, operators=operators)
    if width is not None and cells > width:
        return _runs_table(rows, plain=plain, stacked=True, operators=operators)
    # Rich cuts a table of unwrappable columns at the edge: the question is given what is left.
    room = QUESTION_CHARS if width is None else max(4, min(QUESTION_CHARS, QUESTION_MIN_CELLS + width - cells))
    return _runs_table(rows, plain=plain, stacked=False, question_cells=room, operators=operators)


def _one_line_cells(rows, *, plain: bool, operators: bool = False) -> int:
    """How wide the one-line table of `rows` is at least: every column but the question
    whole, and some of the question (each column takes 3 cells of padding and border)."""
    widest = [
        max([cell_len(t(name))] + [cell_len(value(row)) for row in rows if row.error is None])
        for name, value in (
            ("table.user", lambda row: row.user or "-"),
            *([("table.operator", lambda row: row.operator or "-")] if operators else []),
            ("table.stop_reason", _stop_text),
            ("table.steps", lambda row: str(row.steps)),
            ("table.calls", lambda row: str(row.tool_calls)),
        )
    ]
    columns = [RUN_ID_CELLS, STARTED_CELLS, *widest, QUESTION_MIN_CELLS]
    return sum(columns) + 3 * len(columns) + (-3 if plain else 1)


def _runs_table(
    rows, *, plain: bool, stacked: bool, question_cells: int | None = QUESTION_CHARS, operators: bool = False
) -> Table:
    """`question_cells`: how much of the question a one-line row shows (None: all of it)."""
    table = Table(
        box=box.SIMPLE if plain else box.ROUNDED,
        show_edge=not plain,
        pad_edge=not plain,
        header_style="" if plain else "bold",
    )

    def column(name: str, *, justify="left", cells: int = 0, **options) -> None:
        table.add_column(name, justify=justify, min_width=max(cells, *map(cell_len, name.split("\n"))), **options)

    # A run id is the one thing a person must copy whole, and a start time cut to its date
    # says nothing: neither shrinks (the question gives way, then the stop reason wraps).
    if stacked:  # ids, times and names whole, one under another; the question has the rest
        who = [t("table.user"), *([t("table.operator")] if operators else [])]
        column("\n".join([t("table.run_id"), t("table.started"), *who]), cells=RUN_ID_CELLS, no_wrap=True)
        column(f"{t('table.stop_reason')}\n{t('table.steps')} · {t('table.calls')}", no_wrap=True)
        column(t("table.question"), overflow="fold", ratio=1)
    else:
        column(t("table.run_id"), cells=RUN_ID_CELLS, no_wrap=True)
        column(t("table.started"), cells=STARTED_CELLS, no_wrap=True)
        column(t("table.user"), no_wrap=True)
        if operators:
            column(t("table.operator"), no_wrap=True)
        column(t("table.stop_reason"), no_wrap=True)
        column(t("table.steps"), justify="right", no_wrap=True)
        column(t("table.calls"), justify="right", no_wrap=True)
        column(t("table.question"), no_wrap=True, overflow="ellipsis", max_width=question_cells)

    for row in rows:
        if row.error is not None:
            unreadable = Text(t("table.unreadable"), style=STYLE_ERROR)
            why = Text(unreadable_words(row.error), style=STYLE_ERROR)
            blank = ("",) if operators else ()
            table.add_row(row.run_id, unreadable, why) if stacked else table.add_row(
                row.run_id, "", "", *blank, unreadable, "", "", why
            )
            continue
        style = (
            STYLE_OK if row.status == "answered" else STYLE_WARN if row.status == "awaiting_approval" else STYLE_ERROR
        )
        started = row.created_at.replace("T", " ")[:16]
        user = Text(visible(row.user or "-", one_line=True))
        operator = Text(visible(row.operator or "-", one_line=True))
        stop = Text(_stop_text(row), style=style)
        if stacked:  # each stop of the run on a line of its own: the question keeps the room
            stop = Text(_stop_text(row).replace(" → ", " →\n"), style=style)
            counts = Text(f"{row.steps} · {row.tool_calls}", style=STYLE_DIM)  # untranslated: two numbers
            question = Text(visible(one_line(row.question, 2 * QUESTION_CHARS), one_line=True))
            who = [user, operator] if operators else [user]
            table.add_row(
                Text("\n").join([Text(row.run_id), Text(started), *who]), Text("\n").join([stop, counts]), question
            )
        else:
            shown = " ".join(row.question.split()) if question_cells is None else one_line(row.question, QUESTION_CHARS)
            question = Text(visible(shown, one_line=True))
            who = (user, operator) if operators else (user,)
            table.add_row(row.run_id, started, *who, stop, str(row.steps), str(row.tool_calls), question)
    return table
