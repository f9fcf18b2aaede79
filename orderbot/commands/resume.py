"""`orderbot resume ID`: continue a stored run after re-checking that it may be trusted.

A run paused for approval needs --approve or --reject; a run stopped at a limit continues
with a fresh budget (--max-steps, --timeout, --max-tool-calls). Before anything runs, the
session user, every tool's version, the pending call's preconditions and the approval's
age are checked again; any failure is one sentence and exit 6 (9 for a refusal because of who
asks or who came first), with nothing executed.
"""

from __future__ import annotations

from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import (
    BaseUrl,
    Json,
    MaxCallsPerStep,
    MaxSteps,
    MaxToolCalls,
    Model,
    NoFacts,
    Otel,
    RunId,
    Runs,
    StateDir,
    StrictClaims,
    Timeout,
    User,
)
from orderbot.commands.run import Resume, run
from orderbot.errors import UsageError
from orderbot.i18n import t

HELP = COMMAND_HELP["resume"]
EPILOG = (
    "Examples: orderbot resume 261130-050026-1a2b --approve --user C001 · "
    "orderbot resume 261130-050026-1a2b --max-steps 5"
)
Orders = Annotated[
    str | None,
    typer.Option(
        "--orders",
        "-o",
        help="Orders: a JSON file, sqlite:///... or postgresql://... \\[default: the orders the run used; "
        "ORDERBOT_ORDERS is used only when it names those same orders].",
        show_default=False,
    ),
]
Provider = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="auto, offline, openai or chat \\[default: $ORDERBOT_PROVIDER, else the provider the run used].",
        show_default=False,
    ),
]


def resume(
    ctx: typer.Context,
    run_id: RunId,
    approve: Annotated[bool, typer.Option("--approve", help="Carry out the action the run is waiting for.")] = False,
    reject: Annotated[
        bool, typer.Option("--reject", help="Refuse the action the run is waiting for; the model is told.")
    ] = False,
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    max_tool_calls: MaxToolCalls = None,
    max_calls_per_step: MaxCallsPerStep = None,
    orders: Orders = None,
    user: User = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    state_dir: StateDir = None,
    runs: Runs = None,
    json_out: Json = False,
    no_facts: NoFacts = False,
    strict_claims: StrictClaims = False,
    otel: Otel = False,
) -> None:
    if approve and reject:
        raise UsageError(t("error.approve_and_reject"))
    run(ctx.params, Resume(run_id, decision=True if approve else False if reject else None))


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("resume", help=HELP, epilog=EPILOG)(resume)
