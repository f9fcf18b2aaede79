"""`orderbot resume ID`: continue a stored run after re-checking that it may be trusted.

A run paused for approval needs --approve or --reject; a run stopped at a limit continues
with a fresh budget (--max-steps, --timeout, --max-tool-calls). Before anything runs, the
session user, every tool's version, the pending call's preconditions and the approval's
age are checked again; any failure is one sentence and exit 6 (9 for a refusal because of who
asks or who came first), with nothing executed.
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
    Runs,
    StateDir,
    StrictClaims,
    Timeout,
    User,
    errors_to_exit_codes,
    run_exit_code,
    run_settings,
)
from orderbot.commands.logs import setup_logging
from orderbot.errors import OperatorRefused, UsageError
from orderbot.i18n import t
from orderbot.loop.limits import StopReason
from orderbot.models import FACTORIES, create, endpoint, resolve_provider
from orderbot.models.mcp_client import ClientModel
from orderbot.runner import Runner
from orderbot.runs.resume import check_resume, check_settle, recorded_orders, settled_first
from orderbot.runs.stores import open_run_store
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
    settle_with_flags(run_id, True if approve else False if reject else None, ctx.params)


def settle_with_flags(
    run_id: str, decision: bool | None, flags: dict, *, reason: str | None = None, for_customer: bool = False
) -> None:
    """`settle` with the flags a command was given (its ctx.params), for `resume` and for
    `approvals approve|reject`: the settings read from them, and the rest passed by name."""
    with errors_to_exit_codes():
        settings = run_settings(flags)
        settle(
            run_id,
            decision,
            settings,
            reason=reason,
            for_customer=for_customer,
            explicit_orders=flags["orders"] is not None,
            base_url_flag=flags["base_url"],
            json_out=settings.json_output,
            no_facts=settings.no_facts,
            strict_claims=settings.strict_claims,
            otel=flags["otel"],
            runs_flag=flags["runs"],
        )


def settle(
    run_id: str,
    decision: bool | None,
    settings,
    *,
    reason: str | None = None,
    for_customer: bool = False,
    explicit_orders: bool,
    base_url_flag: str | None,
    json_out: bool,
    no_facts: bool,
    strict_claims: bool,
    otel: bool,
    runs_flag: str | None = None,
) -> None:
    """Continue a stored run, settling what it waits for (`decision`: True approves, False
    rejects with `reason`), as this session's operator, and exit with the run's code. The
    body of `resume` and of `approvals approve|reject` (`for_customer`: the session acts for
    the run's own customer, and a run settled already names who settled it)."""
    setup_logging(settings.resolved_state_dir())
    store = open_run_store(settings)
    opened = []  # the orders store, closed with the run store (an in-process caller runs many)
    try:
        run_id = store.resolve(run_id)
        try:
            with store.lock(run_id):
                record = store.load(run_id)
                if for_customer:
                    _settled_already(record, decision)
                    customer = None if record.state.signed_in else record.state.user
                    settings = settings.model_copy(update={"user": customer})
                settings, was = _defaults_from_record(
                    settings, record, FACTORIES, explicit_orders=explicit_orders, base_url_flag=base_url_flag
                )
                policy = store.policy()
                four_eyes = settings.four_eyes or policy.four_eyes
                check_settle(
                    record, operator=store.operator, approve=decision, four_eyes=four_eyes, approvers=policy.approvers
                )
                session = open_session(settings)
                opened.append(session.store)
                limits = session.limits(settings)
                check_resume(
                    record,
                    session.toolbox,
                    user=settings.user,
                    approve=decision,
                    now=time.time(),
                    ttl_hours=settings.approval_ttl_hours,
                )
                llm, chosen = _model_for(record, settings, session.shop)
                where = endpoint(settings)
                runner = Runner.for_session(session, llm, store, provider=chosen, base_url=where, otel=otel)
                console = make_console()
                view = TransitionView(console, limits, enabled=not json_out)
                may_ask = policy.asks_at_the_prompt(store.operator, four_eyes=four_eyes)
                interactive = not json_out and console.is_terminal and sys.stdin.isatty() and may_ask
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
                        reason=reason,
                        views=[view],
                        approver=terminal_approver(view, console) if interactive else None,
                    )
                finally:
                    view.close()
        except LockTimeout:
            raise OperatorRefused(t("error.resume_busy", run_id=run_id)) from None
    finally:
        for orders in opened:
            orders.close()
        store.close()
    state = result.state
    code = run_exit_code(result, strict_claims=strict_claims)
    shown = store.where if runs_flag else None  # --runs in the queue's hint, without a password
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
        doc["resume_command"] = resume_command(state, where, limits=limits, runs=shown, shared=store.shared)
        if store.shared:
            doc["operator"] = store.operator
        sys.stdout.write(json_text(doc) + "\n")
    else:
        hint = resume_hint(state, where, limits=limits, runs=shown, shared=store.shared)
        print_outcome(console, result, resume_hint=hint, facts=not no_facts)
    raise typer.Exit(code)


def _model_for(record, settings, shop):
    """The model a resumed run continues with, and its provider's name. A recorded MCP
    session's client has gone: its model answers at once, so settling one of its calls
    runs that call and nothing else (orderbot.models.mcp_client)."""
    if record.provider == ClientModel.provider:
        return ClientModel.ended(), ClientModel.provider
    return create(settings, shop), resolve_provider(settings)


def _settled_already(record, decision: bool | None) -> None:
    """A run the queue no longer waits for was settled by someone: say who, not only that
    there is nothing to resume."""
    waits = record.state.stop_reason is StopReason.AWAITING_APPROVAL
    if decision is not None and not waits and any(d.approved is not None for d in record.decisions.values()):
        raise OperatorRefused(settled_first(record))


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
    # A recorded MCP session goes on with its own model (see _model_for), not with one of the factories'.
    own = record.provider in factories or record.provider == ClientModel.provider
    if "provider" not in settings.model_fields_set and own:
        update["provider"] = record.provider
        if "model" not in settings.model_fields_set and record.provider not in ("offline", "scripted", "mcp"):
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
