"""`orderbot models`: what the configured server lists (GET /v1/models on the loopback fake
API) and which one orderbot would use; offline, the built-in planner."""

from __future__ import annotations

import json

from clikit import cli
from fakeapi import FakeAPI, error


def test_models_lists_what_the_server_offers_and_marks_the_one_used():
    with FakeAPI() as api:
        api.models = ["qwen2.5:7b", "llama3.1:8b"]
        result = cli("models", "--base-url", api.url, "--model", "qwen2.5:7b")
        doc = json.loads(cli("models", "--base-url", api.url, "-m", "nope", "--json").stdout)
        assert [r.path for r in api.requests] == ["/v1/models", "/v1/models"]
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"2 models at {api.url} (chat):",
        "  llama3.1:8b",
        "* qwen2.5:7b  (orderbot uses this one)",
    ]
    assert doc["models"] == ["llama3.1:8b", "qwen2.5:7b"] and doc["model"] == "nope" and doc["listed"] is False


def test_a_model_the_server_does_not_list_is_said_and_a_failing_server_is_one_line():
    with FakeAPI() as api:
        listed = cli("models", "--base-url", api.url, "-m", "gpt-x")
        api.enqueue("models", error(401, "bad key"))
        failed = cli("models", "--base-url", api.url)
    assert "orderbot would use gpt-x, which the server does not list" in listed.stdout
    assert failed.exit_code == 5 and failed.stdout == "" and len(failed.stderr.splitlines()) == 1, failed.output


def test_offline_models_names_the_built_in_planner():
    result = cli("models", env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0 and "built-in planner" in result.stdout
    zh = cli("--lang", "zh", "models", env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert "内置的规划器" in zh.stdout
