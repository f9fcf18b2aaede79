"""What real model servers (llama.cpp, vLLM, Ollama) were seen to send, replayed by the
loopback server (tests/fakeapi.py) to both providers through the real command line and
the real openai SDK. Each case sends exactly the bodies described there and
is checked by faultkit.check like every fault run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clikit import cli
from fakeapi import LLAMA_CPP_BAD_ARGUMENTS, WIRES, FakeAPI, Request, error, llama_cpp_error, raw, sse, stream_of
from faultkit import KEY, Caps, check, run
from runkit import record_bytes
from saying import english, stop_said

from orderbot.loop.engine import StopReason

CAPS = Caps(timeout=5.0)
UNTIL_DEADLINE = Caps(timeout=0.3)  # for a server that fails until the deadline: the run waits all of it
BOTH = pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
# What a small model really proposed: arguments that are not JSON.
BROKEN = '{"order_id": "}} # 2. …'


@pytest.fixture(scope="module", autouse=True)
def sdk_imported():
    """Import the SDK and its two resources before any clock starts: that is cold-start
    time (its own benchmark's business), not the run's."""
    import openai

    client = openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    client.responses, client.chat.completions  # noqa: B018 - imported lazily on first use


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


def like_llama_cpp(wire, then):
    """llama.cpp's rule: a request whose history holds a call with arguments that are not
    JSON is refused with HTTP 500, on both APIs; otherwise `then` answers."""

    def answer(request: Request):
        for arguments in wire.arguments(request):
            try:
                json.loads(arguments)
            except ValueError:
                return llama_cpp_error(LLAMA_CPP_BAD_ARGUMENTS)
        return then(request) if callable(then) else then

    return answer


def ask(api, wire, path, *extra: str, caps: Caps = CAPS, env: dict | None = None):
    return run(
        "查询 ORD-1001", orders=path, caps=caps, provider=wire.provider, extra=("--base-url", api.url, *extra), env=env
    )


def log_text() -> str:
    log = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


# ---- 1. a malformed call does not poison the conversation -------------------------------


@BOTH
def test_malformed_call_is_replayed_with_a_placeholder(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, wire.calls(("get_order_details", BROKEN)))
    api.fallback[wire.route] = like_llama_cpp(wire, wire.text("请提供正确的订单号。"))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=2)
    first, second = api.requests_for(wire.route)
    assert wire.arguments(second) == ["{}"]  # valid for the API...
    (envelope,) = wire.outputs(second).values()
    assert envelope["code"] == "invalid_json"  # ...and the model is still told what was wrong
    assert outcome.calls[0]["arguments"] == BROKEN  # orderbot's own record keeps the original
    assert outcome.codes() == ["invalid_json"]


@BOTH
def test_malformed_call_then_resume_is_not_refused(api, orders, wire):
    """The run pauses on a cancel after the broken call; resuming sends valid history."""
    path, before = orders
    api.enqueue(
        wire.route,
        wire.calls(("get_order_details", BROKEN)),
        like_llama_cpp(wire, wire.calls(("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}))),
    )
    api.fallback[wire.route] = like_llama_cpp(wire, wire.text("已取消。"))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.AWAITING_APPROVAL, orders=path, before=before, requests=2)
    assert all(a != BROKEN for r in api.requests_for(wire.route)[1:] for a in wire.arguments(r))


# ---- 2. the server's reason for a 5xx -------------------------------------------------


@BOTH
def test_llama_cpp_parse_error_is_shown_and_retried_at_most_once(api, orders, wire):
    path, before = orders
    api.fallback[wire.route] = llama_cpp_error(LLAMA_CPP_BAD_ARGUMENTS)

    outcome = ask(api, wire, path, "--trace")

    check(outcome, stop=StopReason.MODEL_ERROR, orders=path, before=before, requests=1)
    assert len(api.requests_for(wire.route)) == 2  # the first try and one retry, not six
    assert "Failed to parse tool call arguments as JSON" in stop_said(outcome.doc)
    assert "HTTP 500" in stop_said(outcome.doc)
    assert len(stop_said(outcome.doc)) <= 400  # bounded
    finish = outcome.doc["transitions"][-1]
    assert "Failed to parse tool call arguments as JSON" in english(finish["data"]["message"])  # what --trace shows
    assert "Failed to parse tool call arguments as JSON" in log_text()


@BOTH
def test_context_length_500_is_not_retried_six_times(api, orders, wire):
    path, before = orders
    api.fallback[wire.route] = llama_cpp_error(
        "the request exceeds the available context size, try increasing the context size or enable context shift"
    )

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.MODEL_ERROR, orders=path, before=before, requests=1)
    assert len(api.requests_for(wire.route)) == 2
    assert "exceeds the available context size" in stop_said(outcome.doc)


@BOTH
def test_plain_text_500_keeps_its_first_line_only_sanitised(api, orders, wire):
    path, before = orders
    body = "upstream model crashed: CUDA out of memory \x1b[31m\nTraceback (most recent call last):\n  secret"
    api.enqueue(wire.route, raw(body, status=500, content_type="text/plain"))
    api.fallback[wire.route] = wire.text("好的。")

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    assert len(api.requests_for(wire.route)) == 2  # a transient 5xx is still retried
    log = log_text()
    assert "upstream model crashed: CUDA out of memory" in log
    assert "\x1b" not in log and "secret" not in log and "Traceback" not in log


@BOTH
def test_transient_500_until_the_deadline_names_the_reason(api, orders, wire):
    path, before = orders
    api.fallback[wire.route] = error(500, "The server is overloaded")

    outcome = ask(api, wire, path, caps=UNTIL_DEADLINE)

    check(outcome, stop=StopReason.TIME_LIMIT, orders=path, before=before, requests=1)
    assert "The server is overloaded" in stop_said(outcome.doc)


# ---- 3. the output-token cap and a truncated reply --------------------------------------


@BOTH
def test_requests_carry_an_output_token_cap_from_the_response_size_limit(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, wire.text("好的。"))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    body = api.requests_for(wire.route)[0].body
    field = "max_output_tokens" if wire.provider == "openai" else "max_tokens"
    assert body[field] == 4000  # the default 16,000-character cap, at about four characters a token


@BOTH
def test_output_token_cap_is_configurable(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, wire.text("好的。"))

    outcome = ask(api, wire, path, env={"ORDERBOT_MAX_OUTPUT_TOKENS": "300"})

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    body = api.requests_for(wire.route)[0].body
    assert body["max_output_tokens" if wire.provider == "openai" else "max_tokens"] == 300


@BOTH
def test_reply_cut_off_at_the_token_limit_is_not_an_answer(api, orders, wire):
    path, before = orders
    partial = "订单 ORD-1001 的状态是已发货，预计送达时间为"
    api.enqueue(wire.route, wire.cut(partial))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.RESPONSE_TRUNCATED, orders=path, before=before, requests=1)
    assert outcome.code == 3
    assert outcome.doc["answer"] is None
    assert outcome.doc["partial_answer"] == partial
    assert "cut off" in stop_said(outcome.doc)


@BOTH
def test_reply_cut_off_shows_the_partial_text_as_partial(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, wire.cut("订单 ORD-1001 的状态是已发货，预计\n\n"))

    outcome = run(
        "查询 ORD-1001", orders=path, caps=CAPS, provider=wire.provider, json_out=False, extra=("--base-url", api.url)
    )

    check(outcome, stop=StopReason.RESPONSE_TRUNCATED, orders=path, before=before)
    assert "Partial answer (cut off)" in outcome.stdout
    assert "订单 ORD-1001 的状态是已发货，预计" in outcome.stdout
    assert "Answer" not in outcome.stdout.replace("Partial answer", "")


@BOTH
def test_tool_call_cut_off_at_the_token_limit_is_not_executed(api, orders, wire):
    path, before = orders
    cut = wire.calls(("get_order_status", '{"order_id": "ORD-10'))
    if wire.provider == "openai":
        cut = {**cut, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    else:
        cut["choices"][0]["finish_reason"] = "length"
    api.enqueue(wire.route, cut)

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.RESPONSE_TRUNCATED, orders=path, before=before, requests=1)
    assert outcome.decisions() == ["not_executed"]


# ---- 6. an empty reply ----------------------------------------------------------------


@BOTH
def test_empty_reply_is_retried_once(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, wire.empty(), wire.text("好的。"))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    assert len(api.requests_for(wire.route)) == 2
    assert outcome.doc["answer"] == "好的。"


@BOTH
def test_empty_reply_twice_says_the_model_returned_nothing(api, orders, wire):
    path, before = orders
    api.fallback[wire.route] = wire.empty()

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.MODEL_ERROR, orders=path, before=before, requests=1)
    assert len(api.requests_for(wire.route)) == 2
    assert "returned nothing" in stop_said(outcome.doc)


# ---- also: what the server says it is ----------------------------------------------------


@BOTH
def test_server_model_and_fingerprint_are_recorded_and_shown(api, orders, wire):
    path, before = orders
    reply = wire.text("好的。")
    reply["model"] = "qwen2.5-1.5b-instruct-q4_k_m.gguf\x1b[31m"
    if wire.provider == "chat":
        reply["system_fingerprint"] = "b4891-3e7e4e3c"
    api.enqueue(wire.route, reply)

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=1)
    shown = cli("runs", "show", outcome.doc["run_id"])
    assert shown.exit_code == 0, shown.output
    assert "qwen2.5-1.5b-instruct-q4_k_m.gguf[31m" in shown.output  # no raw escape
    assert "\x1b" not in shown.output
    assert ("fingerprint b4891-3e7e4e3c" in shown.output) is (wire.provider == "chat")


# ---- 5. resume sends the conversation back to the server the run used ---------------------

CANCEL = ("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"})


def _paused_run(wire, server: FakeAPI, path: Path, url: str):
    server.enqueue(wire.route, wire.calls(CANCEL), wire.text("已取消。"))
    outcome = run("取消 ORD-1002", orders=path, caps=CAPS, provider=wire.provider, extra=("--base-url", url))
    assert outcome.code == 4, outcome.stdout + outcome.stderr
    return outcome


def _resume(run_id: str, path: Path, *extra: str, env: dict | None = None):
    args = ["resume", run_id, "--approve", "--user", "C001", "--orders", str(path), *extra]
    return cli(*args, env={"OPENAI_API_KEY": KEY, **(env or {})})


@BOTH
def test_resume_sends_to_the_recorded_base_url_without_the_flag(orders, wire):
    path, _ = orders
    with FakeAPI() as local, FakeAPI() as elsewhere:
        host = local.url.removeprefix("http://")
        outcome = _paused_run(wire, local, path, f"http://admin:s3cret-pw@{host}")
        record = record_bytes(outcome.doc["run_id"]).decode()
        assert json.loads(record)["base_url"] == local.url  # kept, stripped
        assert "s3cret-pw" not in record and "admin" not in record
        assert outcome.doc["resume_command"].endswith(f"--base-url {local.url}")

        # OPENAI_BASE_URL points elsewhere: without --base-url the record's server wins.
        resumed = _resume(outcome.doc["run_id"], path, "--json", env={"OPENAI_BASE_URL": elsewhere.url})

        assert resumed.exit_code == 0, resumed.output
        assert len(local.requests_for(wire.route)) == 2  # the loopback server's log shows the resume
        assert elsewhere.requests == []
        assert json.loads(resumed.stdout)["base_url"] == local.url


@BOTH
def test_resume_to_another_base_url_needs_the_flag_and_says_so(orders, wire):
    path, _ = orders
    with FakeAPI() as local, FakeAPI() as other:
        outcome = _paused_run(wire, local, path, local.url)
        other.enqueue(wire.route, wire.text("已取消。"))

        resumed = _resume(outcome.doc["run_id"], path, "--base-url", other.url)

        assert resumed.exit_code == 0, resumed.output
        first = " ".join(resumed.stdout.split("\n\n")[0].split())  # the header, however it wraps
        assert f"at {other.url}, given by --base-url (the run used {local.url})" in first
        assert len(local.requests_for(wire.route)) == 1 and len(other.requests_for(wire.route)) == 1


def test_public_base_url_strips_credentials_query_and_fragment():
    from orderbot.settings import public_base_url

    assert public_base_url("https://u:p@example.com:8443/v1?key=k#f") == "https://example.com:8443/v1"
    assert public_base_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert public_base_url("http://localhost:11434/v1/") == "http://localhost:11434/v1/"


# ---- 4. streaming: the size cap and the deadline hold while the bytes arrive ----------------

TWO_MB = 2_000_000


@BOTH
def test_two_megabyte_stream_is_cut_after_about_the_cap(api, orders, wire):
    path, before = orders
    api.enqueue(wire.route, stream_of(sse(wire.route, wire.text("a" * TWO_MB), piece=1000)))

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.RESPONSE_TOO_LARGE, orders=path, before=before, requests=1)
    # Bytes read from the fake server (what the server managed to write is no measure: the
    # kernel's socket buffers on loopback take megabytes): the 16,000-character cap, each
    # event's envelope, and at most one network read (64 KiB) beyond the event that passed it.
    received = outcome.doc["transitions"][-1]["data"]["received_bytes"]
    assert 16_000 < received <= 16_000 * 2 + 65_536


@BOTH
def test_hanging_stream_stops_at_the_deadline_and_hangs_up(api, orders, wire):
    path, before = orders
    first = sse(wire.route, wire.text("订单 ORD-1001 的状态"))[:2]  # the opening events, then nothing but keep-alives
    api.enqueue(wire.route, stream_of(first, hang_after=True))

    outcome = ask(api, wire, path, caps=UNTIL_DEADLINE)

    check(outcome, stop=StopReason.TIME_LIMIT, orders=path, before=before, requests=1)
    assert api.closed.wait(2)  # the connection was closed, not left open in an abandoned thread


@BOTH
def test_server_that_does_not_stream_is_asked_without_stream_from_then_on(orders, wire):
    path, before = orders
    with FakeAPI(streams=False) as api:
        api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), wire.text("已发货。"))

        outcome = ask(api, wire, path)

        check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=2)
        first, second = api.requests_for(wire.route)
        assert first.body["stream"] is True and "stream" not in second.body  # remembered for the run


@BOTH
def test_400_on_stream_falls_back_once_and_is_remembered(api, orders, wire):
    path, before = orders

    def no_streams(then):
        def answer(request: Request):
            if request.body.get("stream"):
                return error(400, "stream_options: unsupported parameter 'stream'")
            return then

        return answer

    api.enqueue(
        wire.route,
        no_streams(wire.calls(("get_order_status", {"order_id": "ORD-1001"}))),
        no_streams(wire.calls(("get_order_status", {"order_id": "ORD-1001"}))),
        no_streams(wire.text("已发货。")),
    )

    outcome = ask(api, wire, path)

    check(outcome, stop=StopReason.ANSWERED, orders=path, before=before, requests=2)
    streamed = [bool(r.body.get("stream")) for r in api.requests_for(wire.route)]
    assert streamed == [True, False, False]  # one refused stream, then plain requests only


@BOTH
def test_streamed_text_reaches_the_callback_piece_by_piece(api, wire):
    from orderbot.loop.model import ModelRequest
    from orderbot.models import create
    from orderbot.settings import load_settings
    from orderbot.shops.session import DEFAULT_SHOP

    api.enqueue(wire.route, wire.text("订单 ORD-1001 的状态是已发货。"))
    model = create(load_settings(provider=wire.provider, base_url=api.url), DEFAULT_SHOP)
    pieces: list[str] = []

    turn = model.respond(ModelRequest("instructions", (), (), 5.0, on_text=pieces.append))

    assert len(pieces) > 1 and "".join(pieces) == turn.text == "订单 ORD-1001 的状态是已发货。"
