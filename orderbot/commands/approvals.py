"""`orderbot approvals`: the team's queue of side effects waiting for a person, and
`orderbot approvals approve RUN` / `reject RUN --reason TEXT` to decide one from any desk.

Deciding is `orderbot resume --approve/--reject` for the run's own customer, as the operator
of this session, on the one path of every run command (orderbot.commands.run): the same
re-checks, the same flags, the same exit codes; with four eyes (ORDERBOT_FOUR_EYES=1, or the
store's policy) the operator whose run asked cannot approve it (exit 9, nothing executed). Of
two operators deciding one run at the same moment, one does; the other is told who did (exit 9).
"""

from __future__ import annotations

import sys
import time
from itertools import islice
from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP, CommandGroup
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
    errors_to_exit_codes,
    open_store,
)
from orderbot.commands.resume import Orders, Provider
from orderbot.commands.run import Resume, run
from orderbot.errors import UsageError
from orderbot.i18n import t
from orderbot.runs.record import utc_iso
from orderbot.settings import load_settings
from orderbot.ui.console import make_console
from orderbot.ui.describe import action_value
from orderbot.ui.escape import arguments_value, json_text  # --json: valid JSON, no raw controls
from orderbot.ui.layout import print_whole
from orderbot.ui.team import format_waiting

HELP = COMMAND_HELP["approvals"]
EPILOG = (
    "Examples: orderbot approvals --runs postgresql://desk2@db/shop · orderbot approvals approve 261130-050026-1a2b · "
    'orderbot approvals reject 261130-050026-1a2b --reason "客户已改主意"'
)
APPROVE_HELP = "Approve what a run waits for: carry it out and continue the run here, as resume --approve does."
REJECT_HELP = "Reject what a run waits for, saying why: the model is told, the audit log keeps the reason."
APPROVE_EPILOG = "Example: orderbot approvals approve 261130-050026-1a2b --runs postgresql://desk2@db/shop"
REJECT_EPILOG = 'Example: orderbot approvals reject 261130-050026-1a2b --reason "客户已改主意"'
MAX_REASON = 500

app = typer.Typer(
    cls=CommandGroup, help=HELP, epilog=EPILOG, no_args_is_help=False, rich_markup_mode="rich", add_completion=False
)


@app.callback(invoke_without_command=True)
def list_waiting(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many.")] = 100,
    json_out: Json = False,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return  # `approvals approve ...`: the subcommand does the work
    with errors_to_exit_codes():
        settings = load_settings(runs=runs, state_dir=state_dir)
        store = open_store(settings)
        try:
            rows = list(islice(store.waiting(limit=limit), limit))
        finally:
            store.close()
        expired_before = utc_iso(time.time() - settings.approval_ttl_hours * 3600)
        if json_out:
            docs = [
                row.as_dict()
                | {
                    "arguments": arguments_value(row.arguments),
                    "description": action_value(row.description),
                    "expired": row.requested_at < expired_before,
                }
                for row in rows
            ]
            sys.stdout.write(json_text(docs) + "\n")
            return
        console = make_console()
        if not rows:
            console.print(t("approvals.none", where=store.where), markup=False)
            return
        print_whole(
            console,
            format_waiting(rows, plain=not console.is_terminal, expired_before=expired_before, width=console.width),
        )


@app.command("approve", help=APPROVE_HELP, epilog=APPROVE_EPILOG)
def approve(
    ctx: typer.Context,
    run_id: RunId,
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    max_tool_calls: MaxToolCalls = None,
    max_calls_per_step: MaxCallsPerStep = None,
    orders: Orders = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    runs: Runs = None,
    state_dir: StateDir = None,
    json_out: Json = False,
    no_facts: NoFacts = False,
    strict_claims: StrictClaims = False,
    otel: Otel = False,
) -> None:
    run(ctx.params, Resume(run_id, decision=True, for_customer=True))


@app.command("reject", help=REJECT_HELP, epilog=REJECT_EPILOG)
def reject(
    ctx: typer.Context,
    run_id: RunId,
    reason: Annotated[
        str, typer.Option("--reason", help="Why: the audit log keeps it (up to 500 characters).", show_default=False)
    ],
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    max_tool_calls: MaxToolCalls = None,
    max_calls_per_step: MaxCallsPerStep = None,
    orders: Orders = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    runs: Runs = None,
    state_dir: StateDir = None,
    json_out: Json = False,
    no_facts: NoFacts = False,
    strict_claims: StrictClaims = False,
    otel: Otel = False,
) -> None:
    with errors_to_exit_codes():
        if not reason.strip():
            raise UsageError(t("approvals.reason_needed"))
    why = " ".join(reason.split())[:MAX_REASON]
    run(ctx.params, Resume(run_id, decision=False, reason=why, for_customer=True))
