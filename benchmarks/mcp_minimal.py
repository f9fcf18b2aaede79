"""The baseline of benchmarks/mcp_calls.py: a minimal MCP server of the same SDK over the same
orders file, `python benchmarks/mcp_minimal.py ORDERS`, served on standard input/output.

One tool, `get_order_status`, listed with the shape `orderbot mcp` lists its tools (a title,
its input schema, orderbot's envelope as output schema) and answering with the same shape (the
envelope as text and as structured content), so the client does the same work on both sides.
What it leaves out is everything orderbot adds per call: argument validation beyond the SDK,
identity, the shop's policy, the engine, the run record, escaping.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
# orderbot's output schema (orderbot.mcp.server.ENVELOPE_SCHEMA, which a smoke test holds this to):
# the client checks each result against it, so both sides give it the same work.
ENVELOPE = {
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


def main(path: str) -> None:
    orders = {o["order_id"]: o for o in json.loads(Path(path).read_text(encoding="utf-8"))["orders"]}
    tool = types.Tool(
        name="get_order_status",
        title="Get order status",
        description="The status of one order.",
        input_schema=SCHEMA,
        output_schema=ENVELOPE,
    )

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        order = orders.get((params.arguments or {}).get("order_id"))
        if order is None:
            envelope = {"ok": False, "code": "not_found", "error": "no such order"}
        else:
            envelope = {"ok": True, "data": {"order_id": order["order_id"], "status": order["status"]}}
        text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=envelope, is_error=not envelope["ok"]
        )

    server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1])
