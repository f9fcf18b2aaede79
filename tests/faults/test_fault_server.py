"""A misbehaving API server (tests/fakeapi.py on loopback) behind the real command line and
the real openai SDK: every failure must end in a clean, bounded stop.

Each case is checked by faultkit.check (stop reason, exit code, orders file unchanged, no
traceback, no key, model requests <= max steps, wall time <= timeout + 1 s) and, beyond
that, the number of HTTP attempts stays bounded and no file written holds the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeapi import FakeAPI, error, function_call, hang, message, raw, reset, response, stall
from faultkit import KEY, Caps, check, run

from orderbot.loop.engine import StopReason

CAPS = Caps(timeout=1.0)
# A server that fails until the deadline makes the run wait all of it: those cases get a
# short deadline, which still has to hold (stop time_limit, wall time within it + 1 s).
UNTIL_DEADLINE = Caps(timeout=0.3)
MAX_ATTEMPTS = 6  # RetryPolicy.max_attempts: retries of one request never exceed it

FAULTS = {
    # name: (what the server does forever, expected stop)
    "hangs": (lambda: hang(), StopReason.TIME_LIMIT),
    "stalls mid-body": (lambda: stall(b'{"id": "resp_1", "output": ['), StopReason.TIME_LIMIT),
    "resets the connection": (lambda: reset(), StopReason.TIME_LIMIT),
    "429 with retry-after 0": (
        lambda: error(429, "Rate limit reached", headers={"retry-after": "0"}),
        StopReason.MODEL_ERROR,
    ),
    "429 without retry-after": (lambda: error(429, "Rate limit reached"), StopReason.TIME_LIMIT),
    "500": (lambda: error(500, "The server had an error"), StopReason.TIME_LIMIT),
    "401 echoing the key": (lambda: error(401, f"Incorrect API key provided: {KEY}."), StopReason.MODEL_ERROR),
    "html instead of json": (lambda: raw("<html><body><h1>502 Bad Gateway</h1></body></html>"), StopReason.MODEL_ERROR),
    "truncated json": (
        lambda: raw(
            '{"id": "resp_1", "object": "response", "output": [{"type": "func', content_type="application/json"
        ),
        StopReason.MODEL_ERROR,
    ),
}


@pytest.fixture(scope="module", autouse=True)
def sdk_imported():
    """Import the SDK before any clock starts: its ~1 s import is the cold-start benchmark's
    business, and the run's deadline only starts once the run does."""
    import openai

    client = openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    client.responses, client.chat.completions  # noqa: B018 - the SDK imports these on first use


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


def _written(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
def test_server_fault_on_the_first_request(api, orders, tmp_path, fault):
    path, before = orders
    make, stop = FAULTS[fault]
    api.fallback["responses"] = make()
    caps = UNTIL_DEADLINE if stop is StopReason.TIME_LIMIT else CAPS

    outcome = run("查询 ORD-1001", orders=path, caps=caps, provider="openai", extra=("--base-url", api.url))

    check(outcome, stop=stop, orders=path, before=before, requests=1)
    attempts = len(api.requests_for("responses"))
    assert 1 <= attempts <= MAX_ATTEMPTS
    assert outcome.doc["steps"] == 1
    for file in _written(tmp_path):
        assert KEY.encode() not in file.read_bytes(), f"the key was written to {file}"


@pytest.mark.parametrize("fault", ["hangs", "500", "truncated json"])
def test_server_fault_after_a_tool_call_keeps_the_result(api, orders, fault):
    """The first request works and a tool runs; then the server fails. The run stops
    cleanly and still reports what was observed."""
    path, before = orders
    make, stop = FAULTS[fault]
    api.enqueue("responses", response(function_call("get_order_status", {"order_id": "ORD-1001"})))
    api.fallback["responses"] = make()

    outcome = run("查询 ORD-1001", orders=path, caps=CAPS, provider="openai", extra=("--base-url", api.url))

    check(outcome, stop=stop, orders=path, before=before, requests=2)
    assert outcome.decisions() == ["executed"]
    assert outcome.doc["steps"] == 2


def test_server_that_proposes_a_cancel_then_dies_writes_nothing(api, orders):
    path, before = orders
    api.enqueue(
        "responses",
        response(function_call("cancel_order", {"order_id": "ORD-1002", "reason": "x"})),
        response(message("已取消。")),
    )

    outcome = run("取消 ORD-1002", orders=path, caps=CAPS, provider="openai", extra=("--base-url", api.url))

    check(outcome, stop=StopReason.AWAITING_APPROVAL, orders=path, before=before, requests=1)
