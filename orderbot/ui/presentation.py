"""What the commands show around a run, shared by all of them: the model line of the
header, the resume hint and the approval prompt at the terminal.

render.py draws a run (its transitions, its outcome), trace.py its steps and run_list.py the
table of runs; this module holds the pieces several commands need besides, and no table, so
that a run that draws none (`ask -q`) needs no more of Rich than its console. Nothing here
decides anything about a run.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection

from rich.console import Console
from rich.markup import escape

from orderbot.i18n import t
from orderbot.loop.budget import Limits, continued_limits
from orderbot.loop.engine import StopReason
from orderbot.loop.limits import LIMIT_SPECS, LIMIT_STOPS
from orderbot.loop.state import Approver, PendingCall, RunState
from orderbot.text import is_postgres, limit_value
from orderbot.ui.describe import action_words
from orderbot.ui.escape import visible
from orderbot.ui.terminal import answering

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
