"""Reading a model's reply within its caps: a stream of Server-Sent Events, or a whole body.

Replies are read as plain JSON and plain Server-Sent Events, not through the SDK's typed
models and streams (whose first use costs up to a second of CPU, inside the run's
deadline). Every read is bounded: one event, or one whole body, may take at most
`piece_limit(max_chars)` bytes, and a stream whose text passes the response-size cap is
hung up on at once, so the rest of it is never read.

Only the two SDK providers import this module, so the openai SDK may be imported here.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from typing import TypeVar

import openai

from orderbot.errors import ModelResponseError
from orderbot.loop.model import Turn

T = TypeVar("T")


def as_dict(response: object) -> dict:
    """A parsed SDK response as plain JSON, as the API sent it.

    The SDK does not validate responses: a body of another shape, or text served as
    text/html, comes back as whatever it was. Anything but a JSON object is a
    ModelResponseError here.
    """
    if hasattr(response, "to_dict"):
        try:
            response = response.to_dict()
        except Exception:  # noqa: BLE001 - built without validation, it may not serialise
            raise ModelResponseError("model.unreadable") from None
    if not isinstance(response, dict):
        raise ModelResponseError("model.not_object")
    return response


# One event of a stream, or a whole body, holds at most this much for a response within the
# size cap: a character of text or arguments takes at most 12 bytes in JSON (a surrogate
# pair written as two \u escapes), and the envelope around it gets a fixed allowance (the
# final Responses event repeats the instructions, the tools and the usage).
BYTES_PER_CHAR = 12
ENVELOPE_BYTES = 256 * 1024


def piece_limit(max_chars: int) -> int:
    """The most bytes one event or one body may take for a response of `max_chars`."""
    return max_chars * BYTES_PER_CHAR + ENVELOPE_BYTES


class Oversized(Exception):
    """One event, or a whole body, passed its byte limit before it ended: reading stopped
    there and the connection was closed. Never leaves the provider: `turn` is what the
    engine gets, and the engine stops the run as response_too_large."""

    def __init__(self, limit: int, received: int | None) -> None:
        super().__init__(f"more than {limit} bytes in one piece")
        self.turn = Turn((), oversize=limit, received_bytes=received)


class Streams:
    """The streams a request's attempts opened, so that the one the watchdog gives up on is
    closed the moment the deadline passes (the server sees the connection drop)."""

    def __init__(self) -> None:
        self._open: list = []

    def add(self, stream: T) -> T:
        self._open.append(stream)
        return stream

    def close_all(self) -> None:
        for stream in self._open:
            hang_up(stream)


def open_stream(endpoint, body: dict, left: float):
    """POST `body` with `stream: true` and return the raw response once its headers are in
    (an error status raises here, as usual). The events are read as plain Server-Sent
    Events (`read_events`), not through the SDK's typed stream: building those types costs
    a second of CPU on first use, inside the run's deadline."""
    return endpoint.with_streaming_response.create(**body, stream=True, timeout=left).__enter__()


def plain_body(endpoint, body: dict, left: float, max_chars: int) -> object:
    """POST `body` without streaming and return the reply's JSON, read as plain JSON like the
    events of a stream, not through the SDK's typed models (whose first use costs a few
    hundred milliseconds of CPU, inside the run's deadline). The body is read as it comes,
    within `piece_limit(max_chars)` bytes (Oversized past it). As the SDK does: a body that
    is not JSON and does not claim to be comes back as its text (as_dict then refuses it)."""
    response = endpoint.with_streaming_response.create(**body, timeout=left).__enter__()
    try:
        data = read_within(response, piece_limit(max_chars))
    finally:
        response.close()
    try:
        return json.loads(data)
    except ValueError:
        if response.headers.get("content-type", "").split(";")[0].strip().endswith("json"):
            raise  # classified as a reply that is not valid JSON
        return data.decode("utf-8", "replace")


def hang_up(stream) -> None:
    """Close a streamed response at once, even while another thread is blocked reading it:
    shutting the socket down wakes that read; closing alone would wait for it."""
    response = getattr(stream, "http_response", None)
    with contextlib.suppress(Exception):  # best effort: the close below still ends it
        sock = response.extensions["network_stream"].get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):  # already broken: nothing left to close
        stream.close()


def is_event_stream(stream) -> bool:
    """Whether the server really streamed; some answer `stream: true` with plain JSON."""
    return stream.headers.get("content-type", "").startswith("text/event-stream")


def whole_body(stream, max_chars: int) -> object:
    """The JSON body of a server that ignored `stream: true`, read within the byte limit."""
    try:
        return json.loads(read_within(stream, piece_limit(max_chars)))
    finally:
        stream.close()


def read_within(response, limit: int) -> bytes:
    """The decoded body, or Oversized (after hanging up) once it passes `limit` bytes."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limit:
            hang_up(response)
            raise Oversized(limit, bytes_read(response))
    return bytes(body)


def lines_within(response, limit: int) -> Iterator[str]:
    """The lines of a streamed body as they arrive, none longer than `limit` bytes.

    The SDK's own line reader holds a line whole however long it grows: a 20 MB event on
    one line, or a gzip body that inflates to gigabytes without a newline. This one raises
    Oversized (after hanging up) as soon as an unfinished line passes the limit, having
    read at most one network read (or one decoded piece) beyond it."""
    pending = bytearray()
    for chunk in response.iter_bytes():
        pending += chunk
        end = max(pending.rfind(b"\n"), pending.rfind(b"\r"))
        if end >= 0:
            lines = bytes(pending[: end + 1]).splitlines()  # \n, \r\n and \r, as SSE allows
            del pending[: end + 1]
        else:
            lines = []
        if len(pending) > limit or any(len(line) > limit for line in lines):
            hang_up(response)
            raise Oversized(limit, bytes_read(response))
        for line in lines:
            yield line.decode("utf-8", "replace")
    if pending:
        yield pending.decode("utf-8", "replace")


def read_events(stream, add: Callable[[dict], str], size: Callable[[], int], limit: int, on_text=None) -> str:
    """Feed each event's JSON to `add` (which returns the answer text it carried) until the
    stream ends, and say how it ended: "done" (the server sent `[DONE]`), "closed" (the body
    ended without it) or "cut": once `size()` passes `limit` characters, hang up at once;
    the rest of the response is never read. One event longer than a response within the
    limit can take raises Oversized. The deadline is the watchdog's (call_within)."""
    try:
        for line in lines_within(stream, piece_limit(limit)):
            if not line.startswith("data:"):
                continue  # event names, comments (keep-alives) and blank lines
            data = line[5:].strip()
            if data == "[DONE]":
                return "done"
            event = json.loads(data)
            if not isinstance(event, dict):
                raise ModelResponseError("model.event_not_object")
            if isinstance(event.get("error"), dict) and "type" not in event:
                raise ModelResponseError("model.stream_error")
            text = add(event)
            if text and on_text is not None:
                on_text(text)
            if size() > limit:
                hang_up(stream)
                return "cut"
        return "closed"
    finally:
        stream.close()


def bytes_read(stream) -> int | None:
    return getattr(getattr(stream, "http_response", None), "num_bytes_downloaded", None)


def refused_streaming(exc: Exception) -> bool:
    """A 400 to a streamed request that names `stream` (or `stream_options`): this server
    does not stream. Any other 400 is a bad request whichever way it is sent."""
    return isinstance(exc, openai.BadRequestError) and "stream" in str(exc).lower()
