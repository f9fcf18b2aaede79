"""The openai and chat providers over real HTTP: the real CLI, the real openai SDK, and a
loopback server (tests/fakeapi.py) playing the API. Every scenario runs with a
recognisable key and checks that it never shows up in anything printed or written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from clikit import cli, on_time
from fakeapi import (
    WIRES,
    FakeAPI,
    completion,
    error,
    function_call,
    hang,
    message,
    raw,
    reasoning,
    reply,
    reset,
    response,
    sse,
    stream_of,
    tool_call,
    trickle,
)
from saying import raises, stop_said

KEY = "sk-test-SECRET-abc123def456ghi789"
QUESTION = "请查询订单 ORD-1001 的状态。"
BOTH = pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


class Run:
    def __init__(self, result, seconds: float) -> None:
        self.code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.seconds = seconds

    @property
    def doc(self) -> dict:
        return json.loads(self.stdout)


def ask(api: FakeAPI, wire, *args: str, question: str = QUESTION, key: str | None = KEY) -> Run:
    """`orderbot ask --provider P --base-url URL ...`, then the key-leak check on everything."""
    env = {"OPENAI_API_KEY": key} if key else {}
    began = time.monotonic()
    result = cli("ask", "--provider", wire.provider, "--base-url", api.url, *args, question, env=env)
    run = Run(result, time.monotonic() - began)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in run.stdout + run.stderr
    assert_no_key(run.stdout + run.stderr)
    return run


def assert_no_key(text: str) -> None:
    assert KEY not in text
    assert KEY[8:] not in text  # nor a recognisable part of it


def written_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.fixture(autouse=True)
def nothing_written_holds_the_key(tmp_path: Path):
    """After every test: no file under the test's folders (state dir, log, cwd) holds the key."""
    yield
    for path in written_files(tmp_path):
        assert KEY.encode() not in path.read_bytes(), f"the key was written to {path}"


def status_answer(wire):
    """A model turn that reports each tool result it was sent: proves the round trip."""

    def turn(request) -> dict:
        envelopes = wire.outputs(request).values()
        return wire.text("；".join(f"订单 {e['data']['order_id']} 的状态是：{e['data']['status']}" for e in envelopes))

    return turn


# ---- the happy paths --------------------------------------------------------------------


@BOTH
def test_tool_round_trip_through_the_cli(api, wire):
    api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), status_answer(wire))

    run = ask(api, wire)

    assert run.code == 0, run.stdout + run.stderr
    assert "proposed 1 call" in run.stdout and 'get_order_status(order_id="ORD-1001")' in run.stdout
    assert "订单 ORD-1001 的状态是：已发货" in run.stdout  # 已发货 came from the tool, via the server
    first, second = api.requests_for(wire.route)
    assert first.headers["authorization"] == f"Bearer {KEY}"  # the key goes to the server and nowhere else
    assert first.body["model"] == "gpt-4o-mini"
    assert list(wire.outputs(second).values()) == [{"ok": True, "data": {"order_id": "ORD-1001", "status": "已发货"}}]


@BOTH
def test_a_stream_of_many_small_deltas_is_read_no_further_than_the_size_cap(api, wire):
    """The reader hangs up once the streamed text passes the response-size cap: of 12,000
    two-character deltas, orderbot reads the events up to the cap and at most one network
    read (64 KiB) past them, never the rest. A later size check would still stop the run
    as response_too_large had reading gone on; the bytes read are what tell."""
    cap, piece = 1000, 2
    events = sse(wire.route, wire.text("a" * 24_000), piece=piece)
    api.enqueue(wire.route, stream_of(events))
    env = {"OPENAI_API_KEY": KEY, "ORDERBOT_MAX_RESPONSE_CHARS": str(cap)}
    result = cli("ask", "--json", "--provider", wire.provider, "--base-url", api.url, QUESTION, env=env)

    doc = json.loads(result.stdout)
    assert doc["stop_reason"] == "response_too_large", result.stdout
    text_events = [i for i, chunk in enumerate(events) if b'"aa"' in chunk]
    through_cap = sum(len(chunk) for chunk in events[: text_events[cap // piece] + 1])
    received = doc["transitions"][-1]["data"]["received_bytes"]
    assert through_cap < received <= through_cap + 65_536
    assert sum(len(chunk) for chunk in events) > 10 * (through_cap + 65_536)  # the rest was never read


def test_openai_request_shape(api):
    wire = WIRES["openai"]
    api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), status_answer(wire))

    assert ask(api, wire).code == 0

    first, second = api.requests_for("responses")
    assert "订单查询助手" in first.body["instructions"]
    assert first.body["input"] == [{"type": "message", "role": "user", "content": QUESTION}]
    spec = next(t for t in first.body["tools"] if t["name"] == "get_order_status")
    assert spec["type"] == "function" and spec["strict"] is True
    assert spec["parameters"]["additionalProperties"] is False
    call, output = second.body["input"][1:]
    assert call["type"] == "function_call" and call["name"] == "get_order_status"
    assert output == {"type": "function_call_output", "call_id": call["call_id"], "output": output["output"]}


def test_chat_request_shape(api):
    wire = WIRES["chat"]
    api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), status_answer(wire))

    assert ask(api, wire).code == 0

    first, second = api.requests_for("chat")
    system, question = first.body["messages"]
    assert system["role"] == "system" and "订单查询助手" in system["content"]
    assert question == {"role": "user", "content": QUESTION}
    spec = next(t for t in first.body["tools"] if t["function"]["name"] == "get_order_status")
    assert spec["type"] == "function" and spec["function"]["parameters"]["additionalProperties"] is False
    assistant, tool = second.body["messages"][2:]
    (call,) = assistant["tool_calls"]
    assert assistant["role"] == "assistant" and call["function"]["name"] == "get_order_status"
    assert tool["role"] == "tool" and tool["tool_call_id"] == call["id"]


@BOTH
def test_two_calls_in_one_turn(api, wire):
    api.enqueue(
        wire.route,
        wire.calls(("get_order_status", {"order_id": "ORD-1001"}), ("get_order_status", {"order_id": "ORD-1002"})),
        status_answer(wire),
    )

    run = ask(api, wire, "--json", question="ORD-1001 和 ORD-1002 的状态？")

    assert run.code == 0
    doc = run.doc
    assert doc["tool_calls"] == 2 and doc["steps"] == 2
    assert "订单 ORD-1001 的状态是：已发货" in doc["answer"] and "ORD-1002" in doc["answer"]
    sent = wire.outputs(api.requests_for(wire.route)[1])
    assert len(sent) == 2 and {e["data"]["order_id"] for e in sent.values()} == {"ORD-1001", "ORD-1002"}


@BOTH
def test_usage_is_recorded_per_step(api, wire):
    api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), status_answer(wire))

    doc = ask(api, wire, "--json").doc

    per_request = (120, 20) if wire.provider == "openai" else (100, 15)  # the canned replies' usage
    assert doc["usage"] == {"input_tokens": 2 * per_request[0], "output_tokens": 2 * per_request[1]}


@BOTH
def test_trace_and_json_hold_no_key(api, wire):
    for flag in ("--trace", "--json"):
        api.enqueue(wire.route, wire.calls(("get_order_status", {"order_id": "ORD-1001"})), status_answer(wire))
        run = ask(api, wire, flag)  # ask() checks stdout and stderr for the key
        assert run.code == 0 and "已发货" in run.stdout


def test_reasoning_items_go_back_verbatim_and_paired(api):
    thought = reasoning("look the order up")
    call = function_call("get_order_status", {"order_id": "ORD-1001"})
    api.enqueue("responses", response(thought, call), status_answer(WIRES["openai"]))

    assert ask(api, WIRES["openai"]).code == 0

    sent = api.requests_for("responses")[1].body["input"]
    assert sent[1] == thought  # exactly as received
    assert sent[2]["id"] == call["id"] and sent[2]["call_id"] == call["call_id"]  # still paired by id


def test_chat_answer_without_tools_and_thinking_stripped(api):
    api.enqueue("chat", completion("<think>the user greets me</think>\n你好！请提供订单号。"))

    run = ask(api, WIRES["chat"], question="你好")

    assert run.code == 0 and "你好！请提供订单号。" in run.stdout and "<think>" not in run.stdout


# ---- retries and the deadline -----------------------------------------------------------


@BOTH
def test_rate_limit_then_success_honours_retry_after(api, wire):
    api.enqueue(wire.route, error(429, "Rate limit reached", headers={"retry-after": "0.6"}), wire.text("好的"))

    run = ask(api, wire)

    assert run.code == 0
    first, second = api.requests_for(wire.route)
    # 0.6 s is longer than the first backoff could be (at most 0.5 s): the header was honoured
    assert second.at - first.at >= 0.6


@BOTH
def test_connection_reset_is_retried(api, wire):
    api.enqueue(wire.route, reset(), wire.text("好的"))

    run = ask(api, wire)

    assert run.code == 0 and len(api.requests_for(wire.route)) == 2


@BOTH
def test_server_errors_until_the_deadline_stop_on_time(api, wire, tmp_path):
    api.fallback[wire.route] = error(500, "The server had an error while processing your request.")

    run = ask(api, wire, "--timeout", "1", "--json")

    assert run.code == 3
    assert run.doc["stop_reason"] == "time_limit"
    assert len(api.requests_for(wire.route)) >= 2  # retried in between
    assert on_time(run.seconds, 1)
    log = (tmp_path / "state" / "orderbot.log").read_text(encoding="utf-8")  # scanned for the key too
    assert (
        "model request failed: the model service failed (HTTP 500): "
        "The server had an error while processing your request.; retrying in"
    ) in log


@BOTH
def test_hanging_server_stops_on_time(api, wire):
    api.enqueue(wire.route, hang())

    run = ask(api, wire, "--timeout", "0.5")

    assert run.code == 3 and "time limit" in run.stdout
    assert on_time(run.seconds, 0.5)


@BOTH
def test_trickling_server_stops_on_time(api, wire):
    # A byte every 0.1 s: no single read ever times out; only the deadline on the request stops it.
    api.enqueue(wire.route, trickle(0.1))

    run = ask(api, wire, "--timeout", "0.5")

    assert run.code == 3
    assert on_time(run.seconds, 0.5)


# ---- failures that are not retried ------------------------------------------------------


@BOTH
def test_bad_key_is_one_request_and_exit_5(api, wire):
    api.fallback[wire.route] = error(
        401,
        f"Incorrect API key provided: {KEY}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        code="invalid_api_key",
    )

    run = ask(api, wire, "--json")

    assert run.code == 5
    assert len(api.requests_for(wire.route)) == 1
    assert run.doc["stop_reason"] == "model_error"
    assert stop_said(run.doc) == "authentication failed (HTTP 401): check OPENAI_API_KEY"


@BOTH
@pytest.mark.parametrize(
    "body",
    [
        raw("<html><body>502 Bad Gateway</body></html>"),
        raw('{"id": "resp_1", "output": [', content_type="application/json"),
        reply(["not", "an", "object"]),
    ],
    ids=["html", "truncated-json", "json-array"],
)
def test_body_that_is_not_a_response_is_a_model_error(api, wire, body):
    api.enqueue(wire.route, body)

    run = ask(api, wire)

    assert run.code == 5
    assert "Stopped: the model service failed." in run.stdout
    assert "JSON" in run.stdout
    assert len(api.requests_for(wire.route)) == 1


@BOTH
def test_bad_request_shows_the_servers_reason_without_the_key(api, wire):
    api.enqueue(wire.route, error(400, f"Invalid value for 'model': unknown-model (key {KEY})"))

    run = ask(api, wire, "--json")

    assert run.code == 5 and len(api.requests) == 1
    assert stop_said(run.doc).startswith("the model service refused the request (HTTP 400): Invalid value for 'model'")


def test_responses_not_found_suggests_the_chat_provider(api):
    api.enqueue("responses", error(404, "Not Found"))

    run = ask(api, WIRES["openai"], "--json")

    assert run.code == 5
    assert "try --provider chat" in stop_said(run.doc)


@BOTH
def test_quota_exhausted_is_not_retried(api, wire):
    api.fallback[wire.route] = error(429, "You exceeded your current quota", code="insufficient_quota")

    run = ask(api, wire, "--json")

    assert run.code == 5 and len(api.requests) == 1
    assert "quota" in stop_said(run.doc)


@BOTH
def test_provider_without_key_or_base_url_is_a_config_error(wire):
    result = cli("ask", "--provider", wire.provider, QUESTION)

    assert result.exit_code == 6
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "set OPENAI_API_KEY" in lines[0]


@BOTH
def test_local_server_needs_no_key(api, wire):
    api.enqueue(wire.route, wire.text("好的"))

    run = ask(api, wire, key=None)

    assert run.code == 0
    assert api.requests[0].headers["authorization"] == "Bearer not-needed"


# ---- the canned replies are shaped like the real API's ----------------------------------


def test_canned_replies_parse_with_the_sdks_own_types():
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    parsed = Response.model_validate(response(reasoning("why"), function_call("f", {"a": 1}), message("hi")))
    assert [item.type for item in parsed.output] == ["reasoning", "function_call", "message"]
    assert parsed.output_text == "hi" and parsed.usage.output_tokens == 20
    chat = ChatCompletion.model_validate(completion("hi", [tool_call("f", {"a": 1})]))
    assert chat.choices[0].message.tool_calls[0].function.name == "f"
    assert chat.usage.prompt_tokens == 100


# ---- translation between the run's items and each wire format ---------------------------


def test_reasoning_of_unknown_provenance_is_dropped_with_the_ids():
    """A resumed run's items carry no provider ids: reasoning sent without its paired
    items' ids would be refused, so it is left out and the calls go back plain."""
    from orderbot.loop.items import FunctionCall, FunctionCallOutput, ProviderItem, user
    from orderbot.models.openai import to_input

    items = [
        user("q"),
        ProviderItem(provider="openai", data=reasoning("x")),
        FunctionCall(call_id="c1", name="get_order_status", arguments="{}"),
        FunctionCallOutput(call_id="c1", output='{"ok":true}'),
        ProviderItem(provider="someone-else", data={"type": "thing"}),
    ]

    assert to_input(items) == [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "function_call", "call_id": "c1", "name": "get_order_status", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": '{"ok":true}'},
    ]


def test_openai_output_items_become_project_items():
    from orderbot.loop.items import FunctionCall, Message, ProviderItem
    from orderbot.models.openai import to_turn

    thought = reasoning("x")
    turn, originals = to_turn(
        response(thought, message("先查一下"), function_call("get_order_status", {"order_id": "A"}, "c9"))
    )

    assert turn.items == (
        ProviderItem(provider="openai", data=thought),
        Message(role="assistant", content="先查一下"),
        FunctionCall(call_id="c9", name="get_order_status", arguments='{"order_id": "A"}'),
    )
    assert originals[0] is thought


def test_openai_empty_output_is_an_empty_reply_and_incomplete_is_truncated():
    from orderbot.errors import EmptyReply
    from orderbot.models.openai import to_turn

    with raises(EmptyReply, match="returned nothing"):
        to_turn(response(reasoning("thinking…")))
    turn, _ = to_turn(response(reasoning("thinking…"), status="incomplete", incomplete="max_output_tokens"))
    assert turn.truncated and not turn.text and not turn.calls


def test_chat_messages_join_a_turns_text_and_calls():
    from orderbot.loop.items import FunctionCall, FunctionCallOutput, assistant, user
    from orderbot.models.chat import to_messages

    items = [
        user("q"),
        assistant("let me look"),
        FunctionCall(call_id="a", name="f", arguments="{}"),
        FunctionCall(call_id="b", name="f", arguments="{}"),
        FunctionCallOutput(call_id="a", output="1"),
        FunctionCallOutput(call_id="b", output="2"),
        assistant("done"),
    ]

    messages = to_messages("sys", items)

    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert messages[2]["content"] == "let me look" and [c["id"] for c in messages[2]["tool_calls"]] == ["a", "b"]


def test_chat_tool_calls_from_lenient_servers():
    """Some local servers send arguments as an object and leave out tool call ids."""
    from orderbot.models.chat import to_turn

    body = completion(None, [{"type": "function", "function": {"name": "f", "arguments": {"order_id": "A"}}}])

    turn = to_turn(body, lambda: "generated")

    (call,) = turn.calls
    assert call.call_id == "generated" and json.loads(call.arguments) == {"order_id": "A"}


@pytest.mark.slow
def test_help_offline_runs_and_doctor_never_import_the_sdk(tmp_path):
    """The SDK costs about a second to import: only a provider that needs it may load it."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from orderbot.cli import app\n"
        "for args in (['--help'], ['ask', '--help'], ['ask', '查询 ORD-1001'], ['doctor']):\n"
        "    assert CliRunner().invoke(app, args).exit_code == 0, args\n"
        "print('openai' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
