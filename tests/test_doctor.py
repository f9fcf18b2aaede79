"""`orderbot doctor`: what would be used, never the key; --ping against the loopback API."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import cli
from fakeapi import WIRES, FakeAPI, error, hang

KEY = "sk-test-SECRET-doctor-0123456789"


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


def doctor(*args: str, key: str | None = None) -> tuple[int, dict[str, str], str]:
    result = cli("doctor", *args, env={"OPENAI_API_KEY": key} if key else {})
    assert "Traceback" not in result.output and KEY not in result.output
    lines = dict(line.split(":", 1) for line in result.stdout.splitlines())
    return result.exit_code, {k: v.strip() for k, v in lines.items()}, result.stdout


def test_offline_by_default(tmp_path: Path):
    code, lines, _ = doctor()

    assert code == 0
    assert lines["provider"] == "offline (auto: no OPENAI_API_KEY)"
    assert lines["model"].startswith("offline-planner")
    assert lines["API key"] == "not set"
    assert lines["orders"].endswith("(the bundled sample, read-only): 14 orders")
    assert lines["state dir"] == str(tmp_path / "state")


def test_auto_with_a_key_shows_openai_and_hides_the_key(orders_file: Path):
    code, lines, out = doctor("--orders", str(orders_file), key=KEY)

    assert code == 0
    assert lines["provider"] == "openai (auto: OPENAI_API_KEY is set)"
    assert lines["model"] == "gpt-4o-mini"
    assert lines["base URL"] == "https://api.openai.com/v1 (default)"
    assert lines["API key"] == "set, from OPENAI_API_KEY in the environment (not shown)"
    assert lines["orders"] == f"{orders_file}: 14 orders"
    assert KEY not in out


def test_base_url_is_shown_without_credentials():
    code, lines, _ = doctor("--provider", "chat", "--base-url", "http://me:pw@localhost:11434/v1", "--model", "qwen3")

    assert code == 0
    assert lines["provider"] == "chat" and lines["model"] == "qwen3"
    assert lines["base URL"] == "http://localhost:11434/v1"


def test_a_base_url_without_a_provider_means_an_openai_compatible_server():
    for key in (None, KEY):  # whether or not an OpenAI key is set too
        code, lines, _ = doctor("--base-url", "http://localhost:11434/v1", key=key)

        assert code == 0 and lines["provider"] == "chat (auto: a base URL is set)"
        assert lines["base URL"] == "http://localhost:11434/v1"


def test_a_base_url_for_the_offline_model_is_pointed_out():
    code, lines, _ = doctor("--provider", "offline", "--base-url", "http://localhost:11434/v1")

    assert code == 0 and lines["provider"] == "offline"
    assert (
        lines["base URL"] == "http://localhost:11434/v1 (not used by the offline model: pass --provider chat to use it)"
    )


def test_unusable_provider_and_orders_exit_6(tmp_path: Path):
    broken = tmp_path / "orders.json"
    broken.write_text('{"orders": [', encoding="utf-8")

    code, lines, _ = doctor("--provider", "openai", "--orders", str(broken), "--ping")

    assert code == 6
    assert "set OPENAI_API_KEY" in lines["provider"]
    assert lines["orders"].startswith("not usable:")
    assert lines["ping"] == "skipped: the provider is not usable"


@pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
def test_ping_makes_one_tiny_request_then_checks_tool_calling(api, wire):
    api.enqueue(wire.route, wire.text("pong"), wire.calls(("echo", {"word": "pong"})))

    code, lines, _ = doctor("--provider", wire.provider, "--base-url", api.url, "--ping", key=KEY)

    assert code == 0
    assert lines["ping"].startswith("ok: answered in ") and " ms" in lines["ping"]
    assert lines["tool calling"] == "ok: a well-formed tool call came back"
    ping, tools = api.requests
    assert "tools" not in ping.body
    assert [tool.get("name") or tool["function"]["name"] for tool in tools.body["tools"]] == ["echo"]


@pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
def test_tool_call_as_plain_text_hints_at_jinja(api, wire):
    api.enqueue(wire.route, wire.text("pong"), wire.text('<tool_call>{"name": "echo", "arguments": {"word": "pong"}}'))

    code, lines, _ = doctor("--provider", wire.provider, "--base-url", api.url, "--ping", key=KEY)

    assert code == 0  # the server answers: a warning, not a failure
    assert lines["tool calling"].startswith("no tool call came back, only text: start llama.cpp with --jinja")


@pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
def test_a_call_of_another_tool_says_which(api, wire):
    api.enqueue(wire.route, wire.text("pong"), wire.calls(("get_weather", {"city": "Paris"})))

    code, lines, _ = doctor("--provider", wire.provider, "--base-url", api.url, "--ping", key=KEY)

    assert code == 0
    assert (
        lines["tool calling"]
        == "a tool call came back, but for get_weather, a tool that was not offered (only echo was)"
    )


@pytest.mark.parametrize("wire", [WIRES["openai"], WIRES["chat"]], ids=["openai", "chat"])
def test_empty_reply_to_the_ping_is_retried_not_a_failure(api, wire):
    api.enqueue(wire.route, wire.empty(), wire.text("pong"), wire.calls(("echo", {"word": "pong"})))

    code, lines, _ = doctor("--provider", wire.provider, "--base-url", api.url, "--ping", key=KEY)

    assert code == 0 and lines["ping"].startswith("ok: answered in ")


def test_ping_failure_is_one_line_and_exit_5(api):
    api.fallback["chat"] = error(401, "Incorrect API key provided")

    code, lines, _ = doctor("--provider", "chat", "--base-url", api.url, "--ping", key=KEY)

    assert code == 5
    assert lines["ping"] == "failed: authentication failed (HTTP 401): check OPENAI_API_KEY"
    assert len(api.requests) == 1


def test_ping_stops_at_the_timeout(api):
    api.enqueue("responses", hang())

    code, lines, _ = doctor("--provider", "openai", "--base-url", api.url, "--ping", "--timeout", "0.5", key=KEY)

    assert code == 5
    assert lines["ping"] == "failed: the model service did not answer in time; no time left to retry within 0.5 s"


def test_ping_with_the_offline_model_gives_no_server_hint():
    code, lines, out = doctor("--provider", "offline", "--ping")

    assert code == 0 and lines["ping"].startswith("ok: answered in")
    assert lines["tool calling"] == "ok: the built-in planner calls orderbot's tools itself"
    assert "llama.cpp" not in out and "vLLM" not in out
