"""Streams are bounded while they are read, and a stream is an answer only when it ends.

Both providers, through the real command line and the real openai SDK, against the
loopback server (tests/fakeapi.py): one event of 20 MB on one line, a gzip body that
inflates to 800 MB without a newline (its peak memory measured in a process of its own),
a whole JSON body of 20 MB from a server that ignores `stream`, and streams that stop
before their end marker (no `finish_reason` or `[DONE]`, no `response.completed`).
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator

import pytest
from fakeapi import WIRES, FakeAPI, Reply, Request, error, event, raw, sse, stream_of
from faultkit import KEY, Caps, check, run
from saying import stop_said

from orderbot.loop.engine import StopReason
from orderbot.models._reading import piece_limit

BOTH = pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
CAP = 16_000  # the default response-size cap, in characters
LIMIT = piece_limit(CAP)  # the most bytes one event (or one body) may take at that cap
READ_BUFFER = 64 * 1024  # one network read of the SDK's HTTP library
TWENTY_MB = 20_000_000
ANSWER = "订单 ORD-1001 的状态是：已发货。"


@pytest.fixture(scope="module", autouse=True)
def sdk_imported():
    """Import the SDK before any clock starts (cold start is its benchmark's business)."""
    import openai

    client = openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    client.responses, client.chat.completions  # noqa: B018 - imported lazily on first use


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


def ask(api, wire, path):
    return run("查询 ORD-1001", orders=path, caps=Caps(), provider=wire.provider, extra=("--base-url", api.url))


def one_delta(route: str, text: str) -> bytes:
    """One SSE event carrying all of `text` as a single answer delta, on one line."""
    if route == "responses":
        return event({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text})
    return event({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]})


# ---- one event of 20 MB ------------------------------------------------------------------------


@BOTH
def test_answer_of_20_mb_on_one_line_is_cut_at_the_event_cap(api, orders, wire):
    path, before = orders
    opening = sse(wire.route, wire.text("x"))[:1]
    api.enqueue(wire.route, stream_of([*opening, one_delta(wire.route, "好" * (TWENTY_MB // 3))]))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.RESPONSE_TOO_LARGE, orders=path, before=before, requests=1)
    # Bytes read from the connection (what the server wrote is no measure: loopback socket
    # buffers take megabytes): the opening event, the cap on one event, and at most one
    # network read past it.
    received = outcome.doc["transitions"][-1]["data"]["received_bytes"] - len(opening[0])
    print(f"bytes read of the long event: {received:,} (cap {LIMIT:,})")  # -s shows it
    assert LIMIT < received <= LIMIT + READ_BUFFER
    assert f"more than {LIMIT:,} bytes in one piece" in stop_said(outcome.doc)
    assert api.closed.wait(5)  # the connection was closed, the rest never read


def refuses_streams(then):
    """A server that answers a streamed request with 400 (naming `stream`), else `then`."""

    def answer(request: Request):
        if request.body.get("stream"):
            return error(400, "stream: unsupported parameter")
        return then

    return answer


@BOTH
@pytest.mark.parametrize("server", ["ignores stream", "refuses stream"])
def test_whole_body_of_20_mb_is_cut_at_the_cap_too(orders, wire, server):
    path, before = orders
    body = raw(b'{"padding": "' + b"a" * TWENTY_MB + b'"}', content_type="application/json")
    with FakeAPI(streams=False) as api:
        if server == "ignores stream":
            api.enqueue(wire.route, body)
        else:  # a 400 to the streamed request, then the plain one gets the body
            api.enqueue(wire.route, refuses_streams(body), refuses_streams(body))

        outcome = ask(api, wire, path)

        check(outcome, stop=StopReason.RESPONSE_TOO_LARGE, orders=path, before=before, requests=1)
        assert f"more than {LIMIT:,} bytes in one piece" in stop_said(outcome.doc)
        assert api.closed.wait(5)  # the connection was closed before the 20 MB went out
        assert api.pending(wire.route) == 0


# ---- a gzip body that inflates to 800 MB -------------------------------------------------------

BLOCK = b"a" * (1 << 20)


def gzip_bomb(head: bytes, megabytes: int) -> Iterator[bytes]:
    """A valid gzip stream of `head` and then `megabytes` MiB of "a", no newline anywhere,
    made in a few milliseconds: after a full flush a deflate block refers to nothing before
    it, so one compressed mebibyte is sent again and again, and the trailer says what the
    whole stream holds (its CRC-32 and size)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    yield z.compress(head) + z.flush(zlib.Z_FULL_FLUSH)
    unit = z.compress(BLOCK) + z.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(BLOCK, zlib.crc32(head))
    for sent in range(megabytes):
        yield unit
        if sent:
            crc = zlib.crc32(BLOCK, crc)
    size = len(head) + megabytes * len(BLOCK)
    yield z.flush()[:-8] + struct.pack("<II", crc, size & 0xFFFFFFFF)


def test_gzip_bomb_is_a_valid_stream_of_what_it_says():
    inflated = zlib.decompress(b"".join(gzip_bomb(b"data: ", 3)), 16 + zlib.MAX_WBITS)
    assert inflated == b"data: " + b"a" * (3 << 20)


# Runs the real command line in a process of its own and prints its peak resident memory
# (the kernel's high-water mark, imports included) however the run ends.
PEAK_OF = """
import resource, sys
from orderbot.cli import main
sys.argv = ["orderbot", *sys.argv[1:]]
try:
    main()
finally:
    print(f"peak_rss_kib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
"""


# The start of an answer delta whose text then never ends.
UNENDING = {
    "responses": b'data: {"type": "response.output_text.delta", "delta": "',
    "chat": b'data: {"choices": [{"index": 0, "delta": {"content": "',
}


@pytest.mark.slow
@BOTH
def test_gzip_body_that_inflates_to_800_mb_keeps_memory_bounded(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, stream_of(gzip_bomb(UNENDING[wire.route], 800), headers={"content-encoding": "gzip"}))

    peak_mib, done = peak_of_ask(api, wire, path)

    assert peak_mib < 600, f"peak memory {peak_mib:.0f} MiB"
    assert done.returncode == 3, done.stdout + done.stderr
    assert '"stop_reason": "response_too_large"' in done.stdout
    assert f"more than {LIMIT:,} bytes in one piece" in stop_said(json.loads(done.stdout))
    assert path.read_bytes() == before


def peak_of_ask(api, wire, path) -> tuple[float, subprocess.CompletedProcess]:
    """`orderbot ask` in a process of its own: its peak resident memory (MiB) and outcome."""
    args = ["ask", "--provider", wire.provider, "--base-url", api.url, "--orders", str(path), "--json"]
    done = subprocess.run(
        [sys.executable, "-c", PEAK_OF, *args, "--timeout", "20", "查询 ORD-1001"],
        env={**os.environ, "OPENAI_API_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak_mib = int(re.search(r"peak_rss_kib=(\d+)", done.stderr)[1]) / 1024
    print(f"peak resident memory: {peak_mib:.0f} MiB")  # -s shows it
    assert "Traceback" not in done.stdout + done.stderr and KEY not in done.stdout + done.stderr
    return peak_mib, done


@pytest.mark.slow
@BOTH
def test_error_reply_whose_gzip_body_inflates_to_800_mb_keeps_memory_bounded(api, orders, wire):
    path, before = orders
    bomb = Reply(
        status=500,
        headers={"content-encoding": "gzip"},
        content_type="application/json",
        behaviour="stream",
        chunks=gzip_bomb(b'{"error": {"message": "', 800),
    )
    api.enqueue(wire.route, bomb, wire.text(ANSWER))  # the SDK reads an error's body to build its exception

    peak_mib, done = peak_of_ask(api, wire, path)

    assert peak_mib < 600, f"peak memory {peak_mib:.0f} MiB"
    assert done.returncode == 0, done.stdout + done.stderr  # a 5xx is retried, and the next answer is read
    assert ANSWER in done.stdout
    assert path.read_bytes() == before


# ---- a stream that ends before its end marker --------------------------------------------------


def cut_short(wire) -> list[bytes]:
    """The answer's opening and three deltas, then the connection closes: no finish_reason,
    no [DONE], no response.completed."""
    events = sse(wire.route, wire.text(ANSWER), piece=4)
    deltas = [e for e in events if b"output_text.delta" in e or b'"content": "' in e and b'"content": ""' not in e]
    return [events[0], *deltas[:3]]


@BOTH
def test_stream_cut_short_is_asked_again_and_the_whole_answer_wins(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, stream_of(cut_short(wire)), wire.text(ANSWER))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    assert outcome.doc["answer"] == ANSWER
    assert len(api.requests_for(wire.route)) == 2


@BOTH
def test_stream_always_cut_short_is_a_model_error_never_an_answer(api, orders, wire):
    path, before = orders
    api.fallback[wire.route] = lambda request: stream_of(cut_short(wire))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.MODEL_ERROR, orders=path, before=before, requests=1)
    assert not outcome.doc.get("answer")
    assert "ended the stream before" in stop_said(outcome.doc)
    assert "订单 ORD" not in outcome.stdout  # none of the fragment is shown as if it were the answer
    assert len(api.requests_for(wire.route)) == 3
