"""What the `openai` and `chat` providers share: one request, streamed, inside the deadline.

A provider says only its wire format (`WireModel`'s hooks): where requests go, the body of
one, how a reply becomes a turn, and how stream events add up to a reply. The rest is
here, once: the request streamed and read as it comes, or sent plain when the server does
not stream (then for the rest of the run), every attempt inside `call_within`'s deadline,
and a reply past the size cap handed to the engine as an oversized turn.

Only the two SDK providers import this module, so the openai SDK may be imported here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple, Protocol

from orderbot.loop.model import ModelRequest, Turn
from orderbot.models._client import make_client
from orderbot.models._failures import Classifier
from orderbot.models._reading import (
    Oversized,
    Streams,
    as_dict,
    bytes_read,
    is_event_stream,
    open_stream,
    plain_body,
    read_events,
    refused_streaming,
    whole_body,
)
from orderbot.models._retry import RetryPolicy, call_within
from orderbot.models.base import output_token_cap

log = logging.getLogger("orderbot")

INCOMPLETE = "model.incomplete"  # the phrase of a stream that ended before its end marker


class Reply(NamedTuple):
    """A reply read as a turn, with each of its items as the wire sent it (the Responses API
    wants its own items back; Chat Completions keeps none)."""

    turn: Turn
    sent: tuple[dict, ...] = ()


class Events(Protocol):
    """A stream's events put back together: `add` takes one event's JSON and returns the
    answer text it carried; `size` counts what the size cap counts."""

    size: int

    def add(self, event: dict) -> str: ...

    def partial(self) -> Turn:
        """What arrived before the stream was cut for size: only its size matters now."""
        ...

    def response(self, ending: str) -> dict:
        """The whole reply the events streamed; IncompleteReply when the stream ended
        (`ending`: "done" or "closed", as read_events says) before it was complete."""
        ...


class WireModel:
    """A model over the SDK's client; a subclass gives its wire format."""

    provider: ClassVar[str]

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

    @classmethod
    def from_settings(cls, settings) -> WireModel:
        client = make_client(settings, cls.provider)
        cls.endpoint_of(client)  # the SDK imports it lazily: do it before the run's clock starts
        secret = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        return cls(
            client,
            settings.model,
            classify=Classifier(cls.provider, settings.base_url, (secret,)),
            max_output_tokens=output_token_cap(settings),
            max_chars=settings.max_response_chars,
            stream=not settings.no_stream,
            **cls.options(settings),
        )

    # ---- the wire format: what a provider says ----

    @staticmethod
    def endpoint_of(client: Any) -> Any:
        """The SDK resource requests are created on."""
        raise NotImplementedError

    @classmethod
    def options(cls, settings) -> dict[str, Any]:
        """Keyword arguments of the constructor that come from the settings."""
        return {}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def streamed_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as sent with `stream: true`."""
        return body

    def parse(self, response: dict) -> Reply:
        raise NotImplementedError

    def events(self) -> Events:
        raise NotImplementedError

    def received(self, reply: Reply) -> None:
        """Hears of the reply the run goes on with (the last attempt's)."""

    # ---- one request ----

    def respond(self, request: ModelRequest) -> Turn:
        body = self.body(request)
        streams = Streams()

        def send(left: float) -> Reply:  # parsed inside the retry loop: an empty reply is tried again
            try:
                if self.stream:
                    reply = self._streamed(body, left, streams, request.on_text)
                    if reply is not None:
                        return reply
                return self.parse(as_dict(plain_body(self.endpoint_of(self.client), body, left, self.max_chars)))
            except Oversized as cut:  # a turn all the same: the engine stops the run as response_too_large
                return Reply(cut.turn)

        reply = call_within(
            send, request.timeout, self.classify, self.retry, on_overrun=streams.close_all, on_retry=request.on_retry
        )
        self.received(reply)
        return reply.turn

    def _streamed(
        self, body: dict, left: float, streams: Streams, on_text: Callable[[str], None] | None
    ) -> Reply | None:
        """The reply, read as it streams in; None when the server refused to stream (400):
        then this request, and every later one of the run, goes without streaming."""
        try:
            stream = open_stream(self.endpoint_of(self.client), self.streamed_body(body), left)
        except Exception as exc:
            if not refused_streaming(exc):
                raise
            log.info("the model service refused a streamed request; continuing without streaming")
            self.stream = False
            return None
        streams.add(stream)
        if not is_event_stream(stream):  # it answered with the whole reply: fine, and no need to ask again
            self.stream = False
            return self.parse(as_dict(whole_body(stream, self.max_chars)))
        events = self.events()
        ending = read_events(stream, events.add, lambda: events.size, self.max_chars, on_text)
        if ending == "cut":
            return Reply(events.partial()._replace(received_bytes=bytes_read(stream)))
        reply = self.parse(events.response(ending))
        return reply._replace(turn=reply.turn._replace(received_bytes=bytes_read(stream)))
