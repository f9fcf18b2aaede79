"""`orderbot mcp`: serve the session shop's tools to an agent host over the Model Context Protocol;
`orderbot mcp tokens add|list|revoke`: the bearer tokens its HTTP clients send.

Flags → settings → the shop's session and the run store (orderbot.commands.run.serve) → the
MCP sessions, one per client (orderbot.mcp) → standard input/output, or streamable HTTP with
--http. The policy, the identity, the approval and the record stay orderbot's: the host's
model only proposes calls. The mcp package is the `mcp` extra, imported here only when the
server runs (the tokens need only the run store).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import hmac
import ipaddress
import os
import sys
import time
import urllib.parse
from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP, CommandGroup
from orderbot.commands.common import Json, Orders, Runs, StateDir, User, errors_to_exit_codes, open_store
from orderbot.commands.run import may_ask_as, runner_for, serve
from orderbot.errors import ConfigError, ExitCode, Terminated, UsageError
from orderbot.i18n import t
from orderbot.mcp.identity import Authenticator, SharedToken, StoreTokens
from orderbot.mcp.session import McpSession, Turns, Window
from orderbot.mcp.sessions import IDLE, Principal, Sessions
from orderbot.models.mcp_client import ClientModel
from orderbot.runs import tokens
from orderbot.runs.stores import open_run_store
from orderbot.settings import load_settings
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text
from orderbot.ui.layout import print_whole
from orderbot.ui.team import format_tokens

HELP = COMMAND_HELP["mcp"]
EPILOG = (
    "Examples: orderbot mcp --user C001 · orderbot mcp --orders shop.db --http 127.0.0.1:8765 · "
    "orderbot mcp tokens add --customer C001"
)
TOKENS_HELP = "The bearer tokens clients of orderbot mcp --http send: add one (shown once), list them, revoke one."
ADD_HELP = (
    "Make a token for one customer (its clients are bound to her) or one operator (its clients act as that "
    "operator); it is printed once, and the run store keeps only its hash."
)
LIST_HELP = "List the tokens: whom each names, who made it, when it expires, whether it is revoked (never a secret)."
REVOKE_HELP = "Revoke a token: the next request with it is refused (401 invalid_token)."
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


app = typer.Typer(
    cls=CommandGroup, help=HELP, epilog=EPILOG, no_args_is_help=False, rich_markup_mode="rich", add_completion=False
)
tokens_app = typer.Typer(
    cls=CommandGroup,
    help=TOKENS_HELP,
    epilog="Examples: orderbot mcp tokens add --customer C001 · orderbot mcp tokens list · "
    "orderbot mcp tokens revoke 3f9a2c1b4d5e",
    no_args_is_help=True,
    rich_markup_mode="rich",
    add_completion=False,
)
app.add_typer(tokens_app, name="tokens")


@app.callback(invoke_without_command=True)
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
            "--allow-remote",
            help="Let --http listen beyond loopback; clients must then send a bearer token (orderbot mcp tokens "
            f"add, or ${TOKEN_ENV}).",
        ),
    ] = False,
    queue: Annotated[
        bool,
        typer.Option("--queue", help="Put every side effect in the approval queue, even when the host could ask."),
    ] = False,
    jwks: Annotated[
        str | None,
        typer.Option(
            "--jwks",
            help="Over --http, accept the JWTs of your identity provider: its public keys (JWKS), a file or an "
            "https URL; needs --issuer and --audience.",
            show_default=False,
        ),
    ] = None,
    issuer: Annotated[
        str | None, typer.Option("--issuer", help="The issuer (iss) its JWTs must name: a URL.", show_default=False)
    ] = None,
    audience: Annotated[
        str | None,
        typer.Option(
            "--audience",
            help="The audience (aud) its JWTs must name: this server's URL, as the MCP authorization spec asks.",
            show_default=False,
        ),
    ] = None,
    customer_claim: Annotated[
        str, typer.Option("--customer-claim", help="The claim of a JWT that names the customer.")
    ] = "sub",
    operator_claim: Annotated[
        str | None,
        typer.Option(
            "--operator-claim",
            help="A claim that, when a JWT has it, names an operator instead of a customer.",
            show_default=False,
        ),
    ] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return  # `mcp tokens ...`: the subcommand does the work
    with errors_to_exit_codes():  # the flags first, before any setting or store
        if not 0 < window <= MAX_WINDOW:
            raise UsageError(t("error.mcp_window", seconds=window, most=MAX_WINDOW))
        if not 0 < idle <= MAX_IDLE:
            raise UsageError(t("error.mcp_idle", seconds=idle, most=MAX_IDLE))
        address = _address(http, allow_remote) if http is not None else None
        shared = _token() if address is not None and TOKEN_ENV in os.environ else None
        provider = _provider(jwks, issuer, audience, http) if jwks or issuer or audience else None
        server_module = _sdk()

    def body(settings, store, session) -> None:
        auth = None
        if address is not None:
            jwts = _jwts(provider, customer_claim, operator_claim) if provider is not None else None
            auth = _authenticator(settings, store, shared, allow_remote, jwts)
        try:
            _serve(
                server_module,
                settings,
                store,
                session,
                address=address,
                auth=auth,
                queue=queue,
                window=window,
                idle=idle,
                provider=provider,
            )
        finally:
            if auth is not None:
                auth.close()

    serve(ctx.params, body)


def _provider(jwks: str | None, issuer: str | None, audience: str | None, http: str | None) -> tuple[str, str, str]:
    """--jwks, --issuer and --audience, checked together: the three, over --http, the issuer a URL."""
    if not (jwks and issuer and audience) or http is None:
        raise UsageError(t("error.mcp_jwks_needs"))
    if not _is_url(issuer):
        raise UsageError(t("error.mcp_issuer", issuer=issuer[:80]))
    return jwks, issuer, audience


def _is_url(text: str) -> bool:
    parts = urllib.parse.urlsplit(text)
    return parts.scheme in ("https", "http") and bool(parts.hostname)


def _jwts(provider: tuple[str, str, str], customer_claim: str, operator_claim: str | None):
    from orderbot.mcp.jwts import Jwts  # PyJWT: only for a server that takes an identity provider's tokens

    jwks, issuer, audience = provider
    return Jwts(jwks, issuer=issuer, audience=audience, customer_claim=customer_claim, operator_claim=operator_claim)


def _authenticator(settings, store, shared: str | None, allow_remote: bool, jwts=None) -> Authenticator:
    """Who the bearer tokens of --http's requests name: an identity provider's JWTs (with
    --jwks), the run store's tokens (read through a connection of their own), and the shared
    token of ORDERBOT_MCP_TOKEN. Beyond loopback a client must send one, so there must be
    one to send."""
    if allow_remote and shared is None and jwts is None and not store.tokens_exist():
        raise ConfigError(t("error.mcp_token"))
    stored = StoreTokens(lambda: open_run_store(settings))
    verifiers = [*([jwts] if jwts is not None else []), stored, *([SharedToken(shared)] if shared is not None else [])]
    always = shared is not None or jwts is not None or allow_remote
    return Authenticator(verifiers, tokens=stored, always=always)


def _serve(server_module, settings, store, session, *, address, auth, queue, window, idle, provider=None) -> None:
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

            resource = None
            if provider is not None:  # RFC 9728: what a client reads to find the provider
                _, issuer, audience = provider
                url = f"http://{server_module.url_host(host)}:{port}/mcp"
                resource = (audience if _is_url(audience) else url, issuer)
            server_module.serve_http(server, sessions, host, port, auth=auth, ready=ready, resource=resource)
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
    allowed = may_ask_as(settings, store)
    elicit = allowed(None) and not queue
    turns = Turns() if http is not None else None
    ticking = {} if now is None else {"idle_clock": now}

    def make(principal: Principal | None) -> McpSession:
        """A client's session. A customer's token binds it to her (no sign-in switches it);
        an operator's token makes its person that operator: asked only where that operator
        could approve at a desk (not with four eyes, nor when the store lists others)."""
        rate = Window(limits.max_tool_calls, window, now) if now is not None else Window(limits.max_tool_calls, window)
        user, asks = settings.user, elicit
        if principal is not None and principal.customer is not None:
            user = principal.customer
        if principal is not None and principal.operator is not None:
            asks = elicit and allowed(principal.operator)
        return McpSession(
            runner,
            limits,
            user=user,
            window=rate,
            # Before each call the store sees what another desk wrote (a JSON store reads its file again).
            refresh=session.store.refresh,
            clock=clock,
            approval_ttl_hours=settings.approval_ttl_hours,
            may_ask=asks,
            principal=principal.label if principal is not None else "",
            acting_for=principal.operator if principal is not None else None,
            turns=turns,
            **ticking,
        )

    sessions = Sessions(make, idle=idle, **({} if now is None else {"clock": now}))
    server = server_module.build_server(
        server_module.session_of(sessions),
        session.toolbox,
        instructions=session.shop.instructions,
        state_key=state_key(store),
        state_ttl=settings.approval_ttl_hours * 3600,
    )
    return sessions, server


def state_key(store) -> bytes:
    """The key that seals a question's state for its retry: the run store's own (every
    server of a team's store holds it), made into a key of its own for this use."""
    key = store.key(create=True)
    assert key is not None
    return hmac.new(key, b"orderbot mcp request state", hashlib.sha256).digest()


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


# ---- orderbot mcp tokens -----------------------------------------------------------------


@tokens_app.command("add", help=ADD_HELP, epilog="Examples: orderbot mcp tokens add --customer C001 --expires 30d")
def add_token(
    customer: Annotated[
        str | None,
        typer.Option("--customer", help="The customer the token's clients are bound to.", show_default=False),
    ] = None,
    operator: Annotated[
        str | None,
        typer.Option("--operator", help="The operator the token's clients act as: your own name.", show_default=False),
    ] = None,
    expires: Annotated[
        str | None,
        typer.Option(
            "--expires",
            help="When it stops working: a time from now (90m, 12h, 30d, 2w) or a UTC date or time "
            "(2027-01-31, 2027-01-31T18:00:00Z) \\[default: never].",
            show_default=False,
        ),
    ] = None,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        if (customer is None) == (operator is None) or not (customer or operator or "").strip():
            raise UsageError(t("tokens.one_of"))
        until = tokens.expiry(expires, time.time()) if expires is not None else None
        with _token_store(runs, state_dir) as store:
            secret = tokens.new_token()
            made = store.add_token(tokens.token_hash(secret), customer=customer, operator=operator, expires_at=until)
            where = store.where
        names = (
            t("tokens.customer", customer=customer) if customer is not None else t("tokens.operator", operator=operator)
        )
        shown_until = t("tokens.until", at=until.replace("T", " ").rstrip("Z")) if until else ""
        print(t("tokens.added", id=made.id, names=names, until=shown_until, where=where), file=sys.stderr)
        print(secret, flush=True)  # alone on standard output: TOKEN=$(orderbot mcp tokens add ...)


@tokens_app.command("list", help=LIST_HELP, epilog="Example: orderbot mcp tokens list --json")
def list_tokens(json_out: Json = False, runs: Runs = None, state_dir: StateDir = None) -> None:
    with errors_to_exit_codes():
        with _token_store(runs, state_dir) as store:
            rows, where = store.tokens(), store.where
        now = time.time()
        if json_out:
            sys.stdout.write(json_text([row.as_dict(now) for row in rows]) + "\n")
            return
        console = make_console()
        if not rows:
            console.print(t("tokens.none", where=where), markup=False)
            return
        print_whole(console, format_tokens(rows, plain=not console.is_terminal, now=now))


@tokens_app.command("revoke", help=REVOKE_HELP, epilog="Example: orderbot mcp tokens revoke 3f9a2c1b4d5e")
def revoke_token(
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's id, as tokens list shows it.")],
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        with _token_store(runs, state_dir) as store:
            token, now = store.revoke_token(token_id.strip())
        if now:
            print(t("tokens.revoked", id=token.id))
        else:
            at = (token.revoked_at or "?").replace("T", " ").rstrip("Z")
            print(t("tokens.already_revoked", id=token.id, by=token.revoked_by or "?", at=at))


@contextlib.contextmanager
def _token_store(runs: str | None, state_dir):
    store = open_store(load_settings(runs=runs, state_dir=state_dir))
    try:
        yield store
    finally:
        store.close()
