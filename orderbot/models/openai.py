"""The `openai` provider: the Responses API through the official SDK.

The run's items go out as Responses input items and the response's output comes back as
items: `function_call` -> FunctionCall, `message` -> an assistant Message, anything else
(e.g. a reasoning item) -> a ProviderItem kept verbatim.

Reasoning models pair a reasoning item with the items that followed it by their ids
(`fc_...`, `msg_...`), and reject a request that sends one without the other. The
canonical items carry no provider ids, so this model remembers, for the items it
produced itself, what the API sent; a response's items go back exactly as received, or,
when they came from elsewhere (a resumed run, another provider), without their reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from orderbot.errors import EmptyReply, IncompleteReply, ModelResponseError
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, ProviderItem
from orderbot.loop.model import ModelRequest, Turn, Usage
from orderbot.models._streaming import INCOMPLETE, Reply, WireModel
from orderbot.models.base import replayable, server_name

OUTPUT_TYPES = (FunctionCall, ProviderItem)  # with assistant messages: what a response produces


class ResponsesModel(WireModel):
    provider = "openai"

    def __init__(self, client: Any, name: str, **options: Any) -> None:
        super().__init__(client, name, **options)
        # id(item) -> (item, the output item as the API sent it); the item is held so its id stays unique
        self._sent: dict[int, tuple[Item, dict]] = {}

    @staticmethod
    def endpoint_of(client: Any) -> Any:
        return client.responses

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.name,
            "instructions": request.instructions,
            "input": to_input(request.items, self._original),
        }
        if request.tools:
            body["tools"] = list(request.tools)  # already Responses-shaped, strict
        if self.max_output_tokens:
            body["max_output_tokens"] = self.max_output_tokens
        return body

    def parse(self, response: dict) -> Reply:
        turn, originals = to_turn(response)
        return Reply(turn, tuple(originals))

    def events(self) -> ResponseStream:
        return ResponseStream()

    def received(self, reply: Reply) -> None:
        for item, original in zip(reply.turn.items, reply.sent, strict=False):
            self._sent[id(item)] = (item, original)

    def _original(self, item: Item) -> dict | None:
        kept = self._sent.get(id(item))
        return kept[1] if kept is not None and kept[0] is item else None


class ResponseStream:
    """Responses API stream events: the deltas are counted (and shown) as they come; the
    last event carries the whole response, which is read as a non-streamed one."""

    ENDS = ("response.completed", "response.incomplete", "response.failed")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.arguments: list[str] = []
        self.size = 0  # characters of text and arguments so far: what the size cap counts
        self.final: dict | None = None

    def add(self, event: dict) -> str:
        kind, delta = event.get("type"), event.get("delta")
        if kind == "error":
            raise ModelResponseError("model.error_mid_stream", code=str(event.get("code") or "-"))
        if kind in self.ENDS and isinstance(event.get("response"), dict):
            self.final = event["response"]
        if not isinstance(delta, str):
            return ""
        if kind == "response.output_text.delta":
            self.text.append(delta)
        elif kind == "response.function_call_arguments.delta":
            self.arguments.append(delta)
        else:
            return ""
        self.size += len(delta)
        return delta if kind == "response.output_text.delta" else ""

    def partial(self) -> Turn:
        """What arrived before the stream was cut for size: only its size matters now."""
        text, arguments = "".join(self.text), "".join(self.arguments)
        items: list[Item] = [Message(role="assistant", content=text)] if text else []
        if arguments:
            items.append(FunctionCall(call_id="cut", name="", arguments=arguments))
        return Turn(tuple(items))

    def response(self, ending: str) -> dict:
        if self.final is None:
            raise IncompleteReply(INCOMPLETE)
        return self.final


# ---- items -> input ---------------------------------------------------------------------


def to_input(items: Sequence[Item], original=lambda item: None) -> list[dict]:
    """Responses input items. `original(item)` gives back what the API sent, if known."""
    out: list[dict] = []
    for group in _groups(items):
        if not _is_output(group[0]):
            out.extend(_plain(item) for item in group)
            continue
        sent = [original(item) for item in group]
        if all(s is not None for s in sent):
            out.extend(map(_replayable, sent))  # as received: reasoning and its ids stay paired
        else:  # provenance unknown: drop the provider's items, send ours without ids
            out.extend(_plain(item) for item in group if not isinstance(item, ProviderItem))
    return out


def _replayable(raw: dict) -> dict:
    """An output item as received, but a function call's arguments always a JSON object."""
    if raw.get("type") == "function_call" and isinstance(raw.get("arguments"), str):
        arguments = replayable(raw["arguments"])
        if arguments is not raw["arguments"]:
            return {**raw, "arguments": arguments}
    return raw


def _plain(item: Item) -> dict:
    if isinstance(item, Message):
        return {"type": "message", "role": item.role, "content": item.content}
    if isinstance(item, FunctionCall):
        arguments = replayable(item.arguments)
        return {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": arguments}
    if isinstance(item, FunctionCallOutput):
        return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
    raise TypeError(f"not a plain item: {type(item).__name__}")


def _is_output(item: Item) -> bool:
    return isinstance(item, OUTPUT_TYPES) or (isinstance(item, Message) and item.role == "assistant")


def _groups(items: Iterable[Item]) -> list[list[Item]]:
    """Runs of consecutive model output (one response each) and of everything else."""
    groups: list[list[Item]] = []
    for item in items:
        if isinstance(item, ProviderItem) and item.provider != ResponsesModel.provider:
            continue  # another provider's private item means nothing here
        if groups and _is_output(groups[-1][0]) == _is_output(item):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


# ---- response -> turn -------------------------------------------------------------------


def to_turn(response: dict) -> tuple[Turn, list[dict]]:
    """The turn, and for each of its items the output item it came from."""
    if response.get("status") == "failed" or response.get("error"):
        error = response.get("error") or {}
        code = error.get("code") if isinstance(error, dict) else None
        raise ModelResponseError("model.failed_response", code=str(code or "-"))
    output = response.get("output")
    if not isinstance(output, list):
        raise ModelResponseError("model.no_output")
    items: list[Item] = []
    originals: list[dict] = []
    for raw in output:
        if not isinstance(raw, dict):
            raise ModelResponseError("model.output_not_object")
        items.append(_item(raw))
        originals.append(raw)
    turn = Turn(
        tuple(items),
        _usage(response.get("usage")),
        # "incomplete": stopped by max_output_tokens (or a content filter) part way through
        truncated=response.get("status") == "incomplete",
        server_model=server_name(response.get("model")),
    )
    if not turn.calls and not turn.text and not turn.truncated:
        raise EmptyReply("model.empty")
    return turn, originals


def _item(raw: dict) -> Item:
    kind = raw.get("type")
    if kind == "function_call":
        name, call_id, arguments = raw.get("name"), raw.get("call_id"), raw.get("arguments")
        if not isinstance(name, str) or not isinstance(call_id, str):
            raise ModelResponseError("model.call_without_name")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        return FunctionCall(call_id=call_id, name=name, arguments=arguments)
    if kind == "message" and raw.get("role") == "assistant":
        return Message(role="assistant", content=_text(raw.get("content")))
    return ProviderItem(provider=ResponsesModel.provider, data=raw)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict):
            if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                parts.append(part["refusal"])
    return "".join(parts)


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    try:
        return Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
    except (TypeError, ValueError):
        return None
