"""What the commands show around a run, shared by all of them: the model line of the
header, the resume hint, the approval prompt at the terminal, and the table of runs.

render.py draws a run (its transitions, its outcome) and trace.py its steps; this module
holds the pieces several commands need besides. Nothing here decides anything about a run.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from orderbot.i18n import t
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.budget import Limits, continued_limits
from orderbot.loop.engine import StopReason
from orderbot.loop.limits import LIMIT_SPECS, LIMIT_STOPS
from orderbot.loop.state import Approver, PendingCall, RunState
from orderbot.text import is_postgres, limit_value, one_line
from orderbot.ui.describe import action_words
from orderbot.ui.escape import visible
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK, STYLE_WARN
from orderbot.ui.terminal import answering

RUN_ID_CELLS = len("261130-114943-3f2a")
STARTED_CELLS = len("2026-11-30 18:26")
QUESTION_CHARS = 28  # of the question, in the table of runs (twice that when it wraps)
QUESTION_MIN_CELLS = 16  # of the question, before a run takes two lines
YES = ("y", "yes", "是", "好")
RESUME_ASIDE = "   "  # between the resume command and what else may be done
# Stands for the approving operator's own database login in a command printed at the
# requester's desk: a word to replace, like RUN and TEXT in the help (never `<login>`, which a
# shell would read as a redirection).
LOGIN = "LOGIN"


def provider_text(
    requested: str, chosen: str, model_name: str, base_url: str | None = None, *, was: str | None = None
) -> str:
    """`model: ...` for the header: which model answers, where (`base_url`, already stripped),
    and why when it was chosen for you. `was`: the base URL the run used before, when a
    resume sends it elsewhere."""
    text = model_label(chosen, model_name)
    if requested == "auto":
        text += " " + t({"openai": "header.auto_key", "chat": "header.auto_base_url"}.get(chosen, "header.auto_no_key"))
    if was is not None:
        text += " " + t("header.base_url_changed", url=base_url or t("header.default_service"), was=was)
    elif base_url:
        text += " " + t("header.base_url", url=base_url)
    return text


def model_label(provider: str, model_name: str) -> str:
    """`model: ...`, the model named one way wherever a run is shown (ask, repl, resume,
    runs show, eval)."""
    return t("header.offline") if provider == "offline" else t("header.model", provider=provider, model=model_name)


def resume_command(
    state: RunState,
    base_url: str | None = None,
    *,
    limits: Limits | None = None,
    given: Collection[str] = (),
    runs: str | None = None,
    shared: bool = False,
    orders: str | None = None,
    elsewhere: bool = False,
) -> str | None:
    """The exact command that continues a stopped run: a paused one is approved (the same
    with --reject refuses it), on a store a team shares through its queue (`shared`); one
    stopped at a limit or by Ctrl-C goes on with the limits the REPL's `c` would give it
    (orderbot.loop.budget.continued_limits over `limits`, the run's own; without them, only
    a pause has a command). The command names the limit that is raised and each one the
    run's command line set (`given`, limit names): the others a resume takes from the same
    environment as the run did. It names the server the run used (`base_url`, stripped), so
    it is plain where the conversation will be sent; resume uses the recorded one anyway.
    `runs`: the --runs the command was given (without a password), so the resume finds the run.

    `elsewhere`: this operator may not approve it (four eyes, or not one of the store's
    approvers), so the command is one for another operator's desk: every PostgreSQL URL in
    it (--runs, and --orders, the run's orders without a password) names LOGIN, their own
    login, since the record's URLs carry the requester's."""
    reason = state.stop_reason
    if reason is StopReason.AWAITING_APPROVAL and shared and elsewhere:
        store = f" --runs {shlex.quote(with_login(runs, LOGIN))}" if runs else ""
        own = f" --orders {shlex.quote(with_login(orders, LOGIN))}" if orders and is_postgres(orders) else ""
        return f"orderbot approvals approve {state.run_id}{store}{own}"
    store = f" --runs {shlex.quote(runs)}" if runs else ""
    if reason is StopReason.AWAITING_APPROVAL and shared:  # another desk settles it: ORDERBOT_RUNS, or --runs
        return f"orderbot approvals approve {state.run_id}{store}"
    variables = ""
    if reason is StopReason.AWAITING_APPROVAL:
        action = " --approve"
    elif reason in CONTINUABLE and limits is not None:
        more = continued_limits(limits, state)
        raised = {name for name, value in more.model_dump().items() if value != getattr(limits, name)}
        named = [spec for spec in LIMIT_SPECS if spec.name in raised or spec.name in given]
        action = "".join(f" {spec.flag} {limit_value(getattr(more, spec.name))}" for spec in named if spec.flag)
        # a cap without a flag (the response size) is set through the environment
        variables = "".join(f"{spec.env}={limit_value(getattr(more, spec.name))} " for spec in named if not spec.flag)
    else:
        return None
    user = f" --user {shlex.quote(state.user)}" if state.user and not state.signed_in else ""
    server = f" --base-url {shlex.quote(base_url)}" if base_url else ""
    return f"{variables}orderbot resume {state.run_id}{action}{user}{server}{store}"


def with_login(url: str, login: str) -> str:
    """A PostgreSQL URL shown without its password (orderbot.text.without_credentials) with
    `login` as its user name; any other URL as it is (SQLite names no one)."""
    if not is_postgres(url):
        return url
    scheme, _, rest = url.partition("://")
    place = rest.rpartition("@")[2]
    return f"{scheme}://{login}@{place}"


# Stopped runs `orderbot resume` continues with a fresh budget (a model error is left out: a
# larger budget does not mend it).
CONTINUABLE = LIMIT_STOPS | {StopReason.CANCELLED}


def resume_hint(
    state: RunState,
    base_url: str | None = None,
    *,
    limits: Limits | None = None,
    given: Collection[str] = (),
    runs: str | None = None,
    shared: bool = False,
    orders: str | None = None,
    elsewhere: bool = False,
) -> str | None:
    """The command of resume_command and, after RESUME_ASIDE, what else may be done."""
    command = resume_command(
        state, base_url, limits=limits, given=given, runs=runs, shared=shared, orders=orders, elsewhere=elsewhere
    )
    if command is None:
        return None
    if state.stop_reason is not StopReason.AWAITING_APPROVAL:
        return command
    if shared and elsewhere:
        named = f"{LOGIN}@" in command
        aside = t("approvals.login_or_reject", login=LOGIN) if named else t("approvals.anyone_rejects")
        return f"{command}{RESUME_ASIDE}{aside}"
    if shared:
        return f"{command}   {t('approvals.or_reject')}"
    return f"{command}{RESUME_ASIDE}{t('outcome.or_reject')}"


def terminal_approver(view, console: Console) -> Approver:
    """Ask the person at the keyboard; anything but yes is a no. `view` (an observer with
    `paused()`) stops drawing while the question is on screen."""

    def approve(pending: PendingCall) -> bool:
        with view.paused(), answering():  # only a key typed after the question is shown answers it
            try:
                # The description holds text the model wrote: never markup.
                question = t("approve.prompt", description=visible(action_words(pending.description), one_line=True))
                reply = console.input(f"[bold yellow]{escape(question)}[/] {escape(t('approve.choices'))} ")
            except EOFError:
                console.line()  # Ctrl-D ends no line: what follows starts on the next one, not after the prompt
                return False
            except KeyboardInterrupt:  # the terminal echoed ^C on the prompt's line; end it before the table goes on
                console.line()
                raise
        return reply.strip().lower() in YES

    return approve


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
