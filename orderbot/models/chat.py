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
import logging
import re
from collections.abc import Sequence
from itertools import count
from typing import Any

from orderbot.errors import EmptyReply, IncompleteReply, ModelResponseError
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message
from orderbot.loop.model import ModelRequest, Turn, Usage
from orderbot.models._http import (
    Classifier,
    Oversized,
    RetryPolicy,
    Streams,
    as_dict,
    bytes_read,
    call_within,
    is_event_stream,
    make_client,
    open_stream,
    plain_body,
    read_events,
    refused_streaming,
    whole_body,
)
from orderbot.models.base import output_token_cap, replayable, server_name

log = logging.getLogger("orderbot")

# Some local reasoning models put their thinking inline before the answer.
THINKING = re.compile(r"^\s*<think>.*?</think>\s*", re.S)


class ChatModel:
    provider = "chat"

    def __init__(
        self,
        client: Any,
        name: str,
        *,
        classify: Classifier,
        retry: RetryPolicy | None = None,
        max_output_tokens: int | None = None,
        token_field: str = "max_tokens",
        max_chars: int = 16_000,
        stream: bool = True,
    ) -> None:
        self.client = client
        self.name = name
        self.classify = classify
        self.retry = retry or RetryPolicy()
        self.max_output_tokens = max_output_tokens  # sent with each request, so the server stops in time
        # OpenAI's own service wants max_completion_tokens (its reasoning models refuse
        # max_tokens); llama.cpp, Ollama and vLLM all know max_tokens.
        self.token_field = token_field
        self.max_chars = max_chars  # the response-size cap: a stream is closed once it passes it
        self.stream = stream  # turned off for the rest of the run when the server does not stream
        self._ids = count(1)  # for servers that leave tool call ids out

    @classmethod
    def from_settings(cls, settings) -> ChatModel:
        client = make_client(settings, cls.provider)
        client.chat.completions  # noqa: B018 - the SDK imports this lazily; do it before the run's clock starts
        secret = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        return cls(
            client,
            settings.model,
            classify=Classifier(cls.provider, settings.base_url, (secret,)),
            max_output_tokens=output_token_cap(settings),
            token_field="max_tokens" if settings.base_url else "max_completion_tokens",
            max_chars=settings.max_response_chars,
        )

    def respond(self, request: ModelRequest) -> Turn:
        body: dict[str, Any] = {"model": self.name, "messages": to_messages(request.instructions, request.items)}
        if request.tools:  # an empty list upsets some servers
            body["tools"] = [chat_tool(spec) for spec in request.tools]
        if self.max_output_tokens:
            body[self.token_field] = self.max_output_tokens

        streams = Streams()

        def send(left: float) -> Turn:  # parsed inside the retry loop: an empty reply is tried again
            try:
                if self.stream:
                    turn = self._streamed(body, left, streams, request.on_text)
                    if turn is not None:
                        return turn
                return to_turn(
                    as_dict(plain_body(self.client.chat.completions, body, left, self.max_chars)), self._new_id
                )
            except Oversized as cut:  # a turn all the same: the engine stops the run as response_too_large
                return cut.turn

        return call_within(
            send, request.timeout, self.classify, self.retry, on_overrun=streams.close_all, on_retry=request.on_retry
        )

    def _new_id(self) -> str:
        return f"call_chat_{next(self._ids)}"

    def _streamed(self, body: dict, left: float, streams: Streams, on_text) -> Turn | None:
        """The turn, read as it streams in; None when the server refused to stream (400):
        then this request, and every later one of the run, goes without streaming."""
        try:
            stream = open_stream(
                self.client.chat.completions, {**body, "stream_options": {"include_usage": True}}, left
            )
        except Exception as exc:
            if not refused_streaming(exc):
                raise
            log.info("the model service refused a streamed request; continuing without streaming")
            self.stream = False
            return None
        streams.add(stream)
        if not is_event_stream(stream):  # it answered with the whole reply: fine, and no need to ask again
            self.stream = False
            return to_turn(as_dict(whole_body(stream, self.max_chars)), self._new_id)
        reply = ChatStream()
        ending = read_events(stream, reply.add, lambda: reply.size, self.max_chars, on_text)
        if ending == "cut":
            return reply.partial()._replace(received_bytes=bytes_read(stream))
        if ending == "closed" and reply.finish is None:
            raise IncompleteReply("the model service ended the stream before the response was complete")
        return to_turn(reply.completion(), self._new_id)._replace(received_bytes=bytes_read(stream))


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
        raise ModelResponseError("the model service sent a completion without choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ModelResponseError("the model service sent a completion without a message")
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
            raise ModelResponseError("the model service sent a tool call without a function name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some servers send an object instead of JSON text
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else new_id()
        items.append(FunctionCall(call_id=call_id, name=function["name"], arguments=arguments))
    truncated = choices[0].get("finish_reason") == "length"
    if not items and not truncated:
        raise EmptyReply("the model returned nothing (an empty reply with no text and no tool call)")
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
