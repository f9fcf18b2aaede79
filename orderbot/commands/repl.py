"""`orderbot repl`: a conversation in which each message is one bounded run.

The loop reads a line, hands it to the engine with the earlier turns as history, and
prints what the engine's observers and the render functions produce. Everything else
lives elsewhere: carrying context and parsing /limits in orderbot.loop.conversation, the
per-step views in orderbot.ui.trace, line editing in orderbot.ui.terminal, the approval
prompt in orderbot.ui.presentation, the wiring of each run in orderbot.runner.
"""

from __future__ import annotations

import signal
import sys
from itertools import islice

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.ask import MAX_QUESTION_CHARS
from orderbot.commands.common import (
    EXIT_CODES,
    BaseUrl,
    MaxCallsPerStep,
    MaxSteps,
    MaxToolCalls,
    Model,
    NoFacts,
    NoStream,
    Orders,
    Otel,
    Provider,
    Runs,
    StateDir,
    Timeout,
    Trace,
    User,
)
from orderbot.commands.run import conversation_runner, converse, may_ask, message_run
from orderbot.errors import ConfigError, OrderbotError, Terminated
from orderbot.i18n import language, say, t
from orderbot.loop.budget import continued_limits
from orderbot.loop.conversation import Conversation, format_limits_short, parse_limits
from orderbot.loop.limits import LIMIT_STOPS, StopReason
from orderbot.loop.state import RunState
from orderbot.models import endpoint, resolve_provider
from orderbot.settings import USER_ID
from orderbot.ui.console import make_console
from orderbot.ui.layout import flow_dots, print_whole
from orderbot.ui.presentation import provider_text
from orderbot.ui.run_list import format_runs
from orderbot.ui.terminal import keys_held, line_history, read_key, read_line
from orderbot.ui.trace import format_limits

HELP = COMMAND_HELP["repl"]
EPILOG = "Example: orderbot repl --user C001, then 查询 ORD-1001 · 那 ORD-1002 呢？ · 取消它 · Ctrl-D to leave."
HISTORY_FILE = "repl_history"
RUNS_SHOWN = 10
# A line that leaves, as in a shell, Python or vi: never sent to the model as a question.
LEAVE = frozenset({"exit", "quit", ":q", "/exit", "/quit"})
# What a shell user types for a command of the REPL's own: never sent as a question either.
SHELL_WORDS = {"help": "/help", "clear": "/clear"}


def repl(
    ctx: typer.Context,
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
    trace: Trace = False,
    no_facts: NoFacts = False,
    no_stream: NoStream = False,
    otel: Otel = False,
) -> None:
    def talk(settings, session, llm, store) -> int:
        return Repl(settings, session, llm, store, trace=settings.trace, facts=not settings.no_facts, otel=otel).loop()

    converse(ctx.params, talk)


class Repl:
    def __init__(self, settings, session, llm, store, *, trace: bool, facts: bool = True, otel: bool = False) -> None:

        self.settings, self.session, self.llm = settings, session, llm
        self.limits = session.limits(settings)
        self.user: str | None = settings.user
        self.signed_in = False  # the user was named by a sign-in lookup: one customer per conversation
        self.trace = trace
        self.facts = facts
        self.conversation = Conversation()
        self.provider = resolve_provider(settings)
        self.store = store  # each run is recorded
        self.may_ask = may_ask(settings, self.store)

        self.base_url = endpoint(settings)
        self.console = make_console()
        self.interactive = self.console.is_terminal and sys.stdin.isatty()
        self.runner = conversation_runner(
            session, llm, store, settings, self.console, interactive=self.interactive, otel=otel
        )
        self.last_stop = None  # how the latest message's run ended
        self.terminated = False  # a signal stopped it: the REPL ends as the run did
        self.run_ids: set[str] = set()  # the runs of this session, for /runs

    # ---- the loop -------------------------------------------------------------------

    def loop(self) -> int:
        """Read and run messages until the person leaves; the exit code. Piped, a session whose
        last message paused for approval exits 4, as `ask` does: a script learns nothing ran."""

        if self.interactive:
            # Started from a shell that ignores Ctrl-C (a background job inherits that), the
            # conversation still needs it: it cancels a run, and leaves at an empty prompt.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        chosen = provider_text(self.settings.provider, self.provider, self.llm.name, self.base_url)
        banner = t("repl.banner", provider=chosen, user=self.user or t("header.anonymous"))
        for line in (banner, t("repl.banner_help", limits=format_limits(self.limits))):
            self.console.print(flow_dots(self.console, line), soft_wrap=True)
        with line_history(self.settings.resolved_state_dir() / HISTORY_FILE, enabled=self.interactive):
            while True:
                line = read_line(f"orderbot {self.user}> " if self.user else "orderbot> ", interactive=self.interactive)
                line = SHELL_WORDS.get((line or "").strip().lower(), line)
                if line is None or line.strip().lower() in LEAVE or line.startswith("/") and not self.command(line):
                    return self.exit_code()
                if line and not line.startswith("/"):
                    self.turn(line)
                if self.terminated:  # SIGTERM (kill, a closing terminal) ends the conversation too
                    return self.exit_code()

    def exit_code(self) -> int:

        paused = self.last_stop is StopReason.AWAITING_APPROVAL
        return EXIT_CODES[StopReason.AWAITING_APPROVAL] if paused and not self.interactive else 0

    def turn(self, question: str) -> None:

        if len(question) > MAX_QUESTION_CHARS:  # never sent to the model, never echoed whole
            self.say(t("error.question_too_long", chars=len(question), limit=MAX_QUESTION_CHARS))
            return

        history = self.conversation.history()
        state = RunState.start(question, user=self.user, history=history)
        state.signed_in = self.signed_in
        try:
            limits = self.limits
            record = self.run(state, limits)
            while state.stop_reason in LIMIT_STOPS:
                limits, was = continued_limits(limits, state), limits  # the rule a resume hint follows too
                if not self.offer_more(limits, was):
                    break
                self.run(state, limits, record)  # the same run, continued
        except Terminated:  # between runs or while printing: the command ends as terminated
            raise
        except KeyboardInterrupt:  # between runs or while printing: the engine had already stopped
            self.say(t("repl.cancelled"))
        except OrderbotError as exc:  # e.g. the run record cannot be written: say so, keep the session
            self.say(t("error.prefix", error=exc))
        self.conversation.add(state.items[len(history) :])
        self.last_stop = state.stop_reason
        self.terminated = (state.stop_message or {}).get("id") == "detail.terminated"
        self.run_ids.add(state.run_id)
        if state.signed_in:  # the customer a lookup found stays the conversation's
            self.user, self.signed_in = state.user, True

    def run(self, state, limits, record=None):
        """One recorded run over `state`; `record` continues an earlier one."""

        ask_person = self.interactive and self.may_ask
        shown = {"console": self.console, "trace": self.trace, "facts": self.facts, "base_url": self.base_url}
        with keys_held(enabled=self.interactive):  # typed during the run: not echoed, then discarded
            return message_run(self.runner, state, limits, ask_person=ask_person, record=record, **shown)

    def offer_more(self, limits, was) -> bool:
        """One keypress: c continues the stopped run with `limits` (raised from `was`)."""

        if not self.interactive:
            return False
        key = read_key(lambda: self.say(t("repl.more", more=format_limits_short(limits, since=was))))
        self.console.print()
        return key.lower() == "c"

    # ---- slash commands -------------------------------------------------------------

    def command(self, line: str) -> bool:
        """Run one slash command; False means leave."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        handler = {
            "/help": self.help,
            "/clear": self.clear,
            "/trace": self.set_trace,
            "/limits": self.set_limits,
            "/user": self.set_user,
            "/reset": self.reset,
            "/runs": self.show_runs,
        }.get(name.lower())
        if handler is None:
            self.say(t("repl.unknown", name=name))
        else:
            handler(arg)
        return True

    def help(self, arg: str) -> None:
        self.say(t("repl.help"))

    def clear(self, arg: str) -> None:
        if self.console.is_terminal:  # piped, there is no screen: no escape codes in a file
            self.console.clear()

    def set_trace(self, arg: str) -> None:
        if arg.lower() not in ("on", "off"):
            self.say(t("repl.trace_usage", state="on" if self.trace else "off"))
            return
        self.trace = arg.lower() == "on"
        self.say(t("repl.trace_set", state=arg.lower()))

    def set_limits(self, arg: str) -> None:

        if arg:
            try:
                self.limits = parse_limits(arg, self.limits)
            except ConfigError as exc:
                error = say(exc)
                if language() == "en":  # a clause in English; a sentence starts with a capital
                    error = error[:1].upper() + error[1:]
                self.say(t("repl.limits_unchanged", error=error))
                return
        self.say(t("repl.limits", limits=format_limits(self.limits)))

    def set_user(self, arg: str) -> None:
        if not arg:
            self.say(t("repl.user", user=self.user or t("header.anonymous")))
            return

        if not USER_ID.fullmatch(arg):
            self.say(t("repl.bad_user"))
            return
        # What one customer was told must not become context for another.
        self.user, self.signed_in = arg, False
        self.conversation.reset()
        self.say(t("repl.user_switched", user=arg))

    def reset(self, arg: str) -> None:
        self.conversation.reset()
        self.say(t("repl.reset"))

    def show_runs(self, arg: str) -> None:
        """This session's runs, newest first; `/runs all` every run in the store."""
        if arg.lower() not in ("", "all"):
            self.say(t("repl.runs_usage"))
            return
        every = arg.lower() == "all"
        rows = list(islice((r for r in self.store.summaries() if every or r.run_id in self.run_ids), RUNS_SHOWN))
        if not rows:
            self.say(t("runs.none", dir=self.store.where) if every else t("repl.no_runs_yet"))
            return
        print_whole(self.console, format_runs(rows, plain=not self.console.is_terminal, width=self.console.width))
        self.say(t("repl.runs_hint"))

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("repl", help=HELP, epilog=EPILOG)(repl)
