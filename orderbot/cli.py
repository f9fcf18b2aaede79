"""The command line: a thin Typer app. Each command lives in orderbot/commands/.

Only typer is imported here; every command imports what it needs when it runs, so
`orderbot --help` stays fast and never imports the openai SDK.

Conventions kept here for every command: `orderbot` alone prints help and exits 0; `-V` is
`--version`; NO_COLOR=1 means no colour or style anywhere, help included; flags show no
`<bool>` as if they took a value; a closed pipe (`orderbot ask ... | head -1`) ends quietly
with exit code 141 (128 + SIGPIPE, as a shell reports for any program the pipe stopped),
never 1, which `replay` uses for "differs".
"""

from __future__ import annotations

import os
import sys

import typer
from typer.core import TyperGroup, TyperOption

from orderbot.commands import ask, doctor, evaluation, orders, repl, replay, resume, runs
from orderbot.ui.terminal import end_quietly_on_closed_pipe

# The order a newcomer needs the commands in (Typer would list sub-apps such as `runs` last).
COMMAND_ORDER = ("ask", "repl", "runs", "resume", "replay", "orders", "eval", "doctor")


class OrderedGroup(TyperGroup):
    def list_commands(self, ctx) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: COMMAND_ORDER.index(n) if n in COMMAND_ORDER else len(COMMAND_ORDER))


EPILOG = (
    'Examples: orderbot ask "查询 ORD-1001" · orderbot repl --user C001 · orderbot runs · '
    "orderbot resume last --approve · orderbot doctor --ping"
)


def _no_type_for_flags() -> None:
    """Typer 0.2x labels every option with its type, flags included (`--json <bool>`), as
    if a flag took a value. A flag takes none: show no type for it."""
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "orderbot_flags", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.orderbot_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


def _no_colour_in_help() -> None:
    """Rich drops colours for NO_COLOR but keeps bold and dim; Typer's help console then
    still styles its output. NO_COLOR means no styling at all."""
    if os.environ.get("NO_COLOR", ""):
        import typer.rich_utils

        typer.rich_utils.COLOR_SYSTEM = None
        typer.rich_utils.FORCE_TERMINAL = False


_no_type_for_flags()


def _help_asked(args: list[str]) -> bool:
    return not args or "-h" in args or "--help" in args


app = typer.Typer(
    name="orderbot",
    cls=OrderedGroup,
    help="Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop "
    "and its limits.",
    epilog=EPILOG,
    no_args_is_help=False,
    add_completion=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from orderbot import __version__

        typer.echo(f"orderbot {__version__}")  # untranslated: a name and a number
        raise typer.Exit()


def _language(value: str | None) -> str | None:
    """--lang, else ORDERBOT_LANG, else the locale: fixed before any command prints a word."""
    import os

    from orderbot import i18n

    try:
        i18n.set_language(i18n.language_from(os.environ, value))
    except ValueError as exc:
        source = "--lang" if value else "ORDERBOT_LANG"
        raise typer.BadParameter(i18n.t("error.bad_lang", value=str(exc), source=source)) from None
    return value


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", "-V", help="Show the version and exit.", callback=_version, is_eager=True
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="Language of what orderbot prints: zh or en \\[default: $ORDERBOT_LANG, else the locale "
        "(LC_ALL, LC_MESSAGES, LANG), else en]. --json, stop reasons and exit codes do not change.",
        callback=_language,
        is_eager=True,
        show_default=False,
    ),
) -> None:
    """Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop."""
    if ctx.invoked_subcommand is None:  # `orderbot` alone: the help, and no error
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


app.command("ask", help=ask.HELP, epilog=ask.EPILOG)(ask.ask)
app.command("repl", help=repl.HELP, epilog=repl.EPILOG)(repl.repl)
app.add_typer(runs.app, name="runs", help=runs.HELP, epilog=runs.EPILOG)
app.command("resume", help=resume.HELP, epilog=resume.EPILOG)(resume.resume)
app.command("replay", help=replay.HELP, epilog=replay.EPILOG)(replay.replay)
app.add_typer(orders.app, name="orders", help=orders.HELP, epilog=orders.EPILOG)
app.command("eval", help=evaluation.HELP, epilog=evaluation.EPILOG)(evaluation.eval_command)
app.command("doctor", help=doctor.HELP, epilog=doctor.EPILOG)(doctor.doctor)


def main() -> None:
    if _help_asked(sys.argv[1:]):
        # Only for help: it imports Typer's help renderer (Rich markdown, tracebacks, ...),
        # which a command that runs would otherwise pay on every start.
        _no_colour_in_help()
    try:
        app()
    finally:
        _flush_or_end_quietly()


def _flush_or_end_quietly() -> None:
    """What is left in stdout's buffer is written at exit; when the reader has gone (`| head
    -1`), say nothing about it and exit 141 instead of Python's BrokenPipeError message."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        end_quietly_on_closed_pipe()
