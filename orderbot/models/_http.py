"""The HTTP boundary shared by the `openai` and `chat` providers.

Three things live here, once:
- `make_client`: the official SDK's client, with its own retries off (`max_retries=0`) so
  that the run's deadline holds; the API key goes into the client and nowhere else.
- `call_within`: one model request, retried inside the deadline. Rate limits (429), 5xx,
  timeouts and connection errors are retried with exponential backoff and jitter,
  honouring Retry-After; each attempt's timeout is the time left. The clock and the
  sleep are injectable, so the policy is tested without waiting.
- `Classifier`: the one place SDK and httpx exceptions become orderbot errors, each with
  one sentence that holds no secret.

    not retried, run ends as model_error  400, 401, 403, 404, other 4xx, quota exhausted,
                                          a body that is not JSON, a reply that is not a turn
    retried once                          a 5xx whose body says the request itself is bad
                                          (a parse error, the context length exceeded);
                                          an empty reply (HTTP 200 with nothing in it)
    retried twice, at once                a stream that ended before its end marker
    retried while time is left            429, other 5xx, timeouts, connection errors
    time runs out                         ModelTimeout (the run ends as time_limit)
    attempts run out                      ModelError (model_error)

Only the two SDK providers import this module, so the openai SDK may be imported here.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import importlib
import json
import logging
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import openai
from openai import OpenAI

from orderbot.errors import (
    ConfigError,
    EmptyReply,
    IncompleteReply,
    ModelError,
    ModelResponseError,
    ModelTimeout,
)
from orderbot.loop.model import Turn
from orderbot.loop.redact import sanitize
from orderbot.settings import public_base_url as public_url

if TYPE_CHECKING:
    from orderbot.settings import Settings

log = logging.getLogger("orderbot")

T = TypeVar("T")

# The SDK wants some key even when a local server needs none; this one is not a secret.
NO_KEY = "not-needed"
# How long past the deadline the watchdog waits for a request that ignores its timeout.
WATCHDOG_GRACE = 0.1
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is treated as noise, like the SDK does
MAX_REASON_CHARS = 200  # of a server's own explanation, kept in messages, the log and --trace
# A 5xx whose reason says the request itself is at fault fails the same way every time
# (llama.cpp: "Failed to parse tool call arguments as JSON", "the request exceeds the
# available context size"; vLLM: "maximum context length is ..."): one retry at most.
REQUEST_AT_FAULT = re.compile(
    r"pars(e|ing)|invalid|malformed|context (length|size|window)|maximum context|too many tokens|exceed", re.I
)


# ---- the client -------------------------------------------------------------------------


def make_client(settings: Settings, provider: str) -> OpenAI:
    """The SDK client for `provider`; ConfigError when it cannot work as configured."""
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    if key is None and settings.base_url is None:
        raise ConfigError(
            f"the {provider} provider needs an API key: set OPENAI_API_KEY "
            "(or pass --base-url for a local OpenAI-compatible server)"
        )
    if settings.base_url is not None:
        check_base_url(settings.base_url)
    http_client = openai.DefaultHttpxClient(event_hooks={"response": [cap_error_body]})
    return OpenAI(
        api_key=key or NO_KEY,
        base_url=settings.base_url,
        max_retries=0,
        timeout=settings.timeout,
        http_client=http_client,
    )


# The SDK reads an error reply's body whole to build its exception, and only the first line
# of it is kept (MAX_REASON_CHARS). Past this many bytes as sent, the rest is not read: at
# most about 16 MB once inflated, even from a gzip body that would inflate to gigabytes.
ERROR_BODY_BYTES = 16 * 1024


def cap_error_body(response) -> None:
    """A response hook of the SDK's HTTP client: an error reply's body is cut as it is read."""
    if response.status_code >= 400:
        response.stream = _capped_stream()(response.stream, ERROR_BODY_BYTES)


@functools.cache
def _capped_stream() -> type:
    """A body stream that ends after `limit` bytes, built on the byte-stream class of the
    SDK's HTTP library (httpx, or a fork of it under another name), as the library requires."""
    client = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    library = importlib.import_module(client.__module__.split(".")[0])

    class CappedStream(library.SyncByteStream):
        def __init__(self, stream, limit: int) -> None:
            self._stream, self._left = stream, limit

        def __iter__(self):
            for chunk in self._stream:
                yield chunk[: self._left]
                self._left -= len(chunk)
                if self._left <= 0:
                    return  # closing the response then drops the connection, unread

        def close(self) -> None:
            self._stream.close()

        @property
        def elapsed(self):  # the library reads the response's duration from its stream
            return getattr(self._stream, "elapsed", None)

    return CappedStream


def check_base_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"invalid base URL {public_url(url)!r}: expected something like http://localhost:11434/v1")


# ---- the retry loop ---------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified: what to say and whether to try again."""

    message: str  # one sentence for a person; never a key
    retryable: bool
    retry_after: float | None = None  # what the server asked for, in seconds
    error: type[ModelError] = ModelError  # raised when not retried
    attempts: int | None = None  # at most this many attempts for a failure like this one


@dataclass(frozen=True)
class RetryPolicy:
    base: float = 0.5  # first backoff, before jitter
    cap: float = 8.0  # largest backoff
    max_attempts: int = 6
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return retry_after
        # "Equal jitter": at least half the exponential step, so retries never bunch at zero.
        step = min(self.cap, self.base * 2 ** (attempt - 1))
        return step / 2 + self.random() * step / 2


def call_within(
    send: Callable[[float], T],
    timeout: float,
    classify: Callable[[Exception], Failure],
    policy: RetryPolicy = RetryPolicy(),
    on_overrun: Callable[[], None] | None = None,
    on_retry: Callable[[str, float, int, int], None] | None = None,
) -> T:
    """`send(seconds_left)` until it succeeds, fails for good, or the time is up.

    `on_retry(reason, wait, next_attempt, max_attempts)` hears of each retry before its wait.
    Raises ModelTimeout when the deadline passes or the next wait would pass it, and the
    failure's error (ModelError or a subclass) when it is not worth retrying.
    """
    deadline = policy.clock() + timeout
    attempt = 0
    while True:
        attempt += 1
        left = deadline - policy.clock()
        if left <= 0:
            raise ModelTimeout(f"no answer within {timeout:g} s")
        try:
            return _watchdog(send, left)
        except _Overran:
            if on_overrun is not None:
                on_overrun()  # close the connection now, not whenever the abandoned thread notices
            raise ModelTimeout(f"no answer within {timeout:g} s") from None
        except Exception as exc:  # noqa: BLE001 - classify() sorts out what it was
            failure = classify(exc)
        if not failure.retryable:
            raise failure.error(failure.message) from None
        attempts = min(policy.max_attempts, failure.attempts or policy.max_attempts)
        if attempt >= attempts:
            raise ModelError(f"{failure.message}; gave up after {attempt} attempts") from None
        wait = policy.delay(attempt, failure.retry_after)
        if policy.clock() + wait >= deadline:
            raise ModelTimeout(
                f"{failure.message}; no time left to retry within {timeout:g} s", cause=failure.message
            ) from None
        log.warning("model request failed: %s; retrying in %.2f s (attempt %d)", failure.message, wait, attempt)
        if on_retry is not None:
            on_retry(failure.message, wait, attempt + 1, attempts)
        policy.sleep(wait)


class _Overran(Exception):
    """The request outlived its own timeout: the watchdog gave up on it."""


def _watchdog(send: Callable[[float], T], left: float) -> T:
    """Run `send(left)` but return by the deadline even if the server trickles bytes.

    The SDK's timeout bounds each read, not the whole request; a server that sends a byte
    now and then could keep it open forever. The request runs in a daemon thread and is
    abandoned if it outlives the deadline (it holds nothing the run still needs).
    """
    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = send(left)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="orderbot-model-request", daemon=True).start()
    if not done.wait(left + WATCHDOG_GRACE):
        raise _Overran()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


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
            raise ModelResponseError("the model service sent a response that could not be read") from None
    if not isinstance(response, dict):
        raise ModelResponseError("the model service sent a reply that is not a JSON object")
    return response


# ---- streaming ----------------------------------------------------------------------------

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
                raise ModelResponseError("the model service streamed an event that is not a JSON object")
            if isinstance(event.get("error"), dict) and "type" not in event:
                raise ModelResponseError("the model service reported an error mid-stream")
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


# ---- exceptions -> orderbot errors ------------------------------------------------------


@dataclass(frozen=True)
class Classifier:
    """Turns whatever the SDK raised into a Failure; knows the key only to keep it out."""

    provider: str
    base_url: str | None = None
    secrets: tuple[str, ...] = ()

    def __call__(self, exc: Exception) -> Failure:
        if isinstance(exc, EmptyReply):  # local servers do this now and then; the next try usually works
            return Failure(str(exc), retryable=True, retry_after=0.0, attempts=2, error=EmptyReply)
        if isinstance(exc, IncompleteReply):  # the connection ended early: the whole answer may come next time
            return Failure(str(exc), retryable=True, retry_after=0.0, attempts=3, error=IncompleteReply)
        if isinstance(exc, ModelError):  # the reply was read and is not a turn: asking again will not help
            return Failure(str(exc), retryable=False, error=type(exc))
        if isinstance(exc, openai.APIStatusError):
            return self._status(exc.status_code, exc.body, exc.response.headers)
        if isinstance(exc, openai.APITimeoutError):
            return Failure("the model service did not answer in time", retryable=True)
        if isinstance(exc, openai.APIConnectionError):  # the SDK wraps every transport error in it
            return Failure(f"could not reach the model service at {self.where}", retryable=True)
        # Raised while a stream is read, which the SDK does not wrap; matched by name, as the
        # SDK's HTTP library is httpx or a fork of it under another name.
        if any(cls.__name__ == "TransportError" for cls in type(exc).__mro__):
            return Failure("the connection broke while the reply was streaming", retryable=True)
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
            # The SDK lets a JSON decoding error through when a body claims to be JSON.
            return Failure(
                "the model service sent a reply that is not valid JSON", retryable=False, error=ModelResponseError
            )
        # Anything else came out of the SDK call too; the details go to the log, not the screen.
        log.error("model request failed unexpectedly", exc_info=exc)
        return Failure(f"the model request failed unexpectedly ({type(exc).__name__})", retryable=False)

    @property
    def where(self) -> str:
        return public_url(self.base_url) if self.base_url else "api.openai.com"

    def _status(self, status: int, body: object, headers) -> Failure:
        detail = self._server_message(body)
        code = _error_field(body, "code")
        if status == 429 and code == "insufficient_quota":
            return Failure(
                "the API quota is used up (HTTP 429): check the plan and billing for OPENAI_API_KEY", retryable=False
            )
        if status == 429:
            return Failure("rate limited (HTTP 429)", retryable=True, retry_after=retry_after(headers))
        if status >= 500 or status in (408, 409):
            return Failure(
                f"the model service failed (HTTP {status}){': ' + detail if detail else ''}",
                retryable=True,
                retry_after=retry_after(headers),
                attempts=2 if detail and REQUEST_AT_FAULT.search(detail) else None,
            )
        if status == 401:
            return Failure("authentication failed (HTTP 401): check OPENAI_API_KEY", retryable=False)
        if status == 403:
            return Failure(
                "permission denied (HTTP 403): the API key may not use this model or endpoint", retryable=False
            )
        if status == 404:
            hint = "check --model and --base-url"
            if self.provider == "openai":
                hint += "; many local servers lack the Responses API: try --provider chat"
            return Failure(f"not found (HTTP 404){': ' + detail if detail else ''}; {hint}", retryable=False)
        return Failure(
            f"the model service refused the request (HTTP {status}){': ' + detail if detail else ''}", retryable=False
        )

    def _server_message(self, body: object) -> str:
        """The first line of the server's own explanation (the error envelope's message, or
        a body of plain text), scrubbed of the key and anything key-like, and bounded."""
        message = _error_field(body, "message") if not isinstance(body, str) else _TAG.sub(" ", body)
        if not message or not message.strip():
            return ""
        for secret in self.secrets:
            if secret:
                message = message.replace(secret, "<redacted>")
        return sanitize(message, MAX_REASON_CHARS)


_TAG = re.compile(r"<[^>]{0,200}>")  # a proxy's HTML error page reads better without its tags


def _error_field(body: object, name: str) -> str | None:
    """`body["error"][name]` or `body[name]` (the SDK sometimes unwraps "error")."""
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        value = inner.get(name)
        return value if isinstance(value, str) else None
    return None


def retry_after(headers) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), if sane."""
    seconds: float | None = None
    try:
        if headers.get("retry-after-ms"):
            seconds = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after"):
            value = headers["retry-after"]
            try:
                seconds = float(value)
            except ValueError:
                when = email.utils.parsedate_to_datetime(value)
                seconds = when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds is None or not 0 <= seconds <= MAX_RETRY_AFTER:
        return None
    return seconds
