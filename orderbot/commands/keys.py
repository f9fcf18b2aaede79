"""`orderbot keys set|list|path`: API keys kept in the user's config directory (orderbot.keys),
for when exporting OPENAI_API_KEY in every shell is a chore. A key is read from a hidden
prompt or standard input and never printed; the environment and ./.env still come first."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from orderbot import keys
from orderbot.commands import COMMAND_HELP, CommandGroup
from orderbot.commands.common import errors_to_exit_codes
from orderbot.errors import UsageError
from orderbot.i18n import say, t
from orderbot.settings import load_settings

HELP = COMMAND_HELP["keys"]
MAX_KEY_CHARS = 4096

EPILOG = "Example: orderbot keys set openai"
app = typer.Typer(
    cls=CommandGroup, rich_markup_mode="rich", add_completion=False, help=HELP, epilog=EPILOG, no_args_is_help=False
)


@app.callback(invoke_without_command=True)
def keys_group(ctx: typer.Context) -> None:
    """`orderbot keys` alone: its help, and no error (as `orderbot` alone; Click's
    no_args_is_help exits 2)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


@app.command("set", epilog='Example: orderbot keys set openai  (or: echo "$KEY" | orderbot keys set openai)')
def set_key(
    name: Annotated[str, typer.Argument(help="Which key: openai (the openai and chat providers' key).")],
) -> None:
    """Keep a key in the key store, read from a hidden prompt or standard input; never shown."""
    with errors_to_exit_codes():
        _known(name)
        if sys.stdin.isatty():
            key = typer.prompt(t("keys.prompt", name=name), hide_input=True, default="", show_default=False)
        else:
            key = sys.stdin.readline(MAX_KEY_CHARS + 1)
        key = key.strip()
        if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
            raise UsageError(t("keys.empty"))
        path = keys.save(name, key)
        typer.echo(t("keys.saved", name=name, path=path))


@app.command("list", epilog="Example: orderbot keys list")
def list_keys() -> None:
    """Each key orderbot knows and where it comes from (the environment, ./.env, the key store); never the key."""
    with errors_to_exit_codes():
        key_from = load_settings().key_from
        where = say(key_from) if key_from else t("keys.not_set")
        typer.echo(f"openai: {where}")  # untranslated: the key's name, then where it comes from


@app.command("path", epilog="Example: orderbot keys path")
def path() -> None:
    """Where the key store is (it may not exist yet)."""
    typer.echo(str(keys.store_path()))


def _known(name: str) -> None:
    if name not in keys.NAMES:
        raise UsageError(t("keys.unknown", name=repr(name), choices=", ".join(keys.NAMES)))
