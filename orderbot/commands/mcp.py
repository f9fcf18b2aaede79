"""`orderbot mcp`: serve the session shop's tools to an agent host over the Model Context Protocol.

Flags → settings → the shop's session and the run store (orderbot.commands.run.serve) → an
MCP session (orderbot.mcp) → standard input/output, or streamable HTTP with --http. The
policy, the identity, the approval and the record stay orderbot's: the host's model only
proposes calls. The mcp package is the `mcp` extra, imported here only when the command runs.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import Orders, Runs, StateDir, User, errors_to_exit_codes
from orderbot.commands.run import may_ask, runner_for, serve
from orderbot.errors import ConfigError, UsageError
from orderbot.i18n import t
from orderbot.mcp.session import MAX_STEPS, McpSession
from orderbot.models.mcp_client import ClientModel

HELP = COMMAND_HELP["mcp"]
EPILOG = "Examples: orderbot mcp --user C001 · orderbot mcp --orders shop.db --http 127.0.0.1:8765"
TOKEN_ENV = "ORDERBOT_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
# An MCP session is a conversation of many calls: unless a flag or setting says otherwise,
# more calls and more working time than one question's run.
SESSION_DEFAULTS = {"max_tool_calls": 50, "timeout": 300.0}
MaxToolCalls = Annotated[
    int | None,
    typer.Option(
        "--max-tool-calls",
        help=f"Most tool calls in the whole session \\[default: {SESSION_DEFAULTS['max_tool_calls']}, at most "
        f"{MAX_STEPS - 2}].",
        show_default=False,
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds of orderbot's own work in the session; waiting for the client or for a person is not "
        f"counted \\[default: {SESSION_DEFAULTS['timeout']:g}].",
        show_default=False,
    ),
]


def mcp(
    ctx: typer.Context,
    orders: Orders = None,
    user: User = None,
    max_tool_calls: MaxToolCalls = None,
    timeout: Timeout = None,
    state_dir: StateDir = None,
    runs: Runs = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            help="Serve streamable HTTP on HOST:PORT (path /mcp) instead of standard input/output; "
            "loopback unless --allow-remote.",
            show_default=False,
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote", help=f"Let --http listen beyond loopback; clients must send ${TOKEN_ENV} as bearer token."
        ),
    ] = False,
    queue: Annotated[
        bool,
        typer.Option("--queue", help="Put every side effect in the approval queue, even when the host could ask."),
    ] = False,
) -> None:
    with errors_to_exit_codes():  # the flags first, before any setting or store
        address = _address(http, allow_remote) if http is not None else None
        token = _token() if address is not None and allow_remote else None
        server_module = _sdk()

    def body(settings, store, session) -> None:
        _serve(server_module, settings, store, session, address=address, token=token, queue=queue)

    serve(ctx.params, body)


def _serve(server_module, settings, store, session, *, address, token, queue) -> None:
    """One MCP session over the shop's `session`, recorded in `store`, until the client goes."""
    mcp_session, server = compose(server_module, settings, store, session, queue=queue)
    try:
        if address is None:
            server_module.serve_stdio(server)
            return
        host, port = address

        def ready(url: str) -> None:
            print(t("mcp.listening", shop=session.shop.name, url=url), file=sys.stderr, flush=True)

        server_module.serve_http(server, host, port, token=token, ready=ready)
    finally:
        mcp_session.close()


def compose(server_module, settings, store, session, *, queue: bool = False, clock=None):
    """The MCP session over the shop's `session` and its server, as `orderbot mcp` serves
    them (the tests drive this same pair with the SDK's client)."""
    defaults = {name: value for name, value in SESSION_DEFAULTS.items() if name not in settings.model_fields_set}
    limits = session.limits(settings).model_copy(update=defaults)
    if limits.max_tool_calls > MAX_STEPS - 2:
        raise UsageError(t("error.mcp_calls", calls=limits.max_tool_calls, cap=MAX_STEPS - 2))
    runner = runner_for(session, ClientModel(), store, settings, provider=ClientModel.provider)
    # Before each call the store sees what another desk wrote (a JSON store reads its file again).
    mcp_session = McpSession(runner, limits, user=settings.user, refresh=session.store.refresh, clock=clock)
    # Where the host's person may not be asked (may_ask), every side effect waits in the queue.
    elicit = may_ask(settings, store) and not queue
    instructions = session.shop.instructions
    server = server_module.build_server(mcp_session, session.toolbox, instructions=instructions, elicit=elicit)
    return mcp_session, server


def _sdk():
    """orderbot.mcp.server, which imports the mcp package: one sentence when it is missing."""
    try:
        from orderbot.mcp import server
    except ImportError:
        raise ConfigError(t("error.mcp_missing", command="pip install 'orderbot[mcp]'")) from None
    return server


def _address(value: str, allow_remote: bool) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(t("error.mcp_address", address=value[:80]))
    if not allow_remote and not _loopback(host):
        raise UsageError(t("error.mcp_remote", host=host[:80]))
    return host, int(port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token() -> str:
    token = os.environ.get(TOKEN_ENV, "")
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(t("error.mcp_token"))
    return token


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("mcp", help=HELP, epilog=EPILOG)(mcp)
