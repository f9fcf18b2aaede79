"""`orderbot ask` end to end through the real command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import cli
from runkit import run_ids

from orderbot.errors import ModelError
from orderbot.models.scripted import ScriptedModel, call, calls

ANSI = re.compile(r"\x1b\[")


def ask(*args: str, input: str | None = None):
    return cli("ask", *args, input=input)


def test_chinese_question_prints_table_and_answer():
    result = ask("请查询订单 ORD-1001 的状态。")
    assert result.exit_code == 0, result.output
    assert "proposed 1 call" in result.output and "executed" in result.output
    assert "get_order_status" in result.output
    assert "订单 ORD-1001 的状态是：已发货。" in result.output
    assert "offline" in result.output  # says which model answered
    assert not ANSI.search(result.output)


def test_english_question():
    result = ask("What's the status of ORD-1002?")
    assert result.exit_code == 0
    assert "Order ORD-1002 is processing" in result.output


def test_two_orders_in_one_step_with_two_calls():
    result = ask("查询 ORD-1001 和 ORD-1002", "--json")
    doc = json.loads(result.output)
    assert doc["steps"] == 2 and doc["tool_calls"] == 2
    assert [c["step"] for c in doc["calls"]] == [1, 1]
    assert "已发货" in doc["answer"] and "处理中" in doc["answer"]


def test_step_limit_exits_3_and_says_the_call_was_not_executed():
    result = ask("--max-steps", "1", "查询 ORD-1001")
    assert result.exit_code == 3
    assert "step limit" in result.output and "not executed" in result.output
    assert "run id" in result.output


def test_json_document_keys():
    result = ask("--json", "查询 ORD-1001")
    doc = json.loads(result.output)
    for key in ("run_id", "stop_reason", "answer", "steps", "tool_calls", "transitions", "provider", "model"):
        assert key in doc
    assert doc["stop_reason"] == "answered" and doc["provider"] == "offline"
    for transition in doc["transitions"]:
        assert {"step", "from", "to", "kind", "data", "elapsed_ms"} <= set(transition)
        assert "event" not in transition and "detail" not in transition  # values, no words


def test_json_answer_is_null_on_a_limit_stop():
    doc = json.loads(ask("--json", "--max-steps", "1", "查询 ORD-1001").output)
    assert doc["answer"] is None and doc["stop_reason"] == "step_limit"


def test_each_switch_of_ask_is_a_setting_too(monkeypatch):
    monkeypatch.setenv("ORDERBOT_JSON", "1")
    assert json.loads(ask("查询 ORD-1001").stdout)["stop_reason"] == "answered"
    monkeypatch.delenv("ORDERBOT_JSON")
    Path(".env").write_text("ORDERBOT_TRACE=true\nORDERBOT_NO_FACTS=1\n", encoding="utf-8")
    result = ask("查询 ORD-1001")
    assert "budget left" in result.stdout and "step 1" in result.stdout  # the trace's panels
    assert "Facts from the tools" not in result.stdout
    monkeypatch.setenv("ORDERBOT_JSON", "maybe")
    result = ask("查询 ORD-1001")
    assert result.exit_code == 6
    assert result.stderr.startswith("orderbot: invalid value for ORDERBOT_JSON in the environment: ")


def test_quiet_prints_the_answer_only_and_a_stop_in_one_line_on_stderr():
    answered = ask("-q", "查询 ORD-1001")
    assert (answered.exit_code, answered.stdout, answered.stderr) == (0, "订单 ORD-1001 的状态是：已发货。\n", "")
    stopped = ask("--quiet", "--max-steps", "1", "查询 ORD-1001")
    assert stopped.exit_code == 3 and stopped.stdout == ""  # the exit code as without -q
    [line] = stopped.stderr.splitlines()
    assert line.startswith("orderbot: Stopped: the step limit was reached.") and "stop reason: step_limit" in line


def test_the_question_from_standard_input():
    assert ask("-q", input="查询 ORD-1002\n").stdout == "订单 ORD-1002 的状态是：处理中。\n"  # no argument, piped
    assert ask("-q", "-", input="查询 ORD-1001").stdout == "订单 ORD-1001 的状态是：已发货。\n"
    empty = ask(input="")
    assert empty.exit_code == 2 and "the question is empty" in empty.stderr


def test_model_error_exits_5(use_model):
    use_model(ScriptedModel([ModelError("authentication failed: check OPENAI_API_KEY")]))
    result = ask("--provider", "scripted", "查询 ORD-1001")
    assert result.exit_code == 5
    assert "authentication failed" in result.output
    assert "Traceback" not in result.output


def test_tool_call_limit_exits_3(use_model):
    use_model(ScriptedModel([calls(*[call("get_order_status", {"order_id": "ORD-1001"}) for _ in range(4)])]))
    result = ask("--provider", "scripted", "查询 ORD-1001")
    assert result.exit_code == 3 and "tool_call_limit" in result.output


def test_cancelled_exits_130(use_model):
    use_model(ScriptedModel([KeyboardInterrupt()]))
    assert ask("--provider", "scripted", "查询 ORD-1001").exit_code == 130


def test_limit_stop_still_shows_what_was_observed(use_model):
    use_model(
        ScriptedModel(
            [
                calls(call("get_order_status", {"order_id": "ORD-1001"})),
                calls(call("get_order_status", {"order_id": "ORD-1002"})),
            ]
        )
    )
    result = ask("--provider", "scripted", "--max-steps", "2", "查询")
    assert result.exit_code == 3
    observed = result.output.split("Observed before the stop:")[1]
    assert "已发货" in observed and "ORD-1002" not in observed.split("stop reason")[0]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--max-steps", "0", "q"], 2),  # a bad flag value: a usage error, as Typer's own
        (["--timeout", "-1", "q"], 2),
        (["--max-tool-calls", "-2", "q"], 2),
        (["--provider", "nonsense", "q"], 2),
        (["--orders", "does-not-exist.json", "q"], 6),
        ([""], 2),  # an empty question: what was typed, as a bad flag
    ],
)
def test_configuration_errors_exit_with_one_line(args, code):
    result = ask(*args)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_broken_orders_file_exits_6(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{oops", encoding="utf-8")
    result = ask("--orders", str(path), "查询 ORD-1001")
    assert result.exit_code == 6 and "not valid JSON" in result.output


def test_usage_error_exits_2():
    assert ask("--max-steps", "many", "q").exit_code == 2
    assert cli("ask").exit_code == 2


def test_text_piped_beside_a_question_goes_before_it():
    doc = json.loads(ask("--json", "这个订单的状态？", input="客户来信：我的订单 ORD-1002 还没到。\n").stdout)
    assert doc["question"] == "客户来信：我的订单 ORD-1002 还没到。\n\n这个订单的状态？"
    assert "处理中" in doc["answer"]
    alone = json.loads(ask("--json", "查询 ORD-1001", input="   \n").stdout)  # nothing but blanks: the question alone
    assert alone["question"] == "查询 ORD-1001"


@pytest.mark.slow  # processes of their own: a real pipe, and /dev/null
def test_a_real_pipe_beside_a_question_is_read_and_dev_null_is_not_waited_for():
    command = [sys.executable, "-m", "orderbot", "ask", "--json", "what is its status?"]
    piped = subprocess.run(command, input="my order is ORD-1003", capture_output=True, text=True, timeout=60)
    assert json.loads(piped.stdout)["question"] == "my order is ORD-1003\n\nwhat is its status?"
    quiet = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert json.loads(quiet.stdout)["question"] == "what is its status?"


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


@pytest.mark.slow  # a process of its own
def test_piped_output_has_no_ansi_even_without_no_color():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    result = subprocess.run(
        [sys.executable, "-m", "orderbot", "ask", "查询 ORD-1001"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "TERM": "xterm-256color"},
    )
    assert result.returncode == 0
    assert not ANSI.search(result.stdout) and "已发货" in result.stdout


# The SDKs only some commands need: openai (its providers), the MCP SDK and its web server (`orderbot mcp`).
HEAVY = re.compile(r"\|\s+(openai|mcp|mcp_types|uvicorn|starlette)\b")


@pytest.mark.slow  # a process of its own
def test_help_imports_nothing_heavy():
    result = _run("-X", "importtime", "-m", "orderbot", "--help")
    assert result.returncode == 0
    assert [line for line in result.stderr.splitlines() if HEAVY.search(line)] == []


@pytest.mark.slow  # a process of its own
def test_offline_ask_imports_nothing_heavy():
    result = _run("-X", "importtime", "-m", "orderbot", "ask", "--provider", "offline", "查询 ORD-1001")
    assert result.returncode == 0
    assert not [line for line in result.stderr.splitlines() if HEAVY.search(line)]


def _records() -> list[str]:
    return run_ids()


def test_no_log_runs_without_a_record_and_refuses_a_side_effect_before_it_runs(orders_file):
    answered = ask("-n", "-q", "查询 ORD-1001")
    assert (answered.exit_code, answered.stdout) == (0, "订单 ORD-1001 的状态是：已发货。\n")
    assert cli("ask", "--json", "查询 ORD-1001", env={"ORDERBOT_NO_LOG": "1"}).exit_code == 0  # the setting
    assert _records() == []
    before = orders_file.read_bytes()
    refused = ask("--no-log", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002")
    assert refused.exit_code == 9, refused.output
    [line] = refused.stderr.splitlines()
    assert line.startswith("orderbot: not run, as it needs approval") and "Cancel ORD-1002" in line
    assert orders_file.read_bytes() == before and _records() == []
