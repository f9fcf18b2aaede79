"""`orderbot ask "..."`: one bounded run, shown as a table of transitions, then the answer."""

from __future__ import annotations

import sys
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
    Orders,
    Otel,
    Provider,
    Runs,
    StateDir,
    StrictClaims,
    Timeout,
    Trace,
    User,
    errors_to_exit_codes,
    run_exit_code,
    run_settings,
)
from orderbot.commands.logs import setup_logging
from orderbot.errors import UsageError
from orderbot.i18n import t
from orderbot.loop.conversation import Conversation
from orderbot.loop.state import RunState
from orderbot.models import create, endpoint, resolve_provider
from orderbot.runner import Runner
from orderbot.runs.stores import open_run_store
from orderbot.shops.session import open_session
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.presentation import provider_text, resume_command, resume_hint, terminal_approver
from orderbot.ui.render import (
    TransitionView,
    json_document,
    make_console,
    print_answer_only,
    print_header,
    print_outcome,
)
from orderbot.ui.trace import TraceView

HELP = COMMAND_HELP["ask"]
EPILOG = 'Example: orderbot ask "请查询订单 ORD-1001 的状态。"'
MAX_QUESTION_CHARS = 4000


def ask(
    ctx: typer.Context,
    question: Annotated[
        str | None,
        typer.Argument(
            help="The question, in Chinese or English; - (or none, when standard input is not a terminal) reads "
            "it from standard input.",
            show_default=False,
        ),
    ] = None,
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
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print the answer only; a run that did not answer says why on stderr, in one line "
            "(the exit code is the same).",
        ),
    ] = False,
    trace: Trace = False,
    no_facts: NoFacts = False,
    strict_claims: StrictClaims = False,
    otel: Otel = False,
    continue_: Annotated[
        bool,
        typer.Option(
            "--continue",
            "-c",
            help="Continue the latest conversation: the earlier turns go with the question as context, "
            "as in the REPL (the same user only).",
        ),
    ] = False,
) -> None:
    with errors_to_exit_codes():
        if question is None and sys.stdin.isatty():
            raise UsageError(t("error.question_missing"))
        if question in (None, "-"):  # the question from standard input: `echo 查询 ORD-1001 | orderbot ask`
            question = sys.stdin.read(MAX_QUESTION_CHARS + 1)
        if not question.strip():
            raise UsageError(t("error.question_empty"))
        if len(question) > MAX_QUESTION_CHARS:
            raise UsageError(t("error.question_too_long", chars=len(question), limit=MAX_QUESTION_CHARS))
        settings = run_settings(ctx.params)
        setup_logging(settings.resolved_state_dir())
        store = open_run_store(settings)  # first: a run store that cannot be reached is one sentence, no run
        store.prepare()  # a state directory that cannot take the record: one sentence, before anything is shown
        try:
            session = open_session(settings)
            try:
                history = earlier_turns(store, settings.user) if continue_ else []
                _run(question, settings, store, session, json_out=settings.json_output, quiet=quiet,
                     trace=settings.trace, no_facts=settings.no_facts, strict_claims=settings.strict_claims,
                     otel=otel, runs_flag=runs, history=history)  # fmt: skip
            finally:
                session.store.close()  # an in-process caller (a test, a benchmark) runs many
        finally:
            store.close()


def earlier_turns(store, user: str | None) -> list:
    """The latest recorded conversation, as the REPL would carry it into the next message
    (orderbot.loop.conversation): only one of the same user, so that one customer's answers
    never become context for another, and only from a record that verifies."""
    record = store.load(store.resolve("last"))
    if record.state.user != user:
        who = record.state.user or t("header.anonymous")
        raise UsageError(t("error.continue_other_user", run_id=record.run_id, user=who))
    return Conversation.of(record.state.items).history()


def _run(
    question, settings, store, session, *, json_out, quiet, trace, no_facts, strict_claims, otel, runs_flag, history
):
    """The run itself, recorded in `store`; exits with its code. A paused run's hint names
    the team's queue when runs are shared (with --runs, without a password, if it was given)."""
    shown = store.where if runs_flag else None
    limits = session.limits(settings)
    llm = create(settings, session.shop)
    chosen = resolve_provider(settings)

    console = make_console()
    quiet = quiet and not json_out  # --json is one document whatever else was asked
    view = TransitionView(console, limits, enabled=not json_out and not trace and not quiet)
    views = [view]
    if trace and not json_out:
        views.append(TraceView(console, limits))
    state = RunState.start(question.strip(), user=settings.user, history=history)
    # With four eyes, or when the store names others as approvers, the run waits instead.
    may_ask = store.policy().asks_at_the_prompt(store.operator, four_eyes=settings.four_eyes)
    interactive = not json_out and console.is_terminal and sys.stdin.isatty() and may_ask
    approver = terminal_approver(view, console) if interactive else None
    where = endpoint(settings)
    watched = llm if quiet else view.watch(llm)  # the waiting line: only when the table is drawn live
    runner = Runner.for_session(session, watched, store, provider=chosen, base_url=where, otel=otel)

    if not json_out and not quiet:
        print_header(console, state, provider_text(settings.provider, chosen, llm.name, where))
    try:
        result = runner.start(state, limits, views=views, approver=approver)
    finally:
        view.close()
    code = run_exit_code(result, strict_claims=strict_claims)
    if json_out:
        doc = json_document(
            result,
            view.transitions,
            provider=chosen,
            model=llm.name,
            limits=limits,
            exit_code=code,
            trace=trace,
            facts=not no_facts,
        )
        doc["base_url"] = where
        doc["resume_command"] = resume_command(state, where, limits=limits, runs=shown, shared=store.shared)
        sys.stdout.write(json_text(doc) + "\n")
    elif quiet:
        print_answer_only(result)
    else:
        hint = resume_hint(state, where, limits=limits, runs=shown, shared=store.shared)
        print_outcome(console, result, resume_hint=hint, facts=not no_facts)
    raise typer.Exit(code)


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("ask", help=HELP, epilog=EPILOG)(ask)
