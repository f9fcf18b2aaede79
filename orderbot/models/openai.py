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
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from orderbot.errors import EmptyReply, IncompleteReply, ModelResponseError
from orderbot.loop.items import FunctionCall, FunctionCallOutput, Item, Message, ProviderItem
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
OUTPUT_TYPES = (FunctionCall, ProviderItem)  # with assistant messages: what a response produces


class ResponsesModel:
    provider = "openai"

    def __init__(
        self,
        client: Any,
        name: str,
        *,
        classify: Classifier,
        retry: RetryPolicy | None = None,
        max_output_tokens: int | None = None,
        max_chars: int = 16_000,
        stream: bool = True,
    ) -> None:
        self.client = client
        self.name = name
        self.classify = classify
        self.retry = retry or RetryPolicy()
        self.max_output_tokens = max_output_tokens  # sent with each request, so the server stops in time
        self.max_chars = max_chars  # the response-size cap: a stream is closed once it passes it
        self.stream = stream  # turned off for the rest of the run when the server does not stream
        # id(item) -> (item, the output item as the API sent it); the item is held so its id stays unique
        self._sent: dict[int, tuple[Item, dict]] = {}

    @classmethod
    def from_settings(cls, settings) -> ResponsesModel:
        client = make_client(settings, cls.provider)
        client.responses  # noqa: B018 - the SDK imports this lazily; do it before the run's clock starts
        secret = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        return cls(
            client,
            settings.model,
            classify=Classifier(cls.provider, settings.base_url, (secret,)),
            max_output_tokens=output_token_cap(settings),
            max_chars=settings.max_response_chars,
        )

    def respond(self, request: ModelRequest) -> Turn:
        body: dict[str, Any] = {
            "model": self.name,
            "instructions": request.instructions,
            "input": to_input(request.items, self._original),
        }
        if request.tools:
            body["tools"] = list(request.tools)  # already Responses-shaped, strict
        if self.max_output_tokens:
            body["max_output_tokens"] = self.max_output_tokens

        streams = Streams()

        def send(left: float) -> tuple[Turn, list[dict]]:  # parsed inside the retry loop: an empty reply is tried again
            try:
                if self.stream:
                    streamed = self._streamed(body, left, streams, request.on_text)
                    if streamed is not None:
                        return streamed
                return to_turn(as_dict(plain_body(self.client.responses, body, left, self.max_chars)))
            except Oversized as cut:  # a turn all the same: the engine stops the run as response_too_large
                return cut.turn, []

        turn, originals = call_within(
            send, request.timeout, self.classify, self.retry, on_overrun=streams.close_all, on_retry=request.on_retry
        )
        for item, original in zip(turn.items, originals, strict=False):
            self._sent[id(item)] = (item, original)
        return turn

    def _streamed(self, body: dict, left: float, streams: Streams, on_text) -> tuple[Turn, list[dict]] | None:
        """The turn, read as it streams in; None when the server refused to stream (400):
        then this request, and every later one of the run, goes without streaming."""
        try:
            stream = open_stream(self.client.responses, body, left)
        except Exception as exc:
            if not refused_streaming(exc):
                raise
            log.info("the model service refused a streamed request; continuing without streaming")
            self.stream = False
            return None
        streams.add(stream)
        if not is_event_stream(stream):  # it answered with the whole reply: fine, and no need to ask again
            self.stream = False
            return to_turn(as_dict(whole_body(stream, self.max_chars)))
        events = ResponseStream()
        if read_events(stream, events.add, lambda: events.size, self.max_chars, on_text) == "cut":
            return events.partial()._replace(received_bytes=bytes_read(stream)), []
        if events.final is None:
            raise IncompleteReply("the model service ended the stream before the response was complete")
        turn, originals = to_turn(events.final)
        return turn._replace(received_bytes=bytes_read(stream)), originals

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
            raise ModelResponseError(
                f"the model service reported an error mid-stream ({event.get('code') or 'no code'})"
            )
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
        raise ModelResponseError(f"the model service reported a failed response ({code or 'no code'})")
    output = response.get("output")
    if not isinstance(output, list):
        raise ModelResponseError("the model service sent a response without an output list")
    items: list[Item] = []
    originals: list[dict] = []
    for raw in output:
        if not isinstance(raw, dict):
            raise ModelResponseError("the model service sent an output item that is not an object")
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
        raise EmptyReply("the model returned nothing (an empty reply with no text and no tool call)")
    return turn, originals


def _item(raw: dict) -> Item:
    kind = raw.get("type")
    if kind == "function_call":
        name, call_id, arguments = raw.get("name"), raw.get("call_id"), raw.get("arguments")
        if not isinstance(name, str) or not isinstance(call_id, str):
            raise ModelResponseError("the model service sent a function call without a name or call id")
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
