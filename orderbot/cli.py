"""The command line: a thin Typer app. Each command lives in orderbot/commands/.

Only typer is imported here; every command imports what it needs when it runs, so
`orderbot --help` stays fast and never imports the openai SDK.
"""

from __future__ import annotations

import typer

from orderbot.commands import ask

app = typer.Typer(
    name="orderbot",
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

        typer.echo(f"orderbot {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", help="Show the version and exit.", callback=_version, is_eager=True),
) -> None:
    """Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop."""


app.command("ask", help=ask.HELP, epilog=ask.EPILOG)(ask.ask)


def main() -> None:
    app()
