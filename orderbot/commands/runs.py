"""`orderbot runs` (recent runs, newest first), `orderbot runs show ID` (one run's transitions
and answer, rebuilt from its record), `orderbot runs export ID` (its record as JSON) and
`orderbot runs prune`."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from orderbot.atomic import atomic_write
from orderbot.commands import COMMAND_HELP, CommandGroup
from orderbot.commands.common import Json, RunId, Runs, StateDir, Trace, errors_to_exit_codes, open_store
from orderbot.errors import ConfigError, OrderbotError, UsageError
from orderbot.i18n import say, t
from orderbot.loop.engine import Limits
from orderbot.loop.limits import SPEC_OF, StopReason
from orderbot.runner import result_of
from orderbot.runs.base import BaseRunStore
from orderbot.settings import load_settings
from orderbot.shops.session import shop_named
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.layout import flow_dots, print_whole
from orderbot.ui.presentation import model_label, resume_hint
from orderbot.ui.render import format_transitions, print_outcome
from orderbot.ui.run_list import format_runs
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR
from orderbot.ui.trace import print_trace

HELP = COMMAND_HELP["runs"]
EPILOG = (
    "Examples: orderbot runs --user C001 --stop-reason awaiting_approval · orderbot runs --search ORD-1002 -n 5 · "
    "orderbot runs show 261130-050026-1a2b · orderbot runs export 261130-050026-1a2b -o run.json · "
    "orderbot runs prune --older-than 30"
)
SHOW_HELP = "Show one run from its record: the transitions table and the answer (or why it stopped)."
SHOW_EPILOG = "Example: orderbot runs show 261130-050026-1a2b --trace"
# What --stop-reason accepts: how a run ended (orderbot.limits.StopReason, standard library
# only, so `runs --help` stays light), or `incomplete` for a run whose process ended first.
STOP_REASONS = (*(str(reason) for reason in StopReason), "incomplete")


app = typer.Typer(
    cls=CommandGroup, help=HELP, epilog=EPILOG, no_args_is_help=False, rich_markup_mode="rich", add_completion=False
)


@app.callback(invoke_without_command=True)
def list_runs(
    ctx: typer.Context,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Only runs of this user.", show_default=False)
    ] = None,
    stop_reason: Annotated[
        str | None,
        typer.Option(
            "--stop-reason",
            help="Only runs that stopped with this reason (e.g. answered, awaiting_approval, step_limit, incomplete).",
            show_default=False,
        ),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            "--search", help="Only runs whose question or answer holds this text (in any case).", show_default=False
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Show at most this many runs.")] = 20,
    json_out: Json = False,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return  # `runs show ...`: the subcommand does the work
    with errors_to_exit_codes():
        if stop_reason is not None and stop_reason not in STOP_REASONS:
            valid = ", ".join(STOP_REASONS)
            raise UsageError(t("error.bad_stop_reason", value=stop_reason, valid=valid))
        if search is not None and not search.strip():
            raise UsageError(t("error.search_empty"))
        with _opened(state_dir, runs) as store:
            rows = store.summaries(user=user, status=stop_reason)
            if search is not None:
                rows = (row for row in rows if mentions(store, row, search.strip().casefold()))
            rows = list(islice(rows, limit))
        if json_out:
            sys.stdout.write(json_text([r.as_dict() for r in rows]) + "\n")
            return
        console = make_console()
        if not rows:
            console.print(
                t("runs.none", dir=store.where)
                if user is None and stop_reason is None and search is None
                else t("runs.no_match"),
                markup=False,
            )
            return
        print_whole(
            console, format_runs(rows, plain=not console.is_terminal, width=console.width, operators=store.shared)
        )


def mentions(store, row, needle: str) -> bool:
    """Whether a run's question or answer holds `needle` (casefolded). The question is in
    the listing's summary; the answer only in the record, read for the runs whose question
    does not match (a record that cannot be read matches nothing)."""
    if row.error is not None:
        return False
    if needle in row.question.casefold():
        return True
    try:
        answer = store.load(row.run_id, allow_altered=True).state.answer
    except OrderbotError:
        return False
    return needle in (answer or "").casefold()


@app.command("show", help=SHOW_HELP, epilog=SHOW_EPILOG)
def show(
    run_id: RunId,
    trace: Trace = False,
    json_out: Annotated[bool, typer.Option("--json", "-j", help="Print the whole record as JSON.")] = False,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        with _opened(state_dir, runs) as store:
            full = store.resolve(run_id)
            record = store.load(full, allow_altered=True)  # shown, marked; never resumed or replayed
            document = store.document(full) if json_out else None
        if json_out:
            sys.stdout.write(json_text(document) + "\n")
            return
        print_record(make_console(), record, trace=trace, runs=store.where if runs else None)


EXPORT_HELP = (
    "Write one run's record as JSON, as kept: tagged with the state directory's key, as earlier "
    "orderbots kept it in runs/<run id>.json. In a terminal it is shown as runs show --json shows it."
)
EXPORT_EPILOG = "Example: orderbot runs export 261130-050026-1a2b -o run.json"


@app.command("export", help=EXPORT_HELP, epilog=EXPORT_EPILOG)
def export(
    run_id: RunId,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write it to this file (made 0600: a record holds customers' orders) \\[default: standard output].",
            show_default=False,
        ),
    ] = None,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        with _opened(state_dir, runs) as store:
            full = store.resolve(run_id)
            raw = store.export(full)
            document = store.document(full) if output is None and sys.stdout.isatty() else None
        if output is not None:
            write_private(output, raw)
        elif document is not None:  # a terminal: shown as --json shows text from outside, escaped
            sys.stdout.write(json_text(document) + "\n")
        else:
            sys.stdout.buffer.write(raw)
            sys.stdout.buffer.flush()


def write_private(path: Path, data: bytes) -> None:
    """`data` in a new or replaced file at `path`, 0600, written whole or not at all."""
    try:
        atomic_write(path, data)
        path.chmod(0o600)
    except OSError as exc:
        raise ConfigError(t("runs.cannot_export", path=path, reason=exc.strerror or type(exc).__name__)) from None


PRUNE_HELP = (
    "Drop the conversation of runs older than DAYS, keeping each run's summary and the whole audit log "
    "(ORDERBOT_PRUNE_AFTER_DAYS does it after every run)."
)
PRUNE_EPILOG = "Example: orderbot runs prune --older-than 30"


@app.command("prune", help=PRUNE_HELP, epilog=PRUNE_EPILOG)
def prune(
    older_than: Annotated[
        float, typer.Option("--older-than", min=0, help="Age in days (from when each run started).", show_default=False)
    ],
    json_out: Json = False,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        with _opened(state_dir, runs) as store:
            count = store.prune_older(older_than, now=time.time())
        if json_out:
            sys.stdout.write(json_text({"pruned": count, "older_than_days": older_than}) + "\n")
            return
        make_console().print(t("runs.pruned_count", count=count, days=f"{older_than:g}"), markup=False)


def print_record(console, record, *, trace: bool = False, runs: str | None = None) -> None:
    """The record as `ask` showed it: a header, one transitions table per segment (the first
    run, then each resumption), the trace if asked, and the outcome with how to continue it
    (`runs`: the store's --runs, without a password, for that command)."""

    state = record.state
    header = t(
        "header.record",
        run_id=record.run_id,
        model=model_label(record.provider, record.model),
        user=state.user or t("header.anonymous"),
        started=record.created_at[:19] + "Z",  # to the second: the microseconds only order listings
    )
    console.print(flow_dots(console, header, STYLE_DIM), soft_wrap=True)
    if state.server_model:  # what the server said answered, which may differ from what was asked for
        line = t("runs.server_model", model=state.server_model)
        if state.system_fingerprint:
            line += " · " + t("runs.fingerprint", fingerprint=state.system_fingerprint)
        console.print(Text(line, style=STYLE_DIM))
    if record.altered:
        console.print(Text(t("runs.altered", reason=say(record.altered)), style=STYLE_ERROR))
    if record.pruned_at:  # only the summary is left: the header says what it was
        console.print(Text(t("runs.pruned_note", at=record.pruned_at, status=record.status), style=STYLE_DIM))
        return
    by_segment: dict[int, list] = {}
    for segment_index, transition in record.transition_values():
        by_segment.setdefault(segment_index, []).append(transition)
    for index, segment in enumerate(record.segments):
        limits = Limits(**segment.limits)
        if index:
            settled = {True: t("header.approved"), False: t("header.rejected")}.get(segment.approve, "")
            console.print(
                Text(
                    t("header.segment", kind=segment.kind, settled=settled, started=segment.started_at), style=STYLE_DIM
                )
            )
        transitions = by_segment.get(index, [])
        if transitions:
            console.print(format_transitions(transitions, limits, plain=not console.is_terminal, width=console.width))
        if trace and transitions:
            print_trace(console, transitions)
    if record.dropped.get("transitions"):
        console.print(Text(t("outcome.dropped", count=record.dropped["transitions"]), style=STYLE_DIM))
    if state.stop_reason is None:
        console.print(Text(t("outcome.not_finished"), style=STYLE_ERROR))
        return
    last = Limits(**record.segments[-1].limits) if record.segments else None  # what the run last stopped within
    shop = shop_named(record.shop)
    # The limits the run's command line must have set: those that differ from its shop's defaults.
    given = [
        n for n, v in (last.model_dump() if last else {}).items() if v != shop.limit_defaults.get(n, SPEC_OF[n].default)
    ]
    hint = None if record.altered else resume_hint(state, record.base_url, limits=last, given=given, runs=runs)
    print_outcome(console, result_of(state, shop.vocabulary, record), resume_hint=hint)


@contextlib.contextmanager
def _opened(state_dir, runs) -> Iterator[BaseRunStore]:
    """The run store the flags name, closed when the block ends (a command shows what it read
    after that)."""
    store = open_store(load_settings(state_dir=state_dir, runs=runs))
    try:
        yield store
    finally:
        store.close()
