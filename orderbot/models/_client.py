"""The official SDK's client, as the `openai` and `chat` providers use it.

Its own retries are off (`max_retries=0`), so that the run's deadline holds (orderbot's
retries are in `_retry`); the API key goes into the client and nowhere else; an error
reply's body is cut as it is read, so that a hostile server cannot make the SDK hold
gigabytes to build its exception.

Only the two SDK providers import this module, so the openai SDK may be imported here.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import openai
from openai import OpenAI

from orderbot.errors import ConfigError
from orderbot.settings import public_base_url as public_url

if TYPE_CHECKING:
    from orderbot.settings import Settings

# The SDK wants some key even when a local server needs none; this one is not a secret.
NO_KEY = "not-needed"


def make_client(settings: Settings, provider: str) -> OpenAI:
    """The SDK client for `provider`; ConfigError when it cannot work as configured."""
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    if key is None and settings.base_url is None:
        raise ConfigError("error.needs_api_key", provider=provider)
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
    library = sys.modules[client.__module__.split(".")[0]]  # imported already: the client class is its

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
        raise ConfigError("model.bad_base_url", url=repr(public_url(url)))
