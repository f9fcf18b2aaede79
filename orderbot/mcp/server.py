"""The MCP face of a session: the official SDK's low-level server over orderbot.mcp.session.

The only module that imports the `mcp` package (the `mcp` extra). It lists the session
shop's tools with their strict schemas and annotations (a lookup is `readOnlyHint`, a side
effect `destructiveHint`), plus `check_approval`; it hands each call to the session, which
runs it through the engine, and sends back the envelope text through `visible`, so nothing
raw from a store reaches the client. A side effect's question goes to the person in the
host by elicitation: in-band on connections that can send a server request (the handshake
era), as an `InputRequiredResult` that the client answers by retrying the call on
2026-07-28 connections. Streamable HTTP is served by uvicorn; `bearer` guards it.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from orderbot import __version__
from orderbot.i18n import t
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.envelope import fail
from orderbot.mcp.session import Asking, McpSession, Reply, client_name
from orderbot.ui.describe import action_words
from orderbot.ui.escape import visible

log = logging.getLogger("orderbot")

CHECK_APPROVAL = "check_approval"
APPROVAL = "approval"  # the key of the question in an InputRequiredResult
APPROVE_SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Carry out this action."}},
    "required": ["approve"],
}


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
                name=tool.name, description=tool.description, input_schema=spec["parameters"], annotations=annotations
            )
        )
    check = {
        "type": "object",
        "properties": {"run_id": {"type": "string", "description": t("mcp.run_id")}},
        "required": ["run_id"],
        "additionalProperties": False,
    }
    listed.append(
        types.Tool(
            name=CHECK_APPROVAL,
            description=t("mcp.check_approval"),
            input_schema=check,
            annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
        )
    )
    return listed


def build_server(session: McpSession, toolbox: Toolbox, *, instructions: str = "", elicit: bool = True) -> Server:
    """The MCP server of one session. `elicit`: ask the host's person when the client can
    (False: every side effect joins the approval queue, as with --queue or four eyes)."""
    listed = tools_of(toolbox)

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams):
        try:
            return await _call(ctx, params)
        except Exception:  # noqa: BLE001 - one bad call is the client's error, never the server's end
            log.exception("mcp: a call of %r failed", params.name[:40])
            return _result(Reply.of(fail("internal_error", t("mcp.internal_error"))))

    async def _call(ctx, params: types.CallToolRequestParams):
        name, arguments = params.name, params.arguments
        if name == CHECK_APPROVAL:
            run_id = arguments.get("run_id") if isinstance(arguments, dict) else None
            return _result(await _off(session.outcome, str(run_id)[:64] if run_id is not None else ""))
        if params.request_state is not None:  # a retry that brings the person's answer
            response = (params.input_responses or {}).get(APPROVAL)
            reply = await _off(session.answer, params.request_state, name, arguments, _approved(response))
        else:
            capabilities = ctx.session.client_capabilities
            can_ask = elicit and capabilities is not None and capabilities.elicitation is not None
            session.client = client_name(*_client_info(ctx))
            reply = await _off(session.call, name, arguments, elicit=can_ask)
        while reply.asking is not None:
            asking = reply.asking
            if not ctx.session.can_send_request:
                session.detach(asking)
                return _input_required(asking)
            try:
                answer = await ctx.session.elicit_form(_question(asking), APPROVE_SCHEMA)
            except Exception:  # noqa: BLE001 - a client that cannot answer has not approved
                log.info("mcp: the client did not answer the approval question")
                answer = None
            reply = await _off(session.answer, asking.token, name, arguments, _approved(answer))
        return _result(reply)

    return Server(
        "orderbot",
        version=__version__,
        instructions=instructions or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _off(function: Callable[..., Reply], *args: Any, **kwargs: Any) -> Reply:
    """Run a session call in a worker thread: the engine's work never blocks the server."""
    return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))


def _client_info(ctx) -> tuple[str | None, str | None]:
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return (info.name, info.version) if info is not None else (None, None)


def _approved(answer: Any) -> bool:
    """A yes only when the person accepted and said approve: nothing else runs a side effect."""
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
        return False
    return isinstance(answer.content, dict) and answer.content.get("approve") is True


def _question(asking: Asking) -> str:
    return visible(t("mcp.approve_prompt", action=action_words(asking.pending.description)))


def _input_required(asking: Asking) -> types.InputRequiredResult:
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=_question(asking), requested_schema=APPROVE_SCHEMA)
    )
    return types.InputRequiredResult(input_requests={APPROVAL: request}, request_state=asking.token)


def _result(reply: Reply) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=visible(reply.text))], is_error=reply.error)


# ---- transports -----------------------------------------------------------------------


def serve_stdio(server: Server) -> None:
    """Serve one client on standard input and output until it closes them."""

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def bearer(app: Callable[..., Awaitable[None]], token: str) -> Callable[..., Awaitable[None]]:
    """`app` behind a bearer token: a request without `Authorization: Bearer <token>` gets
    401 and reaches nothing. The token is compared in constant time and never logged."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error":"unauthorized"}'
                headers = [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def serve_http(server: Server, host: str, port: int, *, token: str | None = None, ready=None) -> None:
    """Serve streamable HTTP on host:port (path /mcp) until interrupted; `ready(url)` is
    called once the socket listens."""
    import uvicorn

    app = server.streamable_http_app(host=host)
    asgi = bearer(app, token) if token else app
    config = uvicorn.Config(asgi, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    web = uvicorn.Server(config)
    if ready is not None:
        started = web.startup

        async def startup(sockets=None) -> None:
            await started(sockets)
            bound = web.servers[0].sockets[0].getsockname() if web.servers else (host, port)
            ready(f"http://{_url_host(host)}:{bound[1]}/mcp")

        web.startup = startup
    web.run()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
