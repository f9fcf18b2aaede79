"""`orderbot replay ID`: re-run a recorded run with its model turns played back against
today's tools and engine, and report every step that now differs.

Exit 0 when every step matches the record, 1 when something differs, 6 when the record
cannot be read or replayed. Nothing real is written: the tools work on a scratch copy of
the orders file, which is deleted afterwards.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import Json, RunId, Runs, StateDir, errors_to_exit_codes, open_store
from orderbot.commands.logs import setup_logging
from orderbot.errors import ConfigError, ExitCode, RecordError
from orderbot.i18n import counted, say, t
from orderbot.runner.replay import pin_time, scratch_session
from orderbot.runner.replay import replay as replay_record
from orderbot.settings import load_settings
from orderbot.shops.session import orders_source
from orderbot.shops.source import parse_source
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.layout import flow_dots, hanging
from orderbot.ui.replay import difference_words
from orderbot.ui.styles import STYLE_DIM, STYLE_OK, STYLE_WARN

HELP = COMMAND_HELP["replay"]
EPILOG = (
    "Example: orderbot replay 261130-050026-1a2b --orders orders.json   "
    "(exit 0: identical, 1: differs, 6: record unusable)"
)
Orders = Annotated[
    Path | None,
    typer.Option(
        "--orders",
        "-o",
        help="Orders JSON file to replay on, whatever it holds (a what-if) "
        "\\[default: $ORDERBOT_ORDERS, else the file the run used, else as for ask; where they are not "
        "the orders the run saw, its recorded tool results stand in for the tools].",
        show_default=False,
    ),
]


def replay(
    run_id: RunId,
    orders: Orders = None,
    state_dir: StateDir = None,
    runs: Runs = None,
    json_out: Json = False,
) -> None:
    with errors_to_exit_codes():
        settings = load_settings(orders=orders, state_dir=state_dir, runs=runs)
        setup_logging(settings.resolved_state_dir())  # the tools run again, and a failing one is logged
        store = open_store(settings)
        try:
            record = store.load(run_id)
        finally:
            store.close()
        if record.pruned_at:
            raise RecordError("runs.pruned", run_id=record.run_id, at=record.pruned_at)
        source = _orders_source(settings, record, orders_source)
        with tempfile.TemporaryDirectory(prefix="orderbot-replay-") as tmp:
            session = scratch_session(source, Path(tmp))
            report = replay_record(
                record,
                session.toolbox,
                shop=session.shop,
                set_time=pin_time(session),
                orders_digest=session.orders_digest,
                what_if=orders is not None,  # these orders, by name: the tools run on them, whatever they hold
            )
        if json_out:
            doc = {
                "run_id": record.run_id,
                "identical": report.identical,
                "orders": str(source),
                "recorded_stop_reason": record.status,
                "replayed_stop_reason": str(report.state.stop_reason),
                "differences": [{"step": d.step, "text": difference_words(d, "en")} for d in report.differences],
                "notes": [say(note, "en") for note in report.notes],
            }
            sys.stdout.write(json_text(doc) + "\n")
        else:
            console = make_console()
            header = t(
                "replay.header",
                run_id=record.run_id,
                turns=counted(len(record.turn_texts), "model_turn"),
                source=source,
            )
            console.print(flow_dots(console, header, STYLE_DIM), soft_wrap=True)
            for note in report.notes:  # a long note continues indented
                note_line = Text(t("replay.note", note=say(note)), style=STYLE_DIM)
                console.print(hanging(console, note_line, first=0, rest=2), soft_wrap=True)
            if report.identical:
                console.print(Text(t("replay.same", reason=record.status), style=STYLE_OK))
            else:
                count = len(report.differences)
                console.print(
                    Text(
                        t("replay.differences_one" if count == 1 else "replay.differences", count=count),
                        style=STYLE_WARN,
                    )
                )
                for diff in report.differences:  # a long difference continues indented
                    line = Text(t("replay.difference", step=diff.step, text=difference_words(diff)).strip())
                    console.print(hanging(console, line), soft_wrap=True)
        raise typer.Exit(0 if report.identical else ExitCode.DIFFERS)


def _orders_source(settings, record, orders_source) -> Path:
    """--orders / ORDERBOT_ORDERS, else the file the run used if it still exists, else
    what `ask` would use. Replay copies the orders, so it needs a JSON file."""

    if settings.orders is not None:
        chosen = parse_source(settings.orders)
    elif record.orders and "://" not in record.orders and Path(record.orders).is_file():
        return Path(record.orders)
    else:
        chosen = orders_source(settings)[0]
    if chosen.kind != "json":
        raise ConfigError(t("orders.replay_needs_json", source=chosen.shown))
    return chosen.path


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("replay", help=HELP, epilog=EPILOG)(replay)
