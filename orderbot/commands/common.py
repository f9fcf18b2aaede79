"""Options shared by several commands, and the one place errors become exit codes.

Kept free of heavy imports: these run when `orderbot --help` builds its help text.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orderbot.errors import ExitCode, OrderbotError, Phrase, Terminated, UsageError
from orderbot.i18n import say, t
from orderbot.loop.limits import SPEC_OF, StopReason
from orderbot.models import FACTORIES
from orderbot.runs.stores import open_run_store
from orderbot.settings import Settings, load_settings
from orderbot.text import cut
from orderbot.ui.escape import visible
from orderbot.ui.terminal import end_quietly_on_closed_pipe

if TYPE_CHECKING:
    from orderbot.runner import RunResult
    from orderbot.runs.base import BaseRunStore


# How each way a run stops becomes the exit code; errors before a run are 1, bad input 6.
EXIT_CODES: dict[StopReason, int] = {
    StopReason.ANSWERED: ExitCode.OK,
    StopReason.STEP_LIMIT: ExitCode.LIMIT,
    StopReason.TIME_LIMIT: ExitCode.LIMIT,
    StopReason.TOOL_CALL_LIMIT: ExitCode.LIMIT,
    StopReason.RESPONSE_TOO_LARGE: ExitCode.LIMIT,
    StopReason.RESPONSE_TRUNCATED: ExitCode.LIMIT,
    StopReason.AWAITING_APPROVAL: ExitCode.AWAITING_APPROVAL,
    StopReason.MODEL_ERROR: ExitCode.MODEL_ERROR,
    StopReason.TRANSFERRED: ExitCode.TRANSFERRED,
    StopReason.CANCELLED: ExitCode.CANCELLED,
}


def run_exit_code(result: RunResult, *, strict_claims: bool = False) -> int:
    """A finished run's exit code; with --strict-claims an answer with unsupported claims
    (orderbot.answers.claims) exits 7 instead of 0."""
    code = EXIT_CODES[result.state.stop_reason]
    if strict_claims and code == 0 and result.claims:
        return ExitCode.STRICT_CLAIMS
    return code


def _limit_option(name: str):
    """A limit's option, from the one table of limits (orderbot.loop.limits)."""
    limit = SPEC_OF[name]
    return Annotated[
        limit.type | None,
        typer.Option(limit.flag, help=f"{limit.help[:-1]} \\[default: {limit.default:g}].", show_default=False),
    ]


MaxSteps = _limit_option("max_steps")
Timeout = _limit_option("timeout")
MaxToolCalls = _limit_option("max_tool_calls")
MaxCallsPerStep = _limit_option("max_calls_per_step")
Orders = Annotated[
    str | None,
    typer.Option(
        "--orders",
        "-o",
        help="Orders: a JSON file, sqlite:///shop.db or postgresql://user@host/db "
        "\\[default: $ORDERBOT_ORDERS, else ./orders.json, else the bundled sample, read-only].",
        show_default=False,
    ),
]
User = Annotated[
    str | None,
    typer.Option(
        "--user",
        "-u",
        help="Who is asking (a customer id such as C001) \\[default: $ORDERBOT_USER, else anonymous].",
        show_default=False,
    ),
]


def open_store(settings: Settings) -> BaseRunStore:
    """The run store the settings name (orderbot.runs.stores.open_run_store). When this
    process took over an earlier orderbot's JSON records, it says so on stderr: what came
    over, where the old files went, and each file or line left out, with why."""
    store = open_run_store(settings)
    report = store.took_over
    if report is not None:
        aside = report.aside or store.where
        lines = [Phrase("takeover.done", {"db": store.where, "runs": report.runs, "entries": report.entries,
                                          "aside": aside})]  # fmt: skip
        lines += [Phrase("takeover.left", {"what": what, "why": why, "aside": aside}) for what, why in report.left]
        for line in lines:
            print(t("error.prefix", error=cut(visible(say(line), one_line=True), MAX_ERROR_LINE)), file=sys.stderr)
    return store


def complete_provider(incomplete: str) -> list[str]:
    """Shell completion of --provider: the registered providers, and auto."""

    return [name for name in ("auto", *FACTORIES) if name.startswith(incomplete)]


def complete_run_id(incomplete: str) -> list[str]:
    """Shell completion of a run id: `last`, then the recorded runs, newest first."""
    try:
        store = open_run_store(load_settings())
        try:
            ids = store.ids(50)
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - completion must never print a traceback into the shell
        ids = []
    return [i for i in ("last", *ids) if i.startswith(incomplete)][:50]


RunId = Annotated[
    str,
    typer.Argument(
        help="The run id, a unique prefix of it (6 characters or more), or last for the newest run.",
        show_default=False,
        autocompletion=complete_run_id,
    ),
]
Provider = Annotated[
    str | None,
    typer.Option(
        "--provider",
        autocompletion=complete_provider,
        help="auto, offline, openai (Responses API) or chat (Chat Completions) "
        "\\[default: auto: chat when a base URL is set, else openai when OPENAI_API_KEY is set, else offline].",
        show_default=False,
    ),
]
Model = Annotated[
    str | None,
    typer.Option("--model", "-m", help="Model name \\[default: $MODEL_NAME, else gpt-4o-mini].", show_default=False),
]
BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible API base URL, e.g. http://127.0.0.1:11434/v1 \\[default: $OPENAI_BASE_URL].",
        show_default=False,
    ),
]
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Where run records and logs are kept \\[default: $ORDERBOT_STATE_DIR, else $XDG_STATE_HOME/orderbot].",
        show_default=False,
    ),
]
Runs = Annotated[
    str | None,
    typer.Option(
        "--runs",
        help="Where runs, approvals and the audit log are kept: sqlite:///runs.db or postgresql://role@host/db "
        "\\[default: $ORDERBOT_RUNS, else the state directory].",
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option("--json", "-j", help="Print one JSON document instead of tables.")]
NoFacts = Annotated[
    bool,
    typer.Option("--no-facts", help="Leave out the facts panel (what the tools returned) under the answer."),
]
StrictClaims = Annotated[
    bool,
    typer.Option(
        "--strict-claims",
        help="Exit 7 when the answer makes a claim the tools did not support (it is flagged either way).",
    ),
]
NoStream = Annotated[
    bool,
    typer.Option("--no-stream", help="Ask for each reply whole instead of streamed (the openai and chat providers)."),
]
Otel = Annotated[
    bool,
    typer.Option(
        "--otel",
        help="Export each run as an OpenTelemetry trace (needs orderbot\\[otel]; on by itself when "
        "OTEL_EXPORTER_OTLP_ENDPOINT is set).",
    ),
]
Trace = Annotated[
    bool,
    typer.Option(
        "--trace", help="Show the full debugging view: what was sent, proposed, decided and returned, per step."
    ),
]


# The flags a run command (ask, repl, resume, approvals approve|reject) hands to the
# settings, by parameter name; a command leaves out the ones it does not have.
RUN_SETTINGS = (
    "max_steps",
    "timeout",
    "max_tool_calls",
    "max_calls_per_step",
    "orders",
    "user",
    "provider",
    "model",
    "base_url",
    "state_dir",
    "runs",
)


# A run command's switches, by parameter name, to the setting each turns on (ORDERBOT_JSON=1
# is --json): a switch given is on; one not given leaves the setting as the environment has it.
RUN_SWITCHES = {
    "json_out": "json_output",
    "trace": "trace",
    "no_facts": "no_facts",
    "strict_claims": "strict_claims",
    "no_log": "no_log",
    "no_stream": "no_stream",
}


def run_settings(flags: Mapping[str, object]) -> Settings:
    """The settings of a run from a command's flags (its `ctx.params`: every parameter by
    name, as Typer parsed it), so that each run command reads them the same way."""
    values = {name: flags[name] for name in RUN_SETTINGS if name in flags}
    values |= {setting: True for flag, setting in RUN_SWITCHES.items() if flags.get(flag)}
    return load_settings(**values)


@contextmanager
def errors_to_exit_codes() -> Iterator[None]:
    """OrderbotError -> one sentence on stderr and the exit code its class carries
    (orderbot.errors); never a traceback."""

    previous = _terminate_like_ctrl_c()
    try:
        yield
    except typer.Exit as done:
        if _terminated:  # the run stopped as cancelled and its record is saved: say why it ended
            raise typer.Exit(ExitCode.TERMINATED) from None
        raise done
    except KeyboardInterrupt:
        if _terminated:
            raise typer.Exit(ExitCode.TERMINATED) from None
        raise
    except BrokenPipeError:
        end_quietly_on_closed_pipe()
    except UsageError:
        raise  # the command line says it in one line, with a hint to the command's help (orderbot.cli)
    except OrderbotError as exc:
        print(error_line(exc), file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


_terminated = False


def _terminate_like_ctrl_c():
    """SIGTERM (a service manager, `kill`, a closing terminal) stops a run like Ctrl-C: the
    engine sees KeyboardInterrupt, the run stops as `cancelled` with its record saved and
    resumable, and the command exits 143. A side effect already noted `executing` is never
    run again (orderbot.runs.resume). Returns the handler it replaced, None when it cannot
    install one (not the main thread)."""
    global _terminated
    _terminated = False

    def on_sigterm(signum, frame):
        global _terminated
        _terminated = True
        raise Terminated

    try:
        return signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # signals can only be handled in the main thread
        return None


MAX_ERROR_LINE = 2000  # characters: an error quoting a huge input still fits a screen


def error_line(exc: BaseException) -> str:
    """The one line an error prints: it may quote outside text (an id, a file's field),
    so it is bounded and goes through orderbot.ui.escape.visible."""

    return t("error.prefix", error=cut(visible(say(exc), one_line=True), MAX_ERROR_LINE))
