"""`orderbot eval [SUITE]`: run a suite of cases against the configured model and score it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from orderbot.answers.evaluate import Report, case_runner, load_suite, orders_source, run_suite
from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import (
    BaseUrl,
    Json,
    MaxCallsPerStep,
    MaxSteps,
    MaxToolCalls,
    Model,
    Orders,
    Otel,
    Provider,
    Timeout,
)
from orderbot.commands.run import evaluate
from orderbot.models import create, resolve_provider
from orderbot.shops.session import DEFAULT_SHOP
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text
from orderbot.ui.evaluation import print_eval

HELP = COMMAND_HELP["eval"]
EPILOG = "Example: orderbot eval --provider chat --base-url http://127.0.0.1:8080/v1 --jobs 2"
BELOW_MIN_PASS = 1  # the exit code when the pass rate is below --min-pass


def eval_command(
    ctx: typer.Context,
    suite: Annotated[
        Path | None,
        typer.Argument(help="A suite file (JSON) \\[default: the built-in suite].", show_default=False),
    ] = None,
    orders: Orders = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    max_tool_calls: MaxToolCalls = None,
    max_calls_per_step: MaxCallsPerStep = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=32, help="Cases run at once.")] = 1,
    min_pass: Annotated[
        float,
        typer.Option("--min-pass", min=0, max=100, help="Exit 1 when fewer than this percent of cases pass."),
    ] = 100.0,
    json_out: Json = False,
    otel: Otel = False,
) -> None:
    def score(settings, make_runner) -> int:
        loaded, suite_path = load_suite(suite)
        source = orders_source(loaded, suite_path, orders)
        model_name = create(settings, DEFAULT_SHOP).name  # also fails early on a bad provider, before any case
        run_case = case_runner(settings, make_model=create, make_runner=make_runner)
        results, unchanged = run_suite(loaded, source, run_case, jobs=jobs)
        report = Report(
            results,
            provider=resolve_provider(settings),
            model=model_name,
            orders=source.shown,
            orders_unchanged=unchanged,
            min_pass=min_pass,
            suite=str(suite_path),
        )
        if json_out:
            sys.stdout.write(json_text(report.as_dict()) + "\n")  # names, questions, answers: outside text
        else:
            print_eval(make_console(), report)
        return 0 if report.ok else BELOW_MIN_PASS

    evaluate(ctx.params | {"orders": None}, score)  # --orders names the suite's orders, not a setting


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("eval", help=HELP, epilog=EPILOG)(eval_command)
