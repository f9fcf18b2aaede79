"""One path from what a run command parsed to its exit code, for ask, resume, `approvals
approve|reject`, the REPL, `mcp` and `eval`: the settings, the run store, who decides (four
eyes, the store's approvers), whether a person is asked at the prompt, the runner, the view,
the outcome and the exit code. A command parses its flags and says what it wants (`run`:
`Start` a new run, or `Resume` a stored one with a decision; `converse`: a conversation;
`serve`: a session whose calls another program proposes; `evaluate`: a suite of cases);
nothing else of a run is wired in a command.

Names, one per idea: a person *decides* a waiting call (approve, reject: `decision`); the run
store *claims* a decision, once, for the operator who made it (orderbot.runs); a run that
waits no longer was *settled*, by whoever decided first.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

import typer

from orderbot.commands.common import errors_to_exit_codes, open_store, run_exit_code, run_settings
from orderbot.commands.logs import setup_logging
from orderbot.errors import LoginRefused, OperatorRefused, UsageError
from orderbot.i18n import t
from orderbot.loop.conversation import Conversation
from orderbot.loop.limits import LIMIT_SPECS, StopReason
from orderbot.loop.model import Model
from orderbot.loop.state import RunState
from orderbot.models import FACTORIES, MCP, create, endpoint, resolve_provider
from orderbot.runner import Runner
from orderbot.runs.base import BaseRunStore
from orderbot.runs.sqlite import SqliteRunStore
from orderbot.settings import Settings, public_base_url
from orderbot.shops.session import Session, open_session
from orderbot.shops.source import public_source, source_identity
from orderbot.text import is_postgres
from orderbot.ui.answer import print_answer_only
from orderbot.ui.console import make_console
from orderbot.ui.describe import action_words
from orderbot.ui.document import Transitions, json_document
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.presentation import (
    LOGIN,
    provider_text,
    resume_command,
    resume_hint,
    terminal_approver,
    with_login,
)

if TYPE_CHECKING:
    from types import ModuleType


def _screen() -> ModuleType:
    """The views that draw a run (orderbot.ui.screen: the transitions table drawn live, the
    outcome's panels, the --trace panels, the REPL's step lines, the waiting line), imported
    only when a run is drawn: they bring Rich's live display, tables and panels, which
    `ask -q`, `--json` and the runs `orderbot mcp` serves never show. The one lazy import
    here (docs/architecture.md, the lazy boundaries)."""
    from orderbot.ui import screen

    return screen


class Start(NamedTuple):
    """A new run of `question`; `continue_` carries the latest conversation of the same user,
    `conversation` the one of the run it names (--cid)."""

    question: str
    continue_: bool = False
    conversation: str | None = None


class Resume(NamedTuple):
    """A stored run continued: `decision` approves (True) or rejects (False, with `reason`)
    the call it waits for; None continues a run stopped at a limit. `for_customer`: the
    session acts for the run's own customer (the approval queue), and a run settled
    already names who settled it."""

    run_id: str
    decision: bool | None = None
    reason: str | None = None
    for_customer: bool = False


class Shown(NamedTuple):
    """How the run is shown: what the command's flags said beyond the settings."""

    watch: bool = True  # the waiting line while the model works, when the table is drawn live
    answer_only: bool = False  # ask --quiet: the answer, or why there is none on stderr
    otel: bool = False
    runs_flag: str | None = None  # --runs as typed: the queue's hint names it (without a password)
    extra: Mapping[str, object] = MappingProxyType({})  # what --json adds for this command


def run(flags: Mapping[str, object], wanted: Start | Resume) -> None:
    """Everything after the flags: exits with the run's code (or an error's, in one sentence)."""
    with errors_to_exit_codes():
        settings = run_settings(flags)
        setup_logging(settings.resolved_state_dir())
        quiet = bool(flags.get("quiet")) and not settings.json_output  # --json is one document whatever else
        shown = Shown(watch=not quiet, answer_only=quiet, otel=bool(flags.get("otel")), runs_flag=flags.get("runs"))
        store = open_store(settings)  # first: a run store that cannot be reached is one sentence, no run
        try:
            if isinstance(wanted, Start):
                code = _start(wanted, settings, store, shown)
            else:
                code = _resume(wanted, settings, store, shown, flags)
        finally:
            store.close()
        raise typer.Exit(code)  # inside: a run that SIGTERM stopped exits 143, not its own 130


def converse(flags: Mapping[str, object], talk: Callable[[Settings, Session, Model, BaseRunStore], int]) -> None:
    """The REPL's path: its settings, its run store (ready for records: each message is a
    recorded run), its session and model, then the conversation (`talk`, each message one
    run through message_run, its runner from conversation_runner); exits with its code."""
    with errors_to_exit_codes():
        with _recorded_session(flags) as (settings, store, session):
            code = talk(settings, session, create(settings, session.shop), store)
        raise typer.Exit(code)


@contextlib.contextmanager
def _recorded_session(flags: Mapping[str, object]) -> Iterator[tuple[Settings, BaseRunStore, Session]]:
    """Settings, the log, a run store ready for records (one that cannot be reached is one
    sentence before anything runs) and the session; both stores closed at the end."""
    settings = run_settings(flags)
    setup_logging(settings.resolved_state_dir())
    store = open_store(settings)
    try:
        store.prepare()
        session = open_session(settings)
        try:
            yield settings, store, session
        finally:
            session.store.close()
    finally:
        store.close()


def conversation_runner(
    session: Session, llm: Model, store: BaseRunStore, settings: Settings, console, *, interactive: bool,
    otel: bool = False,
) -> Runner:  # fmt: skip
    """The REPL's runner: in a terminal (`interactive`), the model's requests shown in the
    same waiting line as ask's while it works (and the answer as it streams in); piped, the
    model as it is."""
    if interactive:
        screen = _screen()
        llm = screen.watch(llm, screen.WaitingLine(console))
    return runner_for(session, llm, store, settings, provider=resolve_provider(settings), otel=otel)


def serve(flags: Mapping[str, object], body: Callable[[Settings, BaseRunStore, Session], None]) -> None:
    """The path of a session whose calls another program proposes (`orderbot mcp`: an agent
    host's model): its settings, its run store, ready for records before anything is served
    (every call is a recorded run), and its session; `body` serves them until the other side
    goes. Its runner is runner_for's with the host's model, its person asked only as may_ask
    allows."""
    with errors_to_exit_codes(), _recorded_session(flags) as (settings, store, session):
        body(settings, store, session)


CASE_RUNS_KEPT = 10  # records in an eval case's scratch store: enough to look at, never the real store


def evaluate(flags: Mapping[str, object], score: Callable[[Settings, Callable[..., Runner]], int]) -> None:
    """`orderbot eval`'s path: its settings (--orders names the suite's orders, not a setting:
    the command leaves it out), and `score(settings, case_runner)` runs the suite and says the
    exit code. `case_runner(session, model, case_settings)` is a case's runner, recorded in a
    scratch store in the case's state directory; nobody is asked there, so a side effect
    waits for approval as the case expects."""
    with errors_to_exit_codes():
        settings = run_settings(flags)
        setup_logging(settings.resolved_state_dir())  # model retries and failing tools, as for ask
        provider, otel = resolve_provider(settings), bool(flags.get("otel"))

        def case_runner(session: Session, llm: Model, case_settings: Settings) -> Runner:
            store = SqliteRunStore.in_state_dir(case_settings.resolved_state_dir(), keep=CASE_RUNS_KEPT)
            return runner_for(session, llm, store, case_settings, provider=provider, otel=otel)

        raise typer.Exit(score(settings, case_runner))


def may_ask(settings: Settings, store: BaseRunStore) -> bool:
    """Whether this operator may be asked at the prompt: not with four eyes, nor when the
    store names others as approvers (the run waits in the queue instead)."""
    return may_ask_as(settings, store)(None)


def may_ask_as(settings: Settings, store: BaseRunStore) -> Callable[[str | None], bool]:
    """`may_ask` for a session that also acts for another operator (an MCP client whose
    token names one): both this operator and that one must be allowed. The store's rules
    are read once, now."""
    policy = store.policy()

    def allowed(operator: str | None) -> bool:
        names = [store.operator, *([operator] if operator is not None else [])]
        return all(policy.asks_at_the_prompt(name, four_eyes=settings.four_eyes) for name in names)

    return allowed


def runner_for(session, llm, store: BaseRunStore, settings: Settings, *, provider: str, otel: bool = False) -> Runner:
    """The runner of a command's session, recorded in `store`, sending to the settings'
    server; an MCP host's model is reached through the session's client, no server."""
    where = None if provider == MCP else endpoint(settings)
    return Runner.for_session(session, llm, store, provider=provider, base_url=where, otel=otel)


def _start(wanted: Start, settings: Settings, store: BaseRunStore, shown: Shown) -> int:
    if not settings.no_log:
        store.prepare()  # a state directory that cannot take the record: one sentence, before anything is shown
    session = open_session(settings)
    try:
        if wanted.conversation is not None:
            history = earlier_turns(store, settings.user, wanted.conversation)
        else:
            history = earlier_turns(store, settings.user) if wanted.continue_ else []
        state = RunState.start(wanted.question.strip(), user=settings.user, history=history)
        llm, chosen = create(settings, session.shop), resolve_provider(settings)
        note = provider_text(settings.provider, chosen, llm.name, endpoint(settings))

        def begin(runner, limits, views, approver):
            if settings.no_log:
                return runner.unrecorded(state, limits, views=views, approver=_refuse_unrecorded)
            return runner.start(state, limits, views=views, approver=approver)

        return _go(settings, store, session, llm, chosen, state, note, shown, begin)
    finally:
        session.store.close()  # an in-process caller (a test, a benchmark) runs many


def _resume(wanted: Resume, settings: Settings, store: BaseRunStore, shown: Shown, flags: Mapping) -> int:
    from orderbot.runs.resume import check_decider, check_resume  # loaded when a run resumes, not by every ask

    run_id = store.resolve(wanted.run_id)
    decision = wanted.decision
    record = store.load(run_id)
    if wanted.for_customer:
        _settled_already(record, decision)
        customer = None if record.state.signed_in else record.state.user
        settings = settings.model_copy(update={"user": customer})
    settings, was = _defaults_from_record(
        settings, record, explicit_orders=flags.get("orders") is not None, base_url_flag=flags.get("base_url")
    )
    policy = store.policy()
    four_eyes = settings.four_eyes or policy.four_eyes
    check_decider(record, operator=store.operator, approve=decision, four_eyes=four_eyes, approvers=policy.approvers)
    session = _resumed_session(settings, store, explicit_orders=flags.get("orders") is not None)
    try:
        check_resume(
            record,
            session.toolbox,
            user=settings.user,
            approve=decision,
            now=time.time(),
            ttl_hours=settings.approval_ttl_hours,
        )
        llm, chosen = _model_for(record, settings, session.shop)
        note = (
            t("header.resumed")
            + " · "
            + provider_text(settings.provider, chosen, llm.name, endpoint(settings), was=was)
        )
        extra = {"resumed": True} | ({"operator": store.operator} if store.shared else {})

        def begin(runner, limits, views, approver):
            return runner.resume(record, limits, approve=decision, reason=wanted.reason, views=views, approver=approver)

        resumed = Shown(watch=False, otel=shown.otel, runs_flag=shown.runs_flag, extra=extra)
        return _go(settings, store, session, llm, chosen, record.state, note, resumed, begin)
    finally:
        session.store.close()


def _go(settings, store, session, llm, chosen, state, note, shown: Shown, begin) -> int:
    """The run itself (`begin` starts or resumes it on the runner), shown as the settings ask
    (tables, the trace or one JSON document), a person asked at the prompt only where that
    is allowed; the run's exit code."""
    json_out, trace, facts = settings.json_output, settings.trace, not settings.no_facts
    limits = session.limits(settings)
    console = make_console()
    drawn = not json_out and not shown.answer_only  # a header, the run, its outcome (else: JSON, or the answer)
    table = drawn and not trace  # the transitions table; --trace draws its panels instead (with -q too)
    screen = _screen() if table or (trace and not json_out) else None
    view = screen.TransitionView(console, limits) if table else Transitions()  # Transitions: the rows --json prints
    views = [view, *([screen.TraceView(console, limits)] if trace and screen is not None else [])]
    mine = may_ask(settings, store)  # else a pause is for another operator to approve, at their desk
    interactive = not json_out and console.is_terminal and sys.stdin.isatty() and mine
    approver = terminal_approver(view, console) if interactive else None
    watched = view.watch(llm) if table and shown.watch else llm  # the waiting line: only under a table drawn live
    runner = runner_for(session, watched, store, settings, provider=chosen, otel=shown.otel)
    if drawn:
        screen.print_header(console, state, note)
    try:
        result = begin(runner, limits, views, approver)
    finally:
        if table:
            view.close()
    code = run_exit_code(result, strict_claims=settings.strict_claims)
    where = endpoint(settings)
    queue = store.where if shown.runs_flag else None  # --runs in the queue's hint, without a password
    kept = not settings.no_log  # a run with no record has nothing to resume
    elsewhere = result.state.stop_reason is StopReason.AWAITING_APPROVAL and not mine
    hinted = {"runs": queue, "shared": store.shared, "orders": session.source.shown, "elsewhere": elsewhere}
    hinted["given"] = typed_limits(settings)
    if json_out:
        doc = json_document(
            result,
            view.transitions,
            provider=chosen,
            model=llm.name,
            limits=limits,
            exit_code=code,
            trace=trace,
            facts=facts,
        )
        doc |= shown.extra
        doc["base_url"] = where
        doc["resume_command"] = resume_command(result.state, where, limits=limits, **hinted) if kept else None
        sys.stdout.write(json_text(doc) + "\n")
    elif shown.answer_only:
        print_answer_only(result, elsewhere=elsewhere)
    else:
        hint = resume_hint(result.state, where, limits=limits, **hinted) if kept else None
        screen.print_outcome(console, result, resume_hint=hint, facts=facts, elsewhere=elsewhere)
    return code


def typed_limits(settings: Settings) -> list[str]:
    """The limits this command line set: a resume hint repeats them, since a resume in the
    same shell takes the others from the same environment as the run did."""
    return [spec.name for spec in LIMIT_SPECS if settings.typed(spec.name)]


def message_run(runner, state, limits, *, console, trace, ask_person, facts, base_url, record=None):
    """One message of the REPL: its run (a new one, or `record` continued), shown as one
    line per step or as the trace, a person asked at the prompt when `ask_person` (see
    may_ask); the run's record."""
    screen = _screen()
    view = (screen.TraceView if trace else screen.StepLines)(console, limits)
    approver = terminal_approver(view, console) if ask_person else None
    if record is None:
        result = runner.start(state, limits, kind="repl", views=[view], approver=approver)
    else:
        result = runner.resume(record, limits, views=[view], approver=approver)
    screen.print_outcome(console, result, resume_hint=resume_hint(state, base_url), facts=facts)
    return result.record


def earlier_turns(store: BaseRunStore, user: str | None, run_id: str | None = None) -> list:
    """The conversation of run `run_id` (None: the latest), as the REPL would carry it into
    the next message (orderbot.loop.conversation): only one of the same user, so that one
    customer's answers never become context for another, and only from a record that
    verifies."""
    record = store.load(store.resolve(run_id or "last"))
    if record.state.user != user:
        who = record.state.user or t("header.anonymous")
        said = "error.continue_other_user" if run_id is None else "error.cid_other_user"
        raise UsageError(t(said, run_id=record.run_id, user=who))
    return Conversation.of(record.state.items).history()


def _refuse_unrecorded(pending) -> bool:
    """--no-log: a call that needs approval is refused before it runs; without a record a
    pause could never be resumed, and a yes at the prompt could not be audited."""
    raise OperatorRefused("error.no_log_side_effect", description=action_words(pending.description))


def _model_for(record, settings, shop):
    """The model a resumed run continues with, and its provider's name. A recorded MCP
    session's client has gone: its model answers at once, so deciding one of its calls
    runs that call and nothing else (orderbot.models.mcp_client)."""
    if record.provider == MCP:
        from orderbot.models.mcp_client import ClientModel

        return ClientModel.ended(), MCP
    return create(settings, shop), resolve_provider(settings)


def _resumed_session(settings: Settings, store: BaseRunStore, *, explicit_orders: bool) -> Session:
    """The session of a resumed run. Without --orders its orders are the record's URL, which
    names the login of whoever started the run: one the server refuses to this operator is
    told to pass their own (named, when the run store's login is this operator's)."""
    try:
        return open_session(settings)
    except LoginRefused as refused:
        if explicit_orders:
            raise
        login = store.operator if is_postgres(store.where) else LOGIN
        orders = with_login(public_source(str(settings.orders)), login)
        raise LoginRefused("approvals.orders_own_login", error=refused.phrase, orders=orders) from None


def _settled_already(record, decision: bool | None) -> None:
    """A run the queue no longer waits for was settled by someone: say who, not only that
    there is nothing to resume."""
    from orderbot.runs.resume import settled_first

    waits = record.state.stop_reason is StopReason.AWAITING_APPROVAL
    if decision is not None and not waits and any(d.approved is not None for d in record.decisions.values()):
        raise OperatorRefused(settled_first(record))


def _defaults_from_record(settings, record, *, explicit_orders: bool, base_url_flag: str | None = None):
    """Unless told otherwise, a run continues with the orders, the model and the server it
    used. The orders are the ones the run recorded, checked to be the same ones
    (orderbot.runs.resume.recorded_orders); only --orders on this command line names others, and
    ORDERBOT_ORDERS counts only when it names those same orders (a database URL was
    recorded without its password: libpq finds it in PGPASSWORD or ~/.pgpass, or give the
    whole URL again with --orders / ORDERBOT_ORDERS). The server only changes with
    --base-url on this command line (an environment variable is not enough: order data
    must not go elsewhere by accident). Returns the settings and, when --base-url sends
    the run somewhere new, where it went before."""
    from orderbot.runs.resume import recorded_orders

    update: dict = {}
    recorded = None if explicit_orders else recorded_orders(record)
    if recorded is not None:
        same = settings.orders is not None and source_identity(settings.orders) == recorded
        update["orders"] = settings.orders if same else recorded
    # A recorded MCP session goes on with its own model (see _model_for), not with one of the factories'.
    own = record.provider in FACTORIES or record.provider == MCP
    if "provider" not in settings.model_fields_set and own:
        update["provider"] = record.provider
        if "model" not in settings.model_fields_set and record.provider not in ("offline", "scripted", MCP):
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
