"""`orderbot models`: the models the configured server offers (`GET /v1/models`) and the
one orderbot would use; offline, that the built-in planner answers and no server is asked."""

from __future__ import annotations

from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import BaseUrl, Model, Provider, Timeout, error_line, errors_to_exit_codes
from orderbot.errors import ExitCode, ModelError
from orderbot.i18n import t
from orderbot.models import endpoint, resolve_provider
from orderbot.settings import load_settings
from orderbot.ui.escape import json_text, visible

HELP = COMMAND_HELP["models"]
EPILOG = "Example: orderbot models --base-url http://localhost:11434/v1"


def models(
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    timeout: Timeout = None,
    json_out: Annotated[bool, typer.Option("--json", "-j", help="Print the same as one JSON document.")] = False,
) -> None:
    with errors_to_exit_codes():
        settings = load_settings(provider=provider, model=model, base_url=base_url, timeout=timeout)
        chosen = resolve_provider(settings)
        doc: dict = {"provider": chosen, "base_url": endpoint(settings), "models": [], "model": None, "listed": None}
        if chosen == "offline":
            lines = [t("models.offline")]
        else:
            from orderbot.models.listing import served_models  # the SDK: only when a server is asked

            try:
                served = served_models(settings, chosen)
            except ModelError as exc:
                typer.echo(error_line(exc), err=True)
                raise typer.Exit(ExitCode.MODEL_ERROR) from None
            listed = settings.model in served
            doc |= {"models": served, "model": settings.model, "listed": listed}
            where = doc["base_url"] or "api.openai.com"
            lines = [t("models.at", where=where, provider=chosen, count=len(served))]
            lines += [
                t("models.used", name=visible(name, one_line=True))
                if name == settings.model
                else f"  {visible(name, one_line=True)}"
                for name in served
            ]
            if not listed:
                lines.append(t("models.not_listed", name=visible(settings.model, one_line=True)))
        typer.echo(json_text(doc) if json_out else "\n".join(lines))


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("models", help=HELP, epilog=EPILOG)(models)
