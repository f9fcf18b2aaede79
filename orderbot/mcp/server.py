"""The MCP face of a session: the official SDK's low-level server over orderbot.mcp.session.

The only module that imports the `mcp` package (the `mcp` extra). It lists the session
shop's tools with their strict schemas, a title, the envelope as their output schema and
annotations (a lookup is `readOnlyHint`, a side effect `destructiveHint`), plus
`check_approval`; it hands each call to the client's session, which runs it through the
engine, and sends back the envelope, as text and as structured content, through `visible`,
so nothing raw from a store reaches the client. An unknown tool is a protocol error (-32602).

A side effect's question goes to the person in the host by elicitation, and only as a form
to a client that declared forms: in-band on connections that can send a server request (the
handshake era), as an `InputRequiredResult` that the client answers by retrying the call on
2026-07-28 connections (a retry without the answer is asked again). Any other client gets
the approval queue's reply.

Standard input is read on the event loop (no thread waits on it) and SIGTERM cancels the
server, so it ends at once whatever the client does. Streamable HTTP is served by uvicorn;
on loopback the Host and Origin headers must name the address it is bound to (DNS
rebinding), and `bearer` guards it when a token is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import json
import logging
import os
import signal
import stat
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl, BaseModel, ConfigDict
from starlette.authentication import AuthCredentials

from orderbot import __version__
from orderbot.errors import OrderbotError, Terminated
from orderbot.i18n import t
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.envelope import compact_json, fail
from orderbot.mcp.identity import Authenticator
from orderbot.mcp.session import McpSession, Question, Reply, client_name
from orderbot.mcp.sessions import Principal, Sessions
from orderbot.text import cut
from orderbot.ui.escape import visible

log = logging.getLogger("orderbot")

CHECK_APPROVAL = "check_approval"
APPROVAL = "approval"  # the key of the question in an InputRequiredResult
APPROVE_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Carry out this action."}},
    "required": ["approve"],
}
# Every tool's result is orderbot's envelope (orderbot.loop.envelope): what a model of `ask` reads.
ENVELOPE_SCHEMA = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "Whether the call did what was asked."},
        "data": {"description": "The tool's result, when ok."},
        "code": {"type": "string", "description": "Why not, as a code, when not ok."},
        "error": {"type": "string", "description": "Why not, as a sentence, when not ok."},
        "retry_after": {"type": "number", "description": "Seconds until a call refused by the rate may be sent."},
        "truncated": {"type": "boolean", "description": "The result was cut to the size cap."},
        "note": {"type": "string", "description": "What was cut."},
    },
    "required": ["ok"],
}
SessionOf = Callable[[Any], McpSession]  # the session of the client a request comes from


def tools_of(toolbox: Toolbox) -> list[types.Tool]:
    """The shop's tools as MCP lists them, then check_approval."""
    listed = []
    for spec in toolbox.specs:
        tool = toolbox.get(spec["name"])
        annotations = types.ToolAnnotations(
            read_only_hint=not tool.side_effect,
            destructive_hint=tool.side_effect,
            idempotent_hint=not tool.side_effect,
            open_world_hint=False,
        )
        listed.append(
            types.Tool(
                name=tool.name,
                title=title_of(tool.name),
                description=tool.description,
                input_schema=spec["parameters"],
                output_schema=ENVELOPE_SCHEMA,
                annotations=annotations,
            )
        )
    check = {
        "type": "object",
        "properties": {"run_id": {"type": "string", "description": t("mcp.run_id")}},
        "additionalProperties": False,
    }
    listed.append(
        types.Tool(
            name=CHECK_APPROVAL,
            title=title_of(CHECK_APPROVAL),
            description=t("mcp.check_approval"),
            input_schema=check,
            output_schema=ENVELOPE_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
        )
    )
    return listed


def title_of(name: str) -> str:
    """A tool's name as a person reads it: `get_order_status` → `Get order status`."""
    return name.replace("_", " ").capitalize()


NEEDS_TOKEN = "this server needs a bearer token: Authorization: Bearer <token>"
WELL_KNOWN = "/.well-known/oauth-protected-resource"  # RFC 9728's metadata, read without a token
PRINCIPAL = "orderbot.principal"  # where the bearer guard leaves whom a request's token names (the ASGI scope)


def principal_of(ctx) -> Principal | None:
    """Whom the bearer token of this request names (None without one, or off HTTP)."""
    request = ctx.request
    return request.scope.get(PRINCIPAL) if request is not None else None


def session_of(sessions: Sessions) -> SessionOf:
    """The session of the client a request comes from: over HTTP, a handshake-era
    connection's (its Mcp-Session-Id) or, in the stateless 2026-07-28 era, the authenticated
    principal's; the one session of standard input/output otherwise."""

    def of(ctx) -> McpSession:
        request = ctx.request
        if request is None:
            return sessions.default
        principal = principal_of(ctx)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            if principal is None or not principal.distinct:
                raise _anonymous_modern(ctx)
            return sessions.of_principal(principal)
        connection = request.headers.get(MCP_SESSION_ID_HEADER)
        if not connection:  # a stateful server answers nothing but initialize without one
            raise MCPError(code=types.INVALID_REQUEST, message="Missing Mcp-Session-Id")
        return sessions.of_connection(connection, principal)

    return of


def _anonymous_modern(ctx) -> MCPError:
    """A stateless request over HTTP with nothing to tell its client from others: the
    handshake era is offered instead (whose connection is the client), which the SDK's
    client in `auto` mode falls back to."""
    data = types.UnsupportedProtocolVersionErrorData(
        supported=list(HANDSHAKE_PROTOCOL_VERSIONS), requested=str(ctx.protocol_version)
    )
    message = (
        "this server keeps one conversation per client: without a bearer token that names the client, "
        "connect with the initialize handshake (Mcp-Session-Id)"
    )
    return MCPError(code=types.UNSUPPORTED_PROTOCOL_VERSION, message=message, data=data.model_dump(mode="json"))


async def refuse_anonymous_modern(ctx, call_next):
    """Server middleware: every stateless 2026-07-28 request over HTTP without a principal is
    refused at once (`server/discover` included), so that a client that can fall back does."""
    if ctx.request is not None and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        principal = principal_of(ctx)
        if principal is None or not principal.distinct:
            raise _anonymous_modern(ctx)
    return await call_next(ctx)


def build_server(
    session_of: SessionOf,
    toolbox: Toolbox,
    *,
    instructions: str = "",
    state_key: bytes | None = None,
    state_ttl: float = 24 * 3600.0,
) -> Server:
    """The MCP server of the sessions `session_of(ctx)` gives, one per client (or one for
    all). Each session says whether its host's person may be asked (`may_ask`: else every
    side effect joins the approval queue, as with --queue or four eyes). `state_key` seals
    the state a 2026-07-28 question's retry brings back (the SDK's RequestStateBoundary:
    encrypted, bound to the call and the principal, good for `state_ttl` seconds): the run
    store's, so that every server of the store can take the answer; a key of this process
    only when None."""
    listed = tools_of(toolbox)

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams):
        name = params.name
        if name != CHECK_APPROVAL and toolbox.get(name) is None:
            # The spec's protocol error: the host's model asked for a tool the list never had.
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {visible(cut(name, 80), one_line=True)}")
        session = session_of(ctx)
        try:
            return await _call(ctx, session, params)
        except Exception:  # noqa: BLE001 - one bad call is the client's error, never the server's end
            log.exception("mcp: a call of %r failed", name[:40])
            return _result(Reply.of(fail("internal_error", t("mcp.internal_error"))))

    async def _call(ctx, session: McpSession, params: types.CallToolRequestParams):
        name, arguments = params.name, params.arguments
        if name == CHECK_APPROVAL:
            run_id = arguments.get("run_id") if isinstance(arguments, dict) else None
            return _result(await session.outcome(str(run_id)[:64] if run_id is not None else ""))
        if params.request_state is not None:  # a retry that brings the person's answer, or not yet
            response = (params.input_responses or {}).get(APPROVAL)
            approved = None if response is None else _approved(response)
            reply = await session.answer(params.request_state, name, arguments, approved)
        else:
            session.client = client_name(*_client_info(ctx))
            reply = await session.call(name, arguments, ask=session.may_ask and _asks_forms(ctx))
        question = reply.question
        if question is None:
            return _result(reply)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            session.hold(question)  # the retry brings it back, to this server or another of the store
            return _input_required(question)
        if ctx.session.can_send_request:
            return _result(await session.decide(question, lambda: _ask(ctx, question)))
        session.hold(question)  # nobody here can be asked: the queue's reply
        return _result(reply)

    server = Server(
        "orderbot",
        version=__version__,
        instructions=instructions or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(refuse_anonymous_modern)
    keys = [state_key] if state_key is not None else [os.urandom(32)]
    security = RequestStateSecurity(keys=keys, ttl=state_ttl)
    server.middleware.append(RequestStateBoundary(security, default_audience="orderbot"))
    return server


def _asks_forms(ctx) -> bool:
    """Whether the client declared form elicitation (an empty elicitation capability is the
    2025-06-18 spelling of forms): a URL-only client is never sent a form."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


async def _ask(ctx, question: Question) -> bool:
    try:
        answer = await ctx.session.elicit_form(_question(question), APPROVE_SCHEMA)
    except Exception:  # noqa: BLE001 - a client that cannot answer has not approved
        log.info("mcp: the client did not answer the approval question")
        return False
    return _approved(answer)


def _client_info(ctx) -> tuple[str | None, str | None]:
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return (info.name, info.version) if info is not None else (None, None)


def _approved(answer: Any) -> bool:
    """A yes only when the person accepted and said approve: nothing else runs a side effect."""
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
        return False
    return isinstance(answer.content, dict) and answer.content.get("approve") is True


def _question(question: Question) -> str:
    return visible(t("mcp.approve_prompt", action=question.description))


def _input_required(question: Question) -> types.InputRequiredResult:
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=_question(question), requested_schema=APPROVE_SCHEMA)
    )
    return types.InputRequiredResult(input_requests={APPROVAL: request}, request_state=question.state)


def _result(reply: Reply) -> types.CallToolResult:
    """The envelope as structured content and as its JSON text (for clients older than
    structured content), every string in it through `visible`: a client that parses the
    text finds no raw control either."""
    if _plain(reply.text):  # the usual case: no string in it that `visible` would change
        shown, text = reply.envelope, reply.text
    else:
        shown = _visible_tree(reply.envelope)
        text = reply.text if shown is reply.envelope else compact_json(shown)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=shown, is_error=reply.error)


def _plain(text: str) -> bool:
    """Whether no string of the JSON `text` holds a character `visible` escapes: the text is
    printable and has no escape that stands for a control other than newline and tab."""
    return text.isprintable() and "\\u" not in text and "\\r" not in text and "\\b" not in text and "\\f" not in text


def _visible_tree(value: Any) -> Any:
    """`value` with every string in it (keys too) passed through `visible`; `value` itself
    when that changes nothing (the usual case: its text need not be made again)."""
    if isinstance(value, str):
        shown = visible(value)
        return value if shown == value else shown
    if isinstance(value, dict):
        pairs = [(_visible_tree(k), _visible_tree(v)) for k, v in value.items()]
        same = all(k2 is k and v2 is v for (k2, v2), (k, v) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    if isinstance(value, list):
        items = [_visible_tree(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


# ---- transports -----------------------------------------------------------------------

MAX_LINE = DEFAULT_MAX_REQUEST_BODY_SIZE  # bytes of one message on standard input, as over HTTP
CHUNK = 1 << 16


def _pollable(fd: int) -> bool:
    """A pipe or a socket, which the event loop can wait on (a file never blocks for long; a
    terminal's flags are the shell's too, so it is not made non-blocking)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class StandardInput:
    """Standard input as the lines the SDK's stdio transport reads, read on the event loop:
    no thread waits on it, so a cancel (SIGTERM) ends the server whatever the client does
    with its end. A line longer than MAX_LINE is dropped whole, never held in memory."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        pollable = _pollable(self.fd) or os.isatty(self.fd)  # read() after a poll returns what is there
        buffer, dropping = bytearray(), False
        while True:
            if pollable:
                await anyio.wait_readable(self.fd)
                chunk = os.read(self.fd, CHUNK)
            else:
                chunk = await anyio.to_thread.run_sync(os.read, self.fd, CHUNK)
            if not chunk:
                if buffer and not dropping:
                    yield buffer.decode("utf-8", "replace")
                return
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                if not dropping:
                    buffer += chunk[start : end + 1]
                    if len(buffer) <= MAX_LINE:
                        yield buffer.decode("utf-8", "replace")
                    else:
                        log.warning("mcp: a message of over %d bytes on standard input was dropped", MAX_LINE)
                dropping = False
                buffer.clear()
                start = end + 1
            if not dropping:
                buffer += chunk[start:]
                if len(buffer) > MAX_LINE:
                    log.warning("mcp: a message of over %d bytes on standard input was dropped", MAX_LINE)
                    buffer.clear()
                    dropping = True


class StandardOutput:
    """Standard output as the SDK's stdio transport writes it (`write`, then `flush`), written
    on the event loop: a client that stops reading holds no thread (a cancel still ends the
    server at once), and a reply costs no trip to a worker thread and back."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pollable = _pollable(fd)  # then made non-blocking for as long as the server runs
        self._pending = bytearray()

    async def write(self, text: str) -> None:
        self._pending += text.encode("utf-8")

    async def flush(self) -> None:
        data = memoryview(bytes(self._pending))
        self._pending.clear()
        while data:
            if self._pollable:
                await anyio.wait_writable(self.fd)
                try:
                    written = os.write(self.fd, data)
                except BlockingIOError:
                    continue
            else:
                written = await anyio.to_thread.run_sync(os.write, self.fd, data)
            data = data[written:]


@contextlib.contextmanager
def _claimed(fd: int, diversion: Callable[[], int]) -> Iterator[int]:
    """The wire of standard input or output on a private descriptor, the standard one pointed
    elsewhere meanwhile (as the SDK's own transport does): nothing else in the process can
    read the client's bytes or write among orderbot's. A pipe or socket is non-blocking
    while it is served; everything is as it was afterwards."""
    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    flags = fcntl.fcntl(wire, fcntl.F_GETFL)
    other = diversion()
    try:
        os.dup2(other, fd)
    finally:
        os.close(other)
    try:
        if _pollable(wire):
            fcntl.fcntl(wire, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        yield wire
    finally:
        fcntl.fcntl(wire, fcntl.F_SETFL, flags)
        os.dup2(wire, fd)
        os.close(wire)


Interrupted = type[KeyboardInterrupt] | None  # what ended a server: SIGTERM's Terminated, Ctrl-C, or None


def serve_stdio(
    server: Server,
    *,
    on_end: Callable[[Interrupted], None] | None = None,
    serve_here: Callable[[asyncio.AbstractEventLoop, asyncio.Future], None] | None = None,
) -> Interrupted:
    """Serve one client on standard input and output until it closes them, or SIGTERM or
    Ctrl-C comes (returned: Terminated or KeyboardInterrupt). `on_end(interrupted)` is called
    on the event loop once serving has stopped. `serve_here(loop, server)`, when given, runs
    the session's engine on this thread between the loop's turns (McpSession.serve_here):
    one thread for the whole server, no hand-over between threads for a call."""
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}

    async def main(stdin: int, stdout: int) -> Interrupted:
        interrupted: Interrupted = None
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with anyio.create_task_group() as group:

                async def on_signal() -> None:
                    nonlocal interrupted
                    async for signum in signals:
                        interrupted = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
                        group.cancel_scope.cancel()
                        return

                group.start_soon(on_signal)
                streams = stdio_server(stdin=StandardInput(stdin), stdout=StandardOutput(stdout))
                async with streams as (read, write):
                    await server.run(read, write, server.create_initialization_options())
                group.cancel_scope.cancel()
        if on_end is not None:
            on_end(interrupted)
        return interrupted

    try:
        with (
            _claimed(0, lambda: os.open(os.devnull, os.O_RDONLY)) as stdin,
            _claimed(1, lambda: os.dup(2)) as stdout,
        ):
            if serve_here is None:
                return anyio.run(main, stdin, stdout)
            loop = asyncio.new_event_loop()
            try:
                serving = loop.create_task(main(stdin, stdout))
                serve_here(loop, serving)
                return loop.run_until_complete(serving)
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)  # the event loop left them at their defaults


def bearer(
    app: Callable[..., Awaitable[None]], auth: Authenticator, *, metadata: str | None = None
) -> Callable[..., Awaitable[None]]:
    """`app` behind bearer tokens (orderbot.mcp.identity): a request without exactly one
    `Authorization: Bearer <token>` gets 401 and reaches nothing when tokens are required; a
    token that is not valid (unknown, revoked, expired, forged) gets RFC 6750's
    `invalid_token`, so an OAuth client reads "wrong token", not "log in". Whom a valid token
    names goes with the request (the scope's PRINCIPAL, and as the SDK's authenticated user,
    so that a connection is served only to the token that opened it). Tokens are compared in
    constant time or by hash, and never logged. `metadata`: the URL of the RFC 9728 metadata,
    which anyone may read, and which every 401 names (`resource_metadata`)."""
    inner = AuthContextMiddleware(app)

    async def guarded(scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("path", "").startswith(WELL_KNOWN):
            await app(scope, receive, send)
            return
        given = [v for k, v in scope.get("headers") or () if k == b"authorization"]
        scheme, _, credential = given[0].partition(b" ") if len(given) == 1 else (b"", b"", b"")
        credential = credential.strip()
        try:
            if scheme.lower() != b"bearer" or not credential:
                if given or await anyio.to_thread.run_sync(auth.required):
                    await _unauthorized(send, None, NEEDS_TOKEN, metadata)
                    return
                await app(scope, receive, send)
                return
            principal = await anyio.to_thread.run_sync(auth.principal, credential.decode("utf-8", "replace"))
        except OrderbotError as exc:  # the run store cannot say: nobody is let in meanwhile
            log.warning("mcp: a request was refused, the tokens could not be checked: %s", exc)
            await _refused(send, 503, "unavailable", "the tokens cannot be checked now; try again")
            return
        if principal is None:
            await _unauthorized(send, "invalid_token", "the bearer token is not valid for this server", metadata)
            return
        # The SDK binds a connection to the principal that opened it (client, issuer, subject).
        access = AccessToken(token=principal.key or "shared", client_id=principal.key or "shared", scopes=[])
        scope = {**scope, PRINCIPAL: principal, "user": AuthenticatedUser(access), "auth": AuthCredentials([])}
        await inner(scope, receive, send)

    return guarded


async def _refused(send, status: int, error: str, description: str) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send, error: str | None, description: str, metadata: str | None = None) -> None:
    if error is None:  # no credentials at all: RFC 6750 3.1 names no error
        challenge = 'Bearer realm="orderbot"'
        document = {"error": "unauthorized", "error_description": description}
    else:
        challenge = f'Bearer realm="orderbot", error="{error}", error_description="{description}"'
        document = {"error": error, "error_description": description}
    if metadata is not None:  # RFC 9728 5.1: where a client finds who issues this server's tokens
        challenge += f', resource_metadata="{metadata}"'
    body = json.dumps(document).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", challenge.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def rebinding_guard(host: str) -> TransportSecuritySettings | None:
    """On loopback, the Host and Origin a request may name: the address the server is bound
    to (and `localhost` beside 127.0.0.1 and ::1, which it names), any port. A page of
    another name that a DNS rebinding pointed at this address is refused (421 or 403).
    None beyond loopback: there a token guards the server, and names are the proxy's."""
    if host == "localhost":
        names = ["localhost", "127.0.0.1", "[::1]"]
    else:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return None
        if not address.is_loopback:
            return None
        names = [f"[{address}]" if address.version == 6 else str(address)]
        if str(address) in ("127.0.0.1", "::1"):
            names.append("localhost")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


GRACE = 0.5  # seconds open connections get once SIGTERM or Ctrl-C came, before they are cut
SWEEPS = 60.0  # seconds at most between two looks for idle sessions


def ending_sessions(app, sessions: Sessions):
    """`app`, ending a client's session when it ends its connection (an HTTP DELETE with its
    Mcp-Session-Id that the SDK accepted)."""

    async def wrapped(scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await app(scope, receive, send)
            return
        header = MCP_SESSION_ID_HEADER.encode()
        connection = next((v.decode("latin-1") for k, v in scope.get("headers") or () if k == header), None)
        status = None

        async def watched(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await app(scope, receive, watched)
        if connection and status is not None and status < 400:
            await anyio.to_thread.run_sync(sessions.end, connection)

    return wrapped


async def sweeping(sessions: Sessions) -> None:
    """End idle sessions, looking every so often (a session's close waits for its run to
    close: off the event loop)."""
    while True:
        await anyio.sleep(min(SWEEPS, max(sessions.idle / 4, 1.0)))
        await anyio.to_thread.run_sync(sessions.sweep)


def serve_http(
    server: Server,
    sessions: Sessions,
    host: str,
    port: int,
    *,
    auth: Authenticator | None = None,
    ready=None,
    resource: tuple[str, str] | None = None,
) -> None:
    """Serve streamable HTTP on host:port (path /mcp) until interrupted, one session per
    client (`sessions`, idle ones ended); `ready(url)` is called once the socket listens.
    `resource`: this server's URL and the identity provider's issuer, published as the
    RFC 9728 protected-resource metadata the MCP authorization spec asks for."""
    import uvicorn

    lifespan = server.lifespan

    @contextlib.asynccontextmanager
    async def with_sweeps(app):
        async with lifespan(app) as state, anyio.create_task_group() as group:
            group.start_soon(sweeping, sessions)
            try:
                yield state
            finally:
                group.cancel_scope.cancel()

    server.lifespan = with_sweeps
    routes, metadata = [], None
    if resource is not None:
        url, issuer = _url(resource[0]), _url(resource[1])
        routes = create_protected_resource_routes(url, [issuer], resource_name="orderbot")
        metadata = str(build_resource_metadata_url(url))
    app = server.streamable_http_app(
        host=host,
        transport_security=rebinding_guard(host),
        # The SDK forgets a connection a little after orderbot ends its session (a GET stream
        # left open keeps it; the session is told it has ended then).
        session_idle_timeout=sessions.idle + SWEEPS,
        custom_starlette_routes=routes,
    )
    asgi = ending_sessions(app, sessions)
    asgi = bearer(asgi, auth, metadata=metadata) if auth is not None else asgi
    config = uvicorn.Config(
        asgi,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACE,
    )
    web = uvicorn.Server(config)
    if ready is not None:
        started = web.startup

        async def startup(sockets=None) -> None:
            await started(sockets)
            bound = web.servers[0].sockets[0].getsockname() if web.servers else (host, port)
            ready(f"http://{url_host(host)}:{bound[1]}/mcp")

        web.startup = startup
    web.run()


class _Url(BaseModel):
    # An issuer is compared as a string (RFC 8414): `https://idp.example` keeps no slash it never had.
    model_config = ConfigDict(url_preserve_empty_path=True)
    url: AnyHttpUrl


def _url(text: str) -> AnyHttpUrl:
    return _Url(url=text).url


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
