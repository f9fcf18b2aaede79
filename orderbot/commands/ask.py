"""`orderbot ask "..."`: one bounded run, shown as a table of transitions, then the answer."""

from __future__ import annotations

import os
import stat
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
    NoStream,
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
)
from orderbot.commands.run import Start, run
from orderbot.errors import UsageError
from orderbot.i18n import t

HELP = COMMAND_HELP["ask"]
EPILOG = 'Example: orderbot ask "请查询订单 ORD-1001 的状态。"'
MAX_QUESTION_CHARS = 4000


def ask(
    ctx: typer.Context,
    question: Annotated[
        str | None,
        typer.Argument(
            help="The question, in Chinese or English; - (or none, when standard input is not a terminal) reads "
            "it from standard input. Text piped in beside a question goes before it.",
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
    no_log: Annotated[
        bool,
        typer.Option(
            "--no-log",
            "-n",
            help="Keep no record of this run; a call that needs approval is refused, as there would be "
            "nothing to resume.",
        ),
    ] = False,
    trace: Trace = False,
    no_facts: NoFacts = False,
    no_stream: NoStream = False,
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
    cid: Annotated[
        str | None,
        typer.Option(
            "--cid",
            metavar="RUN",
            help="Continue the conversation of this run (a run id, or last), as --continue does the latest.",
            show_default=False,
        ),
    ] = None,
) -> None:
    with errors_to_exit_codes():
        if question is None and sys.stdin.isatty():
            raise UsageError(t("error.question_missing"))
        if question in (None, "-"):  # the question from standard input: `echo 查询 ORD-1001 | orderbot ask`
            question = sys.stdin.read(MAX_QUESTION_CHARS + 1)
        elif piped():
            # Text piped in beside a question (`cat mail.txt | orderbot ask "where are these orders?"`)
            # is part of it, first, as `llm` does: dropping it would answer another question.
            text = sys.stdin.read(MAX_QUESTION_CHARS + 1).strip()
            question = f"{text}\n\n{question}" if text else question
        if not question.strip():
            raise UsageError(t("error.question_empty"))
        if len(question) > MAX_QUESTION_CHARS:
            raise UsageError(t("error.question_too_long", chars=len(question), limit=MAX_QUESTION_CHARS))
    run(ctx.params, Start(question, continue_=continue_, conversation=cid))


def piped() -> bool:
    """Whether standard input is a pipe or a file (what a person sends on purpose), not a
    terminal, /dev/null or a socket an outer program left open (reading that would wait)."""
    if sys.stdin is None or sys.stdin.isatty():
        return False
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):  # no descriptor: a stream in memory (a test's, an embedding program's)
        return True
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("ask", help=HELP, epilog=EPILOG)(ask)
