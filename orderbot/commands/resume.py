"""`orderbot resume ID`: continue a stored run after re-checking that it may be trusted.

A run paused for approval needs --approve or --reject; a run stopped at a limit continues
with a fresh budget (--max-steps, --timeout, --max-tool-calls). Before anything runs, the
session user, every tool's version, the pending call's preconditions and the approval's
age are checked again; any failure is one sentence and exit 6, with nothing executed.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated

import typer
from filelock import Timeout as LockTimeout

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
    StateDir,
    StrictClaims,
    Timeout,
    User,
    errors_to_exit_codes,
    run_exit_code,
    settings_from,
    setup_logging,
)
from orderbot.errors import RecordError
from orderbot.i18n import t
from orderbot.models import FACTORIES, create, endpoint, resolve_provider
from orderbot.runner import Runner
from orderbot.runs.resume import check_resume, recorded_orders
from orderbot.runs.store import RunStore
from orderbot.settings import public_base_url
from orderbot.shops.session import open_session
from orderbot.shops.source import source_identity
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.presentation import provider_text, resume_command, resume_hint, terminal_approver
from orderbot.ui.render import TransitionView, json_document, make_console, print_header, print_outcome

HELP = COMMAND_HELP["resume"]
EPILOG = (
    "Examples: orderbot resume 261130-050026-1a2b --approve --user C001 · "
    "orderbot resume 261130-050026-1a2b --max-steps 5"
)
Orders = Annotated[
    str | None,
    typer.Option(
        "--orders",
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
    json_out: Json = False,
    no_facts: NoFacts = False,
    strict_claims: StrictClaims = False,
    otel: Otel = False,
) -> None:
    flags = locals()
    if approve and reject:
        raise typer.BadParameter(t("error.approve_and_reject"), param_hint="--approve/--reject")
    with errors_to_exit_codes():
        settings = settings_from(flags)
        setup_logging(settings.resolved_state_dir())
        store = RunStore(settings.resolved_state_dir(), keep=settings.keep_runs)
        run_id = store.resolve(run_id)
        decision = True if approve else False if reject else None
        try:
            with store.lock(run_id):
                record = store.load(run_id)
                settings, was = _defaults_from_record(
                    settings, record, FACTORIES, explicit_orders=orders is not None, base_url_flag=base_url
                )
                session = open_session(settings)
                limits = session.limits(settings)
                check_resume(
                    record,
                    session.toolbox,
                    user=settings.user,
                    approve=decision,
                    now=time.time(),
                    ttl_hours=settings.approval_ttl_hours,
                )
                llm = create(settings)
                chosen = resolve_provider(settings)
                where = endpoint(settings)
                runner = Runner.for_session(session, llm, store, provider=chosen, base_url=where, otel=otel)
                console = make_console()
                view = TransitionView(console, limits, enabled=not json_out)
                interactive = not json_out and console.is_terminal and sys.stdin.isatty()
                if not json_out:
                    print_header(
                        console,
                        record.state,
                        t("header.resumed")
                        + " · "
                        + provider_text(settings.provider, chosen, llm.name, where, was=was),
                    )
                try:
                    result = runner.resume(
                        record,
                        limits,
                        approve=decision,
                        views=[view],
                        approver=terminal_approver(view, console) if interactive else None,
                    )
                finally:
                    view.close()
        except LockTimeout:
            raise RecordError(t("error.resume_busy", run_id=run_id)) from None
        state = result.state
        code = run_exit_code(result, strict_claims=strict_claims)
        if json_out:
            doc = json_document(
                result,
                view.transitions,
                provider=chosen,
                model=llm.name,
                limits=limits,
                exit_code=code,
                facts=not no_facts,
            )
            doc["resumed"] = True
            doc["base_url"] = where
            doc["resume_command"] = resume_command(state, where)
            sys.stdout.write(json_text(doc) + "\n")
        else:
            print_outcome(console, result, resume_hint=resume_hint(state, where), facts=not no_facts)
        raise typer.Exit(code)


def _defaults_from_record(settings, record, factories, *, explicit_orders: bool, base_url_flag: str | None = None):
    """Unless told otherwise, a run continues with the orders, the model and the server it
    used. The orders are the ones the run recorded, checked to be the same ones
    (orderbot.runs.resume.recorded_orders); only --orders on this command line names others, and
    ORDERBOT_ORDERS counts only when it names those same orders (a database URL was
    recorded without its password: libpq finds it in PGPASSWORD or ~/.pgpass, or give the
    whole URL again with --orders / ORDERBOT_ORDERS). The server only changes with
    --base-url on this command line (an environment variable is not enough: order data
    must not go elsewhere by accident). Returns the settings and, when --base-url sends
    the run somewhere new, where it went before."""

    update: dict = {}
    recorded = None if explicit_orders else recorded_orders(record)
    if recorded is not None:
        same = settings.orders is not None and source_identity(settings.orders) == recorded
        update["orders"] = settings.orders if same else recorded
    if "provider" not in settings.model_fields_set and record.provider in factories:
        update["provider"] = record.provider
        if "model" not in settings.model_fields_set and record.provider not in ("offline", "scripted"):
            update["model"] = record.model
    was = None
    same_provider = update.get("provider", settings.provider) == record.provider
    if same_provider and record.base_url_known and record.provider not in ("offline", "scripted"):
        if base_url_flag is None:
            update["base_url"] = record.base_url  # None: the provider's own service, as recorded
        elif public_base_url(base_url_flag) != record.base_url:
            was = record.base_url or t("header.default_service")
    settings = settings.model_copy(update=update) if update else settings
    return settings, was


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("resume", help=HELP, epilog=EPILOG)(resume)
