"""Settings from the environment are checked like flags: a bad value is one sentence naming
the variable, exit 6 (a flag's bad value is a usage error, exit 2), no traceback, and an
escape sequence in the value is shown escaped, never raw."""

from __future__ import annotations

import os
import subprocess

import pytest
import warm_orderbot
from clikit import cli

ESCAPES = "\x1b]0;pwn\x07\x1b[31mX\x9b\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def orderbot(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A real process: the language is chosen before any command runs, once per process."""
    return subprocess.run(
        [warm_orderbot.command(), *args], capture_output=True, text=True, timeout=60, env=os.environ | env
    )


def one_clean_sentence(output: str) -> str:
    assert "Traceback" not in output and "ValueError" not in output, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert not any(raw in output for raw in RAW), repr(output)
    return lines[0]


@pytest.mark.slow  # a process of its own
@pytest.mark.parametrize("value", ["klingon", ESCAPES, "zh\x1b[2J"])
@pytest.mark.parametrize("command", [["ask", "查询 ORD-1001"], ["runs"], ["doctor"]])
def test_a_bad_orderbot_lang_is_one_sentence_and_exit_6(value, command):
    done = orderbot(*command, env={"ORDERBOT_LANG": value})
    assert done.returncode == 6, done.stderr
    line = one_clean_sentence(done.stderr)
    assert "ORDERBOT_LANG" in line and "zh or en" in line, line
    assert done.stdout == ""


@pytest.mark.slow  # a process of its own
def test_the_escapes_of_orderbot_lang_are_shown_escaped():
    line = one_clean_sentence(orderbot("runs", env={"ORDERBOT_LANG": ESCAPES}).stderr)
    assert "\\x1b]0;pwn\\x07" in line and "\\u202e" in line, line


@pytest.mark.slow
def test_a_bad_lang_flag_stays_a_usage_error_and_a_good_one_wins_over_the_environment():
    done = orderbot("--lang", "fr\x1b[31m", "runs", env={})
    assert done.returncode == 2 and "--lang" in done.stderr and "\x1b[31m" not in done.stderr, done.stderr
    done = orderbot("--lang", "en", "runs", env={"ORDERBOT_LANG": "klingon"})
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "name",
    [
        "ORDERBOT_PROVIDER",
        "ORDERBOT_USER",
        "ORDERBOT_MAX_STEPS",
        "ORDERBOT_TIMEOUT",
        "ORDERBOT_ORDERS",
        "ORDERBOT_MODEL",
        "MODEL_NAME",
        "ORDERBOT_BASE_URL",
        "OPENAI_BASE_URL",
        "ORDERBOT_KEEP_RUNS",
        "ORDERBOT_APPROVAL_TTL_HOURS",
        "ORDERBOT_MAX_OUTPUT_TOKENS",
    ],
)
def test_every_setting_with_escapes_in_the_environment_is_one_escaped_sentence(name, monkeypatch):
    monkeypatch.setenv(name, ESCAPES)
    result = cli("ask", "查询 ORD-1001")
    assert result.exit_code == 6, result.output
    one_clean_sentence(result.output)


@pytest.mark.parametrize(
    "flag, variable, value", [("--user", "ORDERBOT_USER", "bad user"), ("--provider", "ORDERBOT_PROVIDER", "nope")]
)
def test_a_bad_flag_is_exit_2_and_the_same_value_from_the_environment_exit_6(flag, variable, value, monkeypatch):
    """The documented rule (docs/approval.md, docs/terminal.md): a flag is a usage error."""
    result = cli("ask", flag, value, "查询 ORD-1001")
    assert result.exit_code == 2, result.output
    one_clean_sentence(result.output)
    monkeypatch.setenv(variable, value)
    result = cli("ask", "查询 ORD-1001")
    assert result.exit_code == 6, result.output
    assert variable in one_clean_sentence(result.output) or variable == "ORDERBOT_PROVIDER"


def test_only_the_documented_variables_are_read(monkeypatch):
    """A key, a server or a model meant for another program (API_KEY, BASE_URL, MODEL in the
    environment) is never taken for orderbot's: a key would go to another server."""
    from orderbot.settings import load_settings

    monkeypatch.setenv("API_KEY", "sk-for-another-program")
    monkeypatch.setenv("BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MODEL", "another-model")
    monkeypatch.setenv("JSON_OUTPUT", "1")
    settings = load_settings()
    assert (settings.api_key, settings.base_url, settings.model, settings.json_output) == (
        None,
        None,
        "gpt-4o-mini",
        False,
    )
