"""`orderbot doctor`: what orderbot would use here, and with --ping whether the model answers.

Every line is a fact about the configuration; a problem is shown on its line, and the exit
code says the worst one: 6 for configuration, 5 when the ping fails. The API key is never
shown, only whether one is set.
"""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer
from rich.cells import cell_len
from rich.text import Text

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import (
    BaseUrl,
    Model,
    Orders,
    Provider,
    StateDir,
    Timeout,
    errors_to_exit_codes,
)
from orderbot.commands.logs import setup_logging
from orderbot.errors import ConfigError, ExitCode, ModelError, RecordError
from orderbot.i18n import say, t
from orderbot.loop.items import user
from orderbot.loop.limits import LIMIT_SPECS
from orderbot.loop.model import ModelRequest
from orderbot.models import create, resolve_provider
from orderbot.runs import statedir
from orderbot.runs.sqlite import DB_FILE
from orderbot.runs.statedir import LOG_FILE
from orderbot.runs.takeover import noted
from orderbot.settings import load_settings
from orderbot.settings import public_base_url as public_url
from orderbot.shops.session import DEFAULT_SHOP, orders_source, session_over
from orderbot.text import cut
from orderbot.ui.console import make_console
from orderbot.ui.escape import (
    json_text,  # --json: valid JSON, no raw controls
    visible,
)
from orderbot.ui.layout import hanging

HELP = COMMAND_HELP["doctor"]
EPILOG = "Example: orderbot doctor --provider chat --base-url http://localhost:11434/v1 --ping"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
LABEL_CELLS = 11  # the values start in this column
PING_INSTRUCTIONS = "This is a connectivity check. Reply with the single word: pong."

Ping = Annotated[bool, typer.Option("--ping", help="Make one tiny model request and report its latency or the error.")]


def doctor(
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    orders: Orders = None,
    state_dir: StateDir = None,
    timeout: Timeout = None,
    ping: Ping = False,
    json_out: Annotated[bool, typer.Option("--json", "-j", help="Print the same facts as one JSON document.")] = False,
) -> None:
    with errors_to_exit_codes():
        settings = load_settings(
            provider=provider, model=model, base_url=base_url, orders=orders, state_dir=state_dir, timeout=timeout
        )
        setup_logging(settings.resolved_state_dir())  # retries are logged there, not shown
        exit_code = 0
        chosen = resolve_provider(settings)
        lines: list[tuple[str, str]] = []  # (label id, the sentence) for people
        facts: dict = {"provider": chosen, "provider_error": None, "model": None}  # the same for scripts
        try:
            llm = create(settings, DEFAULT_SHOP)  # its name, and whether it can be made; a ping asks no shop's question
        except ConfigError as exc:
            llm = None
            exit_code = ExitCode.CONFIG
            facts["provider_error"] = say(exc)
            lines.append(("provider", t("doctor.not_usable", what=f"{chosen}{_auto(settings, chosen)}", error=exc)))
        else:
            facts["model"] = llm.name
            lines.append(("provider", f"{llm.provider}{_auto(settings, chosen)}"))
            lines.append(("model", llm.name if chosen != "offline" else t("doctor.built_in", name=llm.name)))
        lines.append(("base_url", _base_url(settings, chosen)))
        facts["base_url"] = public_url(settings.base_url) if settings.base_url else None
        key_said = t("doctor.key_set_from", where=say(settings.key_from)) if settings.key_from else t("doctor.key_set")
        lines.append(("api_key", key_said if settings.api_key is not None else t("doctor.key_unset")))
        facts["api_key_set"] = settings.api_key is not None
        orders_line, ok, facts["orders"], shop_lines = _orders(settings)
        lines.append(("orders", orders_line))
        lines.extend(shop_lines)
        exit_code = exit_code or (0 if ok else ExitCode.CONFIG)
        where = settings.resolved_state_dir()
        facts["state_dir"], facts["state_dir_error"], facts["log_error"] = str(where), None, None
        facts["taken_over"] = []  # when an earlier orderbot's JSON records came over (orderbot.runs.takeover)
        try:
            statedir.refuse_unusable(where)
        except RecordError as exc:
            facts["state_dir_error"] = say(exc)
            lines.append(("state_dir", t("doctor.not_usable_short", error=say(exc))))
            exit_code = exit_code or ExitCode.CONFIG
        else:
            lines.append(("state_dir", str(where)))
            facts["taken_over"] = noted(where / DB_FILE)  # said once when it happened; kept here too
            lines += [("runs", t("doctor.taken_over", **row)) for row in facts["taken_over"]]
            # A run drops log lines it cannot write, silently: this is where that is said, once.
            problem = statedir.log_problem(where / LOG_FILE)
            facts["log_error"] = None if problem is None else say(problem)
            if facts["log_error"] is not None:
                lines.append(("log", t("doctor.log_dropped", path=where / LOG_FILE, error=facts["log_error"])))
        facts["ping"] = None
        if ping:
            if llm is None:
                lines.append(("ping", t("doctor.ping_skipped")))
            else:
                text, ok, facts["ping"] = _ping(llm, settings.timeout)
                lines.append(("ping", text))
                exit_code = exit_code or (0 if ok else ExitCode.MODEL_ERROR)
                if ok and chosen == "offline":  # no server to set up: the planner is orderbot's own
                    facts["tool_calling"] = {"ok": True, "result": "built_in", "error": None}
                    lines.append(("tool_calling", t("doctor.tools_built_in")))
                elif ok:  # the server answers; now whether it calls tools, which every run needs
                    text, facts["tool_calling"] = _tool_check(llm, settings.timeout)
                    lines.append(("tool_calling", text))
        facts["exit_code"] = exit_code
        if json_out:
            typer.echo(json_text(facts))
        else:
            console = make_console()
            for key, value in lines:
                _line(console, key, value)
    raise typer.Exit(exit_code)


def _line(console, key: str, value: str) -> None:
    """`label:   value`, the values aligned in one column whatever the language; in a
    terminal a long value continues in that column, piped each fact stays on one line."""
    label = t(f"doctor.{key}")
    cells = max(LABEL_CELLS, cell_len(label) + 1)
    value = visible(value, one_line=True)
    if not console.is_terminal:
        console.print(Text(label + " " * (cells - cell_len(label)) + value), soft_wrap=True)
        return
    console.print(hanging(console, Text(value), first=cells, rest=cells, lead=label), soft_wrap=True)


def _auto(settings, chosen: str) -> str:
    if settings.provider != "auto":
        return ""
    return t({"openai": "doctor.auto_key", "chat": "doctor.auto_base_url"}.get(chosen, "doctor.auto_no_key"))


def _base_url(settings, chosen: str) -> str:

    if chosen == "offline":
        if settings.base_url is not None:  # a likely slip: a local server set up, but auto chose offline
            return t("doctor.offline_url_unused", url=public_url(settings.base_url))
        return t("doctor.url_unused")
    if settings.base_url is None:
        return t("doctor.url_default", url=DEFAULT_BASE_URL)
    return public_url(settings.base_url)


def _orders(settings) -> tuple[str, bool, dict, list[tuple[str, str]]]:
    """The orders line, whether they are usable, their facts, and the lines saying which
    shop they are and the limits a run on them gets (the shop's defaults unless set)."""
    fact: dict = {"path": settings.orders, "read_only": False, "count": None, "error": None, "shop": None}
    try:
        source, writable = orders_source(settings)
        fact.update(path=source.shown, read_only=not writable)
        session = session_over(source, writable=writable)
        try:
            count = session.store.count()
        finally:
            session.store.close()
    except ConfigError as exc:
        fact["error"] = say(exc)
        return t("doctor.not_usable_short", error=exc), False, fact, []
    where = t("doctor.sample", path=source.shown) if not writable else source.shown
    key = "doctor.order_count_one" if count == 1 else "doctor.order_count"
    limits = session.limits(settings)
    chosen = [limit.flag or limit.env for limit in LIMIT_SPECS if limit.name in settings.model_fields_set]
    fact.update(count=count, shop=session.shop.name, limits=limits.model_dump())
    text = t(
        "doctor.limits_line",
        steps=limits.max_steps,
        calls=limits.max_tool_calls,
        per_step=limits.max_calls_per_step,
        seconds=limits.timeout,
    )
    if chosen:
        text += t("doctor.limits_set", names=", ".join(chosen))
    shop = [("shop", t(f"doctor.shop_{session.shop.name}")), ("limits", text)]
    return t(key, where=where, count=count), True, fact, shop


TOOL_INSTRUCTIONS = "This is a tool-calling check. Call the tool `echo` with word set to pong. Do not reply in text."
ECHO_TOOL = {
    "type": "function",
    "name": "echo",
    "description": "Echo one word back.",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
    "strict": True,
}


def _tool_check(llm, timeout: float) -> tuple[str, dict]:
    """One request offering one tool: did a well-formed call come back? Many local servers
    only return tool calls when started for it (llama.cpp --jinja, vLLM's tool-call parser);
    without, the call arrives as plain text. A warning, not a failure: the exit code stays."""

    request = ModelRequest(TOOL_INSTRUCTIONS, (user("pong"),), (ECHO_TOOL,), timeout)
    try:
        turn = llm.respond(request)
    except ModelError as exc:
        return t("doctor.tools_failed", error=say(exc)), {"ok": False, "result": "error", "error": say(exc)}
    for call in turn.calls:
        try:
            an_object = isinstance(json.loads(call.arguments), dict)
        except ValueError:
            an_object = False
        if not an_object:
            return t("doctor.tools_malformed"), {"ok": False, "result": "malformed_call", "error": None}
        if call.name != "echo":  # well-formed, but not the one tool offered: the server does not follow the list
            name = cut(visible(call.name, one_line=True), 60)
            return t("doctor.tools_other", name=name), {"ok": False, "result": "other_tool", "error": None}
        return t("doctor.tools_ok"), {"ok": True, "result": "call", "error": None}
    return t("doctor.tools_text"), {"ok": False, "result": "text", "error": None}


def _ping(llm, timeout: float) -> tuple[str, bool, dict]:
    """One tiny request through the same path a run takes: retries and deadline included."""

    request = ModelRequest(PING_INSTRUCTIONS, (user("ping"),), (), timeout)
    began = time.monotonic()
    try:
        turn = llm.respond(request)
    except ModelError as exc:  # ModelTimeout included: its message says why time ran out
        return t("doctor.ping_failed", error=say(exc)), False, {"ok": False, "ms": None, "error": say(exc)}
    ms = (time.monotonic() - began) * 1000
    usage = (
        t("doctor.ping_tokens", input=turn.usage.input_tokens, output=turn.usage.output_tokens) if turn.usage else ""
    )
    return t("doctor.ping_ok", ms=ms) + usage, True, {"ok": True, "ms": round(ms, 1), "error": None}


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("doctor", help=HELP, epilog=EPILOG)(doctor)
