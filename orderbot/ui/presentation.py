"""What the commands show around a run, shared by all of them: the model line of the
header, the resume hint, the approval prompt at the terminal, and the table of runs.

render.py draws a run (its transitions, its outcome) and trace.py its steps; this module
holds the pieces several commands need besides. Nothing here decides anything about a run.
"""

from __future__ import annotations

import shlex

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from orderbot.i18n import t
from orderbot.loop.engine import StopReason
from orderbot.loop.state import Approver, PendingCall, RunState
from orderbot.text import one_line
from orderbot.ui.escape import visible
from orderbot.ui.styles import STYLE_ERROR, STYLE_OK, STYLE_WARN

RUN_ID_CELLS = len("261130-114943-3f2a")
STARTED_CELLS = len("2026-11-30 18:26")
NARROW_RUNS = 96  # below this many columns the table of runs leaves out steps and calls
QUESTION_CHARS = 28  # of the question, in the table of runs
YES = ("y", "yes", "是", "好")


def provider_text(
    requested: str, chosen: str, model_name: str, base_url: str | None = None, *, was: str | None = None
) -> str:
    """`model: ...` for the header: which model answers, where (`base_url`, already stripped),
    and why when it was chosen for you. `was`: the base URL the run used before, when a
    resume sends it elsewhere."""
    text = t("header.offline") if chosen == "offline" else t("header.model", provider=chosen, model=model_name)
    if requested == "auto":
        text += " " + t("header.auto_key" if chosen == "openai" else "header.auto_no_key")
    if was is not None:
        text += " " + t("header.base_url_changed", url=base_url or t("header.default_service"), was=was)
    elif base_url:
        text += " " + t("header.base_url", url=base_url)
    return text


def resume_command(state: RunState, base_url: str | None = None) -> str | None:
    """The exact command that approves a paused run (the same with --reject refuses it).
    It names the server the run used (`base_url`, stripped), so it is plain where the
    conversation will be sent; resume uses the recorded one anyway."""
    if state.stop_reason is not StopReason.AWAITING_APPROVAL:
        return None
    user = f" --user {shlex.quote(state.user)}" if state.user and not state.signed_in else ""
    server = f" --base-url {shlex.quote(base_url)}" if base_url else ""
    return f"orderbot resume {state.run_id} --approve{user}{server}"


def resume_hint(state: RunState, base_url: str | None = None) -> str | None:
    command = resume_command(state, base_url)
    return f"{command}   {t('outcome.or_reject')}" if command else None


def terminal_approver(view, console: Console) -> Approver:
    """Ask the person at the keyboard; anything but yes is a no. `view` (an observer with
    `paused()`) stops drawing while the question is on screen."""

    def approve(pending: PendingCall) -> bool:
        with view.paused():
            try:
                # The description holds text the model wrote: never markup.
                question = t("approve.prompt", description=visible(pending.description, one_line=True))
                reply = console.input(f"[bold yellow]{escape(question)}[/] {escape(t('approve.choices'))} ")
            except EOFError:
                return False
        return reply.strip().lower() in YES

    return approve


def _stop_text(row) -> str:
    """How the run ended, through each resumption, and what a person decided on the way."""
    text = " → ".join(row.history) if len(row.history) > 1 else row.status
    decided = "/".join(t(f"runs.{word}") for word in row.decisions)
    return f"{text} ({decided})" if decided else text


def format_runs(rows, *, plain: bool, width: int | None = None) -> Table:
    """Recorded runs (orderbot.runs.RunSummary), one row each, newest first. Narrower than
    NARROW_RUNS columns (an 80-column terminal), the step and call counts are left out so the
    run id, its start time and some of the question fit; `runs show` has them."""
    counts = width is None or width >= NARROW_RUNS
    table = Table(
        box=box.SIMPLE if plain else box.ROUNDED,
        show_edge=not plain,
        pad_edge=not plain,
        header_style="" if plain else "bold",
    )
    columns = [(t("table.run_id"), "left"), (t("table.started"), "left"), (t("table.user"), "left")]
    columns.append((t("table.stop_reason"), "left"))
    if counts:
        columns += [(t("table.steps"), "right"), (t("table.calls"), "right")]
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True, min_width=cell_len(name))
    # A run id is the one thing a person must copy whole, and a start time cut to its date
    # says nothing: neither column shrinks (the question and the stop reason give way).
    table.columns[0].min_width = RUN_ID_CELLS
    table.columns[1].min_width = STARTED_CELLS
    table.add_column(t("table.question"), no_wrap=True, overflow="ellipsis", max_width=QUESTION_CHARS, min_width=4)

    def add(run_id, started, user, stop, steps, calls, question) -> None:
        table.add_row(run_id, started, user, stop, *((steps, calls) if counts else ()), question)

    for row in rows:
        if row.error is not None:
            unreadable, why = Text(t("table.unreadable"), style=STYLE_ERROR), Text(row.error, style=STYLE_ERROR)
            add(row.run_id, "", "", unreadable, "", "", why)
            continue
        style = (
            STYLE_OK if row.status == "answered" else STYLE_WARN if row.status == "awaiting_approval" else STYLE_ERROR
        )
        question = one_line(row.question, QUESTION_CHARS)
        add(
            row.run_id,
            row.created_at.replace("T", " ")[:16],
            row.user or "-",
            Text(_stop_text(row), style=style),
            str(row.steps),
            str(row.tool_calls),
            question,
        )
    return table
