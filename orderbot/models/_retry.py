"""One model request, retried inside the run's deadline, and the watchdog that holds it.

`call_within` sends until the request succeeds, fails for good, or the time is up: each
attempt's timeout is the time left, a failure is classified by the caller's `classify`
(orderbot.models._failures says which are retried), and the wait between attempts is an
exponential backoff with jitter, or the server's Retry-After. The clock and the sleep are
injectable, so the policy is tested without waiting.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from orderbot.errors import ModelError, ModelTimeout, Phrase

log = logging.getLogger("orderbot")

T = TypeVar("T")

# How long past the deadline the watchdog waits for a request that ignores its timeout.
WATCHDOG_GRACE = 0.1


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified: what to say and whether to try again."""

    message: Phrase  # one sentence for a person, said where it is shown; never a key
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
            raise ModelTimeout("model.no_answer_within", seconds=timeout)
        try:
            return _watchdog(send, left)
        except _Overran:
            if on_overrun is not None:
                on_overrun()  # close the connection now, not whenever the abandoned thread notices
            raise ModelTimeout("model.no_answer_within", seconds=timeout) from None
        except Exception as exc:  # noqa: BLE001 - classify() sorts out what it was
            failure = classify(exc)
        if not failure.retryable:
            raise failure.error(failure.message) from None
        attempts = min(policy.max_attempts, failure.attempts or policy.max_attempts)
        if attempt >= attempts:
            raise ModelError("model.gave_up", failure=failure.message, attempts=attempt) from None
        wait = policy.delay(attempt, failure.retry_after)
        if policy.clock() + wait >= deadline:
            raise ModelTimeout(
                "model.no_time_to_retry", cause=failure.message, failure=failure.message, seconds=timeout
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
