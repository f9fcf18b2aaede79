"""The one place SDK and httpx exceptions become orderbot errors, each with one sentence
that holds no secret, and whether it is worth trying again:

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

import email.utils
import logging
import re
import time
from dataclasses import dataclass

import openai

from orderbot.errors import EmptyReply, IncompleteReply, ModelError, ModelResponseError, Phrase
from orderbot.loop.redact import sanitize
from orderbot.models._retry import Failure
from orderbot.settings import public_base_url as public_url

log = logging.getLogger("orderbot")

MAX_RETRY_AFTER = 60.0  # a longer Retry-After is treated as noise, like the SDK does
MAX_REASON_CHARS = 200  # of a server's own explanation, kept in messages, the log and --trace
# A 5xx whose reason says the request itself is at fault fails the same way every time
# (llama.cpp: "Failed to parse tool call arguments as JSON", "the request exceeds the
# available context size"; vLLM: "maximum context length is ..."): one retry at most.
REQUEST_AT_FAULT = re.compile(
    r"pars(e|ing)|invalid|malformed|context (length|size|window)|maximum context|too many tokens|exceed", re.I
)


@dataclass(frozen=True)
class Classifier:
    """Turns whatever the SDK raised into a Failure; knows the key only to keep it out."""

    provider: str
    base_url: str | None = None
    secrets: tuple[str, ...] = ()

    def __call__(self, exc: Exception) -> Failure:
        if isinstance(exc, EmptyReply):  # local servers do this now and then; the next try usually works
            return Failure(exc.phrase, retryable=True, retry_after=0.0, attempts=2, error=EmptyReply)
        if isinstance(exc, IncompleteReply):  # the connection ended early: the whole answer may come next time
            return Failure(exc.phrase, retryable=True, retry_after=0.0, attempts=3, error=IncompleteReply)
        if isinstance(exc, ModelError):  # the reply was read and is not a turn: asking again will not help
            return Failure(exc.phrase, retryable=False, error=type(exc))
        if isinstance(exc, openai.APIStatusError):
            return self._status(exc.status_code, exc.body, exc.response.headers)
        if isinstance(exc, openai.APITimeoutError):
            return Failure(Phrase("model.no_answer_in_time"), retryable=True)
        if isinstance(exc, openai.APIConnectionError):  # the SDK wraps every transport error in it
            return Failure(Phrase("model.unreachable", {"where": self.where}), retryable=True)
        # Raised while a stream is read, which the SDK does not wrap; matched by name, as the
        # SDK's HTTP library is httpx or a fork of it under another name.
        if any(cls.__name__ == "TransportError" for cls in type(exc).__mro__):
            return Failure(Phrase("model.stream_broke"), retryable=True)
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
            # The SDK lets a JSON decoding error through when a body claims to be JSON.
            return Failure(Phrase("model.not_json"), retryable=False, error=ModelResponseError)
        # Anything else came out of the SDK call too; the details go to the log, not the screen.
        log.error("model request failed unexpectedly", exc_info=exc)
        return Failure(Phrase("model.failed_unexpectedly", {"kind": type(exc).__name__}), retryable=False)

    @property
    def where(self) -> str:
        return public_url(self.base_url) if self.base_url else "api.openai.com"

    def _status(self, status: int, body: object, headers) -> Failure:
        detail = self._server_message(body)
        code = _error_field(body, "code")
        said = Phrase("model.server_said", {"detail": detail}) if detail else ""  # the server's own words, as they are
        if status == 429 and code == "insufficient_quota":
            return Failure(Phrase("model.quota"), retryable=False)
        if status == 429:
            return Failure(Phrase("model.rate_limited"), retryable=True, retry_after=retry_after(headers))
        if status >= 500 or status in (408, 409):
            return Failure(
                Phrase("model.server_failed", {"status": status, "said": said}),
                retryable=True,
                retry_after=retry_after(headers),
                attempts=2 if detail and REQUEST_AT_FAULT.search(detail) else None,
            )
        if status == 401:
            return Failure(Phrase("model.unauthorized"), retryable=False)
        if status == 403:
            return Failure(Phrase("model.forbidden"), retryable=False)
        if status == 404:
            hint = "model.hint_responses_api" if self.provider == "openai" else "model.hint_model_url"
            return Failure(Phrase("model.not_found", {"said": said, "hint": Phrase(hint)}), retryable=False)
        return Failure(Phrase("model.refused", {"status": status, "said": said}), retryable=False)

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
