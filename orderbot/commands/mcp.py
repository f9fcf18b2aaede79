"""`orderbot mcp`: serve the session shop's tools to an agent host over the Model Context Protocol.

Flags → settings → the shop's session and the run store (orderbot.commands.run.serve) → an
MCP session (orderbot.mcp) → standard input/output, or streamable HTTP with --http. The
policy, the identity, the approval and the record stay orderbot's: the host's model only
proposes calls. The mcp package is the `mcp` extra, imported here only when the command runs.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import sys
from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import Orders, Runs, StateDir, User, errors_to_exit_codes
from orderbot.commands.run import may_ask, runner_for, serve
from orderbot.errors import ConfigError, ExitCode, Terminated, UsageError
from orderbot.i18n import t
from orderbot.mcp.session import McpSession, Turns, Window
from orderbot.mcp.sessions import IDLE, Principal, Sessions
from orderbot.models.mcp_client import ClientModel

HELP = COMMAND_HELP["mcp"]
EPILOG = "Examples: orderbot mcp --user C001 · orderbot mcp --orders shop.db --http 127.0.0.1:8765"
TOKEN_ENV = "ORDERBOT_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
# An MCP session is a conversation of many calls, bounded by a rate: unless a flag or setting
# says otherwise, 50 calls in any minute, and more working time for each run of its chain.
SESSION_DEFAULTS = {"max_tool_calls": 50, "timeout": 300.0}
WINDOW = 60.0
MAX_WINDOW = 86400.0  # a day
MAX_IDLE = 7 * 86400.0  # a week
MaxToolCalls = Annotated[
    int | None,
    typer.Option(
        "--max-tool-calls",
        help="Most tool calls in any --window seconds; past it a call is refused with when to retry "
        f"\\[default: {SESSION_DEFAULTS['max_tool_calls']}].",
        show_default=False,
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds of orderbot's own work in each run of the session; waiting for the client or for a "
        f"person is not counted \\[default: {SESSION_DEFAULTS['timeout']:g}].",
        show_default=False,
    ),
]
IdleSeconds = Annotated[
    float,
    typer.Option(
        "--idle",
        help="Over --http, seconds a client's session may go unused before it ends, its run closed "
        f"\\[default: {IDLE:g}].",
        show_default=False,
    ),
]
WindowSeconds = Annotated[
    float,
    typer.Option(
        "--window", help=f"The window of --max-tool-calls, in seconds \\[default: {WINDOW:g}].", show_default=False
    ),
]


def mcp(
    ctx: typer.Context,
    orders: Orders = None,
    user: User = None,
    max_tool_calls: MaxToolCalls = None,
    timeout: Timeout = None,
    window: WindowSeconds = WINDOW,
    idle: IdleSeconds = IDLE,
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
        if not 0 < window <= MAX_WINDOW:
            raise UsageError(t("error.mcp_window", seconds=window, most=MAX_WINDOW))
        if not 0 < idle <= MAX_IDLE:
            raise UsageError(t("error.mcp_idle", seconds=idle, most=MAX_IDLE))
        address = _address(http, allow_remote) if http is not None else None
        token = _token() if address is not None and allow_remote else None
        server_module = _sdk()

    def body(settings, store, session) -> None:
        _serve(
            server_module, settings, store, session, address=address, token=token, queue=queue, window=window, idle=idle
        )

    serve(ctx.params, body)


def _serve(server_module, settings, store, session, *, address, token, queue, window, idle) -> None:
    """The MCP sessions over the shop's `session`, recorded in `store`: the one client of
    standard input/output until it goes, or every client of --http until interrupted; SIGTERM
    stops them as for `ask` (each run in progress saved as cancelled, exit 143)."""
    sessions, server = compose(
        server_module, settings, store, session, queue=queue, window=window, http=address, idle=idle
    )
    interrupted = None
    try:
        if address is None:
            stdio = sessions.default

            def on_end(stopped) -> None:  # on the event loop: open questions settled, the last run closed
                stdio.close(interrupted=stopped)

            interrupted = server_module.serve_stdio(server, on_end=on_end, serve_here=stdio.serve_here)
        else:
            host, port = address

            def ready(url: str) -> None:
                print(t("mcp.listening", shop=session.shop.name, url=url), file=sys.stderr, flush=True)

            server_module.serve_http(server, sessions, host, port, token=token, ready=ready)
    except KeyboardInterrupt as stopped:  # Ctrl-C, or SIGTERM, raised again by uvicorn once it has shut down
        interrupted = type(stopped)
    finally:
        sessions.close(interrupted=interrupted)
    if interrupted is not None:  # the run in progress saved as cancelled, as ask's
        raise typer.Exit(ExitCode.TERMINATED if interrupted is Terminated else ExitCode.CANCELLED)


def compose(
    server_module,
    settings,
    store,
    session,
    *,
    queue: bool = False,
    window: float = WINDOW,
    http=None,
    idle: float = IDLE,
    clock=None,
    now=None,
):
    """The MCP sessions over the shop's `session` and their server, as `orderbot mcp` serves
    them (the tests drive this same pair with the SDK's client): one session per client, each
    with its own window, chain of runs and customer. `http`: served over HTTP, where the
    sessions' engines take turns with the shop and the run store they share (over standard
    input/output the one session's engine runs on the event loop's thread). `clock` is each
    session's busy clock, `now` the window's and the idle sessions' (injected by tests)."""
    defaults = {name: value for name, value in SESSION_DEFAULTS.items() if name not in settings.model_fields_set}
    limits = session.limits(settings).model_copy(update=defaults)
    runner = runner_for(session, ClientModel(), store, settings, provider=ClientModel.provider)
    # Where the host's person may not be asked (may_ask), every side effect waits in the queue.
    elicit = may_ask(settings, store) and not queue
    turns = Turns() if http is not None else None
    ticking = {} if now is None else {"idle_clock": now}

    def make(principal: Principal | None) -> McpSession:
        rate = Window(limits.max_tool_calls, window, now) if now is not None else Window(limits.max_tool_calls, window)
        return McpSession(
            runner,
            limits,
            user=settings.user,
            window=rate,
            # Before each call the store sees what another desk wrote (a JSON store reads its file again).
            refresh=session.store.refresh,
            clock=clock,
            approval_ttl_hours=settings.approval_ttl_hours,
            may_ask=elicit,
            turns=turns,
            **ticking,
        )

    sessions = Sessions(make, idle=idle, **({} if now is None else {"clock": now}))
    server = server_module.build_server(
        server_module.session_of(sessions), session.toolbox, instructions=session.shop.instructions
    )
    return sessions, server


def _sdk():
    """orderbot.mcp.server, which imports the mcp package: one sentence when it is missing."""
    try:
        from orderbot.mcp import server
    except ImportError:
        raise ConfigError(t("error.mcp_missing", command="pip install 'orderbot[mcp]'")) from None
    # What the imports made lives as long as the process: kept out of the collector's walks,
    # which would otherwise go over it at every full collection and once more at exit
    # (~0.5 s, the most of what a SIGTERM's exit took).
    gc.freeze()
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
