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

from orderbot.errors import EmptyReply, ModelResponseError
from orderbot.items import FunctionCall, FunctionCallOutput, Item, Message
from orderbot.models._http import Classifier, RetryPolicy, as_dict, call_within, make_client
from orderbot.models.base import ModelRequest, Turn, Usage, output_token_cap, replayable, server_name

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
    ) -> None:
        self.client = client
        self.name = name
        self.classify = classify
        self.retry = retry or RetryPolicy()
        self.max_output_tokens = max_output_tokens  # sent with each request, so the server stops in time
        # OpenAI's own service wants max_completion_tokens (its reasoning models refuse
        # max_tokens); llama.cpp, Ollama and vLLM all know max_tokens.
        self.token_field = token_field
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
        )

    def respond(self, request: ModelRequest) -> Turn:
        body: dict[str, Any] = {"model": self.name, "messages": to_messages(request.instructions, request.items)}
        if request.tools:  # an empty list upsets some servers
            body["tools"] = [chat_tool(spec) for spec in request.tools]
        if self.max_output_tokens:
            body[self.token_field] = self.max_output_tokens

        def send(left: float) -> Turn:  # parsed inside the retry loop: an empty reply is tried again
            response = self.client.chat.completions.create(**body, timeout=left)
            return to_turn(as_dict(response), lambda: f"call_chat_{next(self._ids)}")

        return call_within(send, request.timeout, self.classify, self.retry)


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
