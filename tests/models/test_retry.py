"""The retry policy inside the deadline (orderbot/models/_retry.py, _failures.py), on a fake clock: no
waiting. How SDK exceptions are classified is checked against the loopback server."""

from __future__ import annotations

import pytest
from fakeapi import FakeAPI, error, raw
from saying import english, raises

from orderbot.errors import ModelError, ModelResponseError, ModelTimeout
from orderbot.models._failures import Classifier, retry_after
from orderbot.models._retry import Failure, RetryPolicy, call_within
from orderbot.settings import public_base_url as public_url

RETRY = Failure("the model service failed (HTTP 500)", retryable=True)
FATAL = Failure("authentication failed (HTTP 401): check OPENAI_API_KEY", retryable=False)


class Flaky:
    """send(): fails with the scripted failures in turn (each after `takes` seconds), then answers."""

    def __init__(self, clock, failures, takes: float = 0.0) -> None:
        self.clock, self.failures, self.takes = clock, list(failures), takes
        self.timeouts: list[float] = []

    def __call__(self, left: float) -> str:
        self.timeouts.append(round(left, 6))
        self.clock.advance(min(self.takes, left))  # an attempt never outlives its timeout
        if self.failures:
            raise _Scripted(self.failures.pop(0))
        return "answer"

    @staticmethod
    def classify(exc: Exception) -> Failure:
        return exc.failure


class _Scripted(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def policy(clock, slept) -> RetryPolicy:
    """A policy on the fake clock whose sleep just moves the clock; jitter fixed at half."""

    def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))
        clock.advance(seconds)

    return RetryPolicy(base=0.5, cap=4.0, max_attempts=5, clock=clock, sleep=sleep, random=lambda: 0.5)


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    low = RetryPolicy(base=0.5, cap=4.0, random=lambda: 0.0)
    high = RetryPolicy(base=0.5, cap=4.0, random=lambda: 0.999999)
    assert [low.delay(n, None) for n in (1, 2, 3, 4, 5)] == [0.25, 0.5, 1.0, 2.0, 2.0]
    assert [round(high.delay(n, None), 3) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 4.0, 4.0]


def test_retry_after_replaces_the_backoff():
    assert RetryPolicy(random=lambda: 0.0).delay(3, 0.7) == 0.7


def test_retries_until_success_and_each_attempt_gets_the_time_left(clock, policy, slept):
    send = Flaky(clock, [RETRY, RETRY], takes=1.0)

    assert call_within(send, 10.0, Flaky.classify, policy) == "answer"

    assert slept == [0.375, 0.75]  # 0.5 then 1.0, each times (0.5 + 0.5 * 0.5)
    assert send.timeouts == [10.0, 8.625, 6.875]  # 10 - 1 - 0.375, then - 1 - 0.75


def test_server_retry_after_is_honoured(clock, policy, slept):
    send = Flaky(clock, [Failure("rate limited (HTTP 429)", retryable=True, retry_after=2.5)])

    call_within(send, 10.0, Flaky.classify, policy)

    assert slept == [2.5]


def test_each_retry_is_reported_before_its_wait(clock, policy, slept):
    heard: list[tuple] = []
    limited = Failure("rate limited (HTTP 429)", retryable=True, retry_after=1.0)
    send = Flaky(clock, [limited, RETRY])

    call_within(send, 10.0, Flaky.classify, policy, on_retry=lambda *retry: heard.append((*retry, list(slept))))

    assert heard == [
        ("rate limited (HTTP 429)", 1.0, 2, 5, []),
        ("the model service failed (HTTP 500)", 0.75, 3, 5, [1.0]),
    ]


def test_not_retryable_fails_at_once(clock, policy, slept):
    send = Flaky(clock, [FATAL, RETRY])

    with raises(ModelError, match="^authentication failed") as caught:
        call_within(send, 10.0, Flaky.classify, policy)

    assert type(caught.value) is ModelError and len(send.timeouts) == 1 and slept == []


def test_failure_chooses_its_error_class(clock, policy, slept):
    bad = Failure("the model service sent a reply that is not valid JSON", retryable=False, error=ModelResponseError)

    with pytest.raises(ModelResponseError):
        call_within(Flaky(clock, [bad]), 10.0, Flaky.classify, policy)


def test_never_waits_past_the_deadline(clock, policy, slept):
    # The server asks for 3 s but only 2 s are left: stop now as a timeout, not after waiting.
    send = Flaky(clock, [Failure("rate limited (HTTP 429)", retryable=True, retry_after=3.0)])

    with raises(ModelTimeout, match="no time left to retry"):
        call_within(send, 2.0, Flaky.classify, policy)

    assert slept == [] and clock.now == 1000.0


def test_failing_until_the_deadline_is_a_timeout(clock, policy, slept):
    send = Flaky(clock, [RETRY] * 10, takes=0.4)

    with pytest.raises(ModelTimeout):
        call_within(send, 2.0, Flaky.classify, policy)

    assert clock.now - 1000.0 <= 2.0  # it never went past the deadline
    assert len(send.timeouts) == 3  # 0.4 + 0.375 + 0.4 + 0.75 + 0.075 (cut), then no time to wait


def test_attempts_run_out_as_a_model_error(clock, policy, slept):
    send = Flaky(clock, [RETRY] * 10)

    with raises(ModelError, match=r"HTTP 500\); gave up after 5 attempts") as caught:
        call_within(send, 1000.0, Flaky.classify, policy)

    assert type(caught.value) is ModelError and len(send.timeouts) == 5


def test_no_time_left_means_no_request(clock, policy, slept):
    send = Flaky(clock, [])

    with pytest.raises(ModelTimeout):
        call_within(send, 0.0, Flaky.classify, policy)

    assert send.timeouts == []


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "120"}, None),  # longer than anyone should wait: treated as noise
        ({"retry-after": "-1"}, None),
        ({}, None),
    ],
)
def test_retry_after_header(headers, seconds):
    assert retry_after(headers) == seconds


def test_retry_after_http_date():
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None  # in the past
    import time
    from email.utils import formatdate

    assert 8 <= retry_after({"retry-after": formatdate(time.time() + 10, usegmt=True)}) <= 10


def test_public_url_drops_credentials_and_query():
    assert public_url("http://user:pw@localhost:11434/v1?token=x#f") == "http://localhost:11434/v1"


# ---- classification of what the real SDK raises -----------------------------------------


@pytest.mark.parametrize(
    "answer, retryable, error, words",
    [
        (error(400, "Invalid value for 'model'"), False, ModelError, "refused the request (HTTP 400): Invalid value"),
        (error(401, "Incorrect API key"), False, ModelError, "authentication failed (HTTP 401): check OPENAI_API_KEY"),
        (error(403, "no access"), False, ModelError, "permission denied (HTTP 403)"),
        (error(404, "Not Found"), False, ModelError, "try --provider chat"),
        (error(422, "bad"), False, ModelError, "HTTP 422"),
        (error(429, "slow down", headers={"retry-after": "1.5"}), True, ModelError, "rate limited (HTTP 429)"),
        (error(429, "quota", code="insufficient_quota"), False, ModelError, "quota is used up"),
        (error(500, "oops"), True, ModelError, "failed (HTTP 500)"),
        (raw("<h1>Bad Gateway</h1>", status=502), True, ModelError, "failed (HTTP 502)"),
        (error(503, "overloaded"), True, ModelError, "failed (HTTP 503)"),
        (raw("{not json", content_type="application/json"), False, ModelResponseError, "not valid JSON"),
    ],
)
def test_sdk_exceptions_are_classified(answer, retryable, error, words):
    from openai import OpenAI

    with FakeAPI() as api:
        api.enqueue("responses", answer)
        client = OpenAI(api_key="sk-test-classify-0123456789", base_url=api.url, max_retries=0)
        with pytest.raises(Exception) as caught:
            client.responses.create(model="m", input="hi", timeout=2)
    failure = Classifier("openai", api.url, ("sk-test-classify-0123456789",))(caught.value)
    assert failure.retryable is retryable and failure.error is error
    assert words in english(failure.message)
    if "retry-after" in answer.headers:
        assert failure.retry_after == 1.5


def test_connection_refused_is_retryable_and_names_the_server():
    from openai import OpenAI

    with FakeAPI() as api:
        url = api.url
    client = OpenAI(api_key="x", base_url=url, max_retries=0)  # nothing listens there any more
    with pytest.raises(Exception) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], timeout=2)
    failure = Classifier("chat", url)(caught.value)
    assert failure.retryable and english(failure.message) == f"could not reach the model service at {url}"


def test_server_message_is_scrubbed_of_the_key():
    secret = "sk-live-0123456789abcdefSECRET"
    body = {"error": {"message": f"Incorrect API key provided: {secret} at /etc/keys", "code": None}}
    failure = Classifier("chat", None, (secret,))._status(400, body, {})
    assert secret not in english(failure.message) and "Incorrect API key provided" in english(failure.message)
