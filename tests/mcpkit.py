"""`orderbot mcp`'s server in the test process, driven by the mcp package's own client.

`Served` builds what the command builds (the shop's session, a run store, the runner, the MCP
session and its server) over a source the test owns (`now`: the call window's clock), and `client()` connects the SDK's
`Client` to it in-process: the same JSON-RPC handlers, tool listing and results as over
stdio or HTTP, without a process (tests/mcp/test_mcp_stdio.py and test_mcp_http.py start the
real command once each). `mode="legacy"` is the handshake era, where the server asks the
person in-band; `"auto"` negotiates 2026-07-28, where it answers with an InputRequiredResult.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from runkit import open_store

from orderbot.commands.mcp import compose
from orderbot.mcp import server
from orderbot.settings import load_settings
from orderbot.shops.session import session_over
from orderbot.shops.source import parse_source

Elicit = Callable[..., Awaitable[types.ElicitResult]]


CANCEL = {"order_id": "ORD-1002", "reason": "no longer needed"}
ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])


def status(orders, order_id: str = "ORD-1002") -> str:
    document = json.loads(orders.read_text(encoding="utf-8"))
    return next(o["status"] for o in document["orders"] if o["order_id"] == order_id)


def approving(asked: list[str]) -> Elicit:
    """A person in the host who approves whatever they are asked, noting each question."""

    async def answer(ctx, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    return answer


def answering(action: str, asked: list[str]) -> Elicit:
    async def answer(ctx, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action)

    return answer


class Served:
    """One MCP session over `source` (a path or URL), recorded in `state`, composed as
    `orderbot mcp` composes it (settings: the command's, e.g. max_tool_calls, four_eyes)."""

    def __init__(
        self,
        source,
        state: Path,
        *,
        user: str | None = None,
        queue: bool = False,
        clock=None,
        window: float = 60.0,
        now=None,
        **settings,
    ):
        self.shop = session_over(parse_source(source), writable=True, user=user)
        self.runs = open_store(state)
        chosen = load_settings(**{"max_tool_calls": 20, "timeout": 60.0, "user": user, **settings})
        self.sessions, self.server = compose(
            server, chosen, self.runs, self.shop, queue=queue, window=window, clock=clock, now=now
        )
        self.session = self.sessions.default

    def client(self, *, mode: str = "legacy", elicitation: Elicit | None = None) -> Client:
        return Client(self.server, mode=mode, elicitation_callback=elicitation)

    def drive(self, script: Callable[[Client], Awaitable[object]], **client) -> object:
        """Run `script(client)` on a connected client, then end the session as a host would."""

        async def main():
            async with self.client(**client) as connected:
                return await script(connected)

        try:
            return anyio.run(main)
        finally:
            self.session.close()

    def close(self) -> None:
        self.session.close()
        self.shop.store.close()


def envelope(result: types.CallToolResult) -> dict:
    """The envelope a call's text holds (what a model of a run would have read); the same
    as its structured content."""
    (content,) = result.content
    document = json.loads(content.text)
    assert result.structured_content == document
    return document


class Clock:
    """A clock a test moves by hand (the call window's)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Person:
    """The person in the host: asked, they answer (`action`, approving) only when the test
    lets them (`may_answer`), whatever the client does meanwhile."""

    def __init__(self, action: str = "accept") -> None:
        self.asked = anyio.Event()
        self.may_answer = anyio.Event()
        self.questions: list[str] = []
        self.action = action

    async def __call__(self, ctx, params) -> types.ElicitResult:
        self.questions.append(params.message)
        self.asked.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(60):
            await self.may_answer.wait()
        return types.ElicitResult(action=self.action, content={"approve": True})


async def fan_out_while_asked(client, person: Person, cancel: dict, lookups: int = 100) -> tuple[list, int]:
    """A host's day: a side effect whose person is asked, and, while they think, `lookups`
    lookups sent at once. Returns every reply (the lookups', then the side effect's) and how
    many lookups were answered before the person was let answer."""
    replies: list = []

    async def call(name: str, arguments: dict) -> None:
        replies.append(await client.call_tool(name, arguments))

    async with anyio.create_task_group() as group:
        group.start_soon(call, "cancel_order", cancel)
        with anyio.fail_after(60):
            await person.asked.wait()
        with anyio.fail_after(60):  # answered while the person still thinks: nothing waits for them
            async with anyio.create_task_group() as fan:
                for _ in range(lookups):
                    fan.start_soon(call, "get_order_status", {"order_id": "ORD-1001"})
        answered = len(replies)
        person.may_answer.set()
    return replies, answered
