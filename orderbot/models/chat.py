"""The `chat` provider: Chat Completions, for OpenAI-compatible servers.

Ollama, vLLM, llama.cpp's server and LM Studio speak Chat Completions; many of them lack
the Responses API. The run's items are translated both ways:

    Message(user/assistant)           <-> {"role": "user"/"assistant", "content": ...}
    FunctionCall items of one turn    <-> one assistant message's `tool_calls`
    FunctionCallOutput                <-> {"role": "tool", "tool_call_id": ..., "content": ...}

Provider items (another provider's reasoning, say) mean nothing here and are left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import count
from typing import Any

from orderbot.errors import EmptyReply, IncompleteReply, ModelResponseError
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message
from orderbot.loop.model import ModelRequest, Turn, Usage
from orderbot.models._streaming import INCOMPLETE, Reply, WireModel
from orderbot.models.base import replayable, server_name

# Some local reasoning models put their thinking inline before the answer.
THINKING = re.compile(r"^\s*<think>.*?</think>\s*", re.S)


class ChatModel(WireModel):
    provider = "chat"

    def __init__(self, client: Any, name: str, *, token_field: str = "max_tokens", **options: Any) -> None:
        super().__init__(client, name, **options)
        # OpenAI's own service wants max_completion_tokens (its reasoning models refuse
        # max_tokens); llama.cpp, Ollama and vLLM all know max_tokens.
        self.token_field = token_field
        self._ids = count(1)  # for servers that leave tool call ids out

    @staticmethod
    def endpoint_of(client: Any) -> Any:
        return client.chat.completions

    @classmethod
    def options(cls, settings) -> dict[str, Any]:
        return {"token_field": "max_tokens" if settings.base_url else "max_completion_tokens"}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.name, "messages": to_messages(request.instructions, request.items)}
        if request.tools:  # an empty list upsets some servers
            body["tools"] = [chat_tool(spec) for spec in request.tools]
        if self.max_output_tokens:
            body[self.token_field] = self.max_output_tokens
        return body

    def streamed_body(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "stream_options": {"include_usage": True}}

    def parse(self, response: dict) -> Reply:
        return Reply(to_turn(response, self._new_id))

    def events(self) -> ChatStream:
        return ChatStream()

    def _new_id(self) -> str:
        return f"call_chat_{next(self._ids)}"


class ChatStream:
    """Chat Completions chunks put back together into the completion they stream."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict] = {}  # tool call index -> id, name, arguments so far
        self.size = 0  # characters of text, names and arguments: what the size cap counts
        self.finish: str | None = None
        self.head: dict = {}  # model, system_fingerprint
        self.usage: dict | None = None

    def add(self, chunk: dict) -> str:
        for key in ("model", "system_fingerprint"):
            if chunk.get(key):
                self.head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        text = ""
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str):
                text += delta["content"]
            for raw in delta.get("tool_calls") or []:
                self._add_call(raw)
            self.finish = choice.get("finish_reason") or self.finish
        self.text.append(text)
        self.size += len(text)
        return text

    def _add_call(self, raw: object) -> None:
        if not isinstance(raw, dict):
            return
        slot = self.calls.setdefault(raw.get("index", len(self.calls)), {"id": None, "name": "", "arguments": ""})
        slot["id"] = raw.get("id") or slot["id"]
        function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
        for key in ("name", "arguments"):
            if isinstance(function.get(key), str):
                slot[key] += function[key]
                self.size += len(function[key])

    def completion(self) -> dict:
        calls = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(self.calls.items(), key=lambda kv: str(kv[0]))
        ]
        message = {"role": "assistant", "content": "".join(self.text), "tool_calls": calls}
        return {
            **self.head,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        }

    def partial(self) -> Turn:
        """What arrived before the stream was cut for size: only its size matters now."""
        text = "".join(self.text)
        calls = [
            FunctionCall(call_id=c["id"] or "cut", name=c["name"], arguments=c["arguments"])
            for c in self.calls.values()
        ]
        return Turn((*([Message(role="assistant", content=text)] if text else []), *calls))

    def response(self, ending: str) -> dict:
        if ending == "closed" and self.finish is None:
            raise IncompleteReply(INCOMPLETE)
        return self.completion()


def chat_tool(spec: dict) -> dict:
    """A Responses-shaped function spec in Chat Completions' nested form."""
    function = {key: spec[key] for key in ("name", "description", "parameters", "strict") if key in spec}
    return {"type": "function", "function": function}


def to_messages(instructions: str, items: Sequence[Item]) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": instructions}]
    for item in items:
        if isinstance(item, Message):
            messages.append({"role": item.role, "content": item.content})
        elif isinstance(item, FunctionCall):
            call = {
                "id": item.call_id,
                "type": "function",
                "function": {"name": item.name, "arguments": replayable(item.arguments)},
            }
            last = messages[-1]
            if last["role"] == "assistant":  # the same turn's text or calls: one message holds them all
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(item, FunctionCallOutput):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
    return messages


def to_turn(response: dict, new_id=lambda: "call_chat") -> Turn:
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelResponseError("model.no_choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ModelResponseError("model.no_message")
    items: list[Item] = []
    text = message.get("content")
    if not isinstance(text, str) or not text.strip():
        text = message.get("refusal") if isinstance(message.get("refusal"), str) else ""
    text = THINKING.sub("", text)
    if text.strip():
        items.append(Message(role="assistant", content=text))
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ModelResponseError("model.call_without_name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some servers send an object instead of JSON text
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else new_id()
        items.append(FunctionCall(call_id=call_id, name=function["name"], arguments=arguments))
    truncated = choices[0].get("finish_reason") == "length"
    if not items and not truncated:
        raise EmptyReply("model.empty")
    return Turn(
        tuple(items),
        _usage(response.get("usage")),
        truncated=truncated,
        server_model=server_name(response.get("model")),
        fingerprint=server_name(response.get("system_fingerprint")),
    )


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    try:
        return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return None
