"""The command line: a thin Typer app. Each command lives in orderbot/commands/.

Only typer is imported here; every command imports what it needs when it runs, so
`orderbot --help` stays fast and never imports the openai SDK.
"""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from orderbot.commands import ask, doctor, repl, replay, resume, runs

# The order a newcomer needs the commands in (Typer would list sub-apps such as `runs` last).
COMMAND_ORDER = ("ask", "repl", "runs", "resume", "replay", "doctor")


class OrderedGroup(TyperGroup):
    def list_commands(self, ctx) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: COMMAND_ORDER.index(n) if n in COMMAND_ORDER else len(COMMAND_ORDER))


app = typer.Typer(
    name="orderbot",
    cls=OrderedGroup,
    help="Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop "
    "and its limits.",
    no_args_is_help=True,
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


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", help="Show the version and exit.", callback=_version, is_eager=True
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


app.command("ask", help=ask.HELP, epilog=ask.EPILOG)(ask.ask)
app.command("repl", help=repl.HELP, epilog=repl.EPILOG)(repl.repl)
app.add_typer(runs.app, name="runs", help=runs.HELP, epilog=runs.EPILOG)
app.command("resume", help=resume.HELP, epilog=resume.EPILOG)(resume.resume)
app.command("replay", help=replay.HELP, epilog=replay.EPILOG)(replay.replay)
app.command("doctor", help=doctor.HELP, epilog=doctor.EPILOG)(doctor.doctor)


def main() -> None:
    app()
