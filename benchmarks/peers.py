"""Other agent frameworks running the loop benchmark's scenario, when they are installed.

    pip install pydantic-ai-slim openai-agents    # optional: neither is a dependency

The scenario is the plain loop's: one `get_order_status("ORD-1001")` call proposed by the
model, the plain loop's tool run on it, then the answer. Each framework gets it from its own
test model, building fresh response objects on every request (as the plain loop's
scripted client and orderbot's ScriptedModel do), so the model itself costs next to
nothing and what is measured is the framework's loop. Tracing and instrumentation are
off where the framework has them. Both frameworks are async: every run is awaited on one
event loop kept for the whole benchmark, as an async application would (their `run_sync`
would add an event loop's creation to every run). `available()` returns the runners that
could be built: a framework that is missing, or whose API has moved, is left out with
the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from plain_loop import get_order_status

QUESTION = "请查询订单 ORD-1001 的状态。"
ANSWER = "订单 ORD-1001 的状态是：已发货。"
ARGUMENTS = '{"order_id": "ORD-1001"}'
INSTRUCTIONS = "你是订单查询助手。只能查询订单，不能修改数据。如果缺少订单号，直接向用户询问；完成查询后给出简洁答案。"


def pydantic_ai() -> Callable[[], Awaitable[str]]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages, info) -> ModelResponse:
        answered = any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
        if answered:
            return ModelResponse(parts=[TextPart(ANSWER)])
        return ModelResponse(parts=[ToolCallPart("get_order_status", ARGUMENTS, tool_call_id="call_1")])

    agent = Agent(FunctionModel(respond), instructions=INSTRUCTIONS)
    agent.tool_plain(get_order_status)

    async def run() -> str:
        return (await agent.run(QUESTION)).output

    return run


def openai_agents() -> Callable[[], Awaitable[str]]:
    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    set_tracing_disabled(True)

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
            answered = isinstance(input, list) and any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in input
            )
            if answered:
                text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="msg_1", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            else:
                output = [
                    ResponseFunctionToolCall(
                        type="function_call", call_id="call_1", name="get_order_status", arguments=ARGUMENTS
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError

    agent = Agent(
        name="orders", instructions=INSTRUCTIONS, tools=[function_tool(get_order_status)], model=ScriptedModel()
    )

    async def run() -> str:
        return (await Runner.run(agent, QUESTION)).final_output

    return run


PEERS: dict[str, Callable[[], Callable[[], Awaitable[str]]]] = {
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
}


_loop = asyncio.Runner()  # one event loop for every run of every peer


def available() -> tuple[dict[str, Callable[[], str]], dict[str, str]]:
    """(runners that answer the scenario, {name: why not} for the others)."""
    runners, missing = {}, {}
    for name, build in PEERS.items():
        try:
            run = _on_loop(build())
            answer = run()
        except ImportError as exc:
            missing[name] = f"not installed ({exc.name})"
            continue
        except Exception as exc:  # noqa: BLE001 - a peer whose API moved is reported, not fatal
            missing[name] = f"could not run the scenario ({type(exc).__name__}: {str(exc)[:80]})"
            continue
        if answer != ANSWER:
            missing[name] = f"answered {answer!r:.60}, not the scripted answer"
            continue
        runners[name] = run
    return runners, missing


def _on_loop(run: Callable[[], Awaitable[str]]) -> Callable[[], str]:
    return lambda: _loop.run(run())
