"""Command-line conventions people expect: help, exit codes,
closed pipes, stdin, `last`, doctor --json, completion, tokens, a private log."""

from __future__ import annotations

import ast
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import cli

from orderbot.commands.common import complete_provider, complete_run_id

ORDERBOT = str(Path(sys.executable).with_name("orderbot"))
ANSI = re.compile(r"\x1b\[")


# ---- conventions ------------------------------------------------------------------------------


def test_flags_show_no_type_as_if_they_took_a_value():
    output = cli("ask", "--help", env={"COLUMNS": "120"}).output
    assert "--json" in output and "<bool>" not in output
    assert "<int>" in output  # options that take a value still say what kind


def test_top_level_help_has_examples_and_bare_orderbot_prints_it_with_exit_0():
    result = cli()
    assert result.exit_code == 0
    assert "Usage: orderbot" in result.output and 'Examples: orderbot ask "查询 ORD-1001"' in result.output


def test_short_version_flag():
    result = cli("-V")
    assert result.exit_code == 0 and result.output.startswith("orderbot ")


@pytest.mark.slow
def test_no_color_means_no_escape_codes_in_help_either():
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    styled = subprocess.run([ORDERBOT, "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert ANSI.search(styled.stdout)  # the control: forced colour does colour the help
    plain = subprocess.run(
        [ORDERBOT, "--help"], env={**env, "NO_COLOR": "1"}, capture_output=True, text=True, timeout=60
    )
    assert plain.returncode == 0 and "Usage" in plain.stdout
    assert not ANSI.search(plain.stdout)


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly_with_141_not_1(tmp_path):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before orderbot writes a byte: `| head -0`
    try:
        result = subprocess.run(
            [ORDERBOT, "ask", "查询 ORD-1001"], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


LEFT_AT_EXIT = """
import atexit, gc, json, sys
from orderbot.cli import main
# Registered first, so it runs last: after what the command line registered for its exit.
atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count(), "calls": calls}), file=sys.stderr))
calls = 0
for args in (["--version"], ["ask", "-q", "--provider", "offline", "查询 ORD-1001"]):
    calls += 1
    sys.argv = ["orderbot", *args]
    try:
        main()
    except SystemExit:
        pass
    assert gc.get_freeze_count() == 0  # a caller of main() (a test) keeps its collector until the process ends
"""


@pytest.mark.slow
def test_the_command_line_leaves_its_objects_to_the_system_at_exit():
    """At exit every object the imports made is frozen, so Python's last collections do not
    walk and free them one by one (0.1-0.2 s of a run that loaded the openai SDK): the
    answer printed, the run recorded, and nothing collected after that."""
    done = subprocess.run([sys.executable, "-c", LEFT_AT_EXIT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "订单 ORD-1001 的状态是：已发货。"
    said = json.loads(done.stderr.strip().splitlines()[-1])
    assert said["calls"] == 2 and said["frozen"] > 10_000


def test_a_piped_repl_whose_last_message_paused_exits_4(orders_file):
    result = cli("repl", "--user", "C001", "--orders", str(orders_file), input="取消 ORD-1002，不想要了\n")
    assert result.exit_code == 4, result.output
    result = cli(
        "repl", "--user", "C001", "--orders", str(orders_file), input="取消 ORD-1002，不想要了\n查询 ORD-1001\n"
    )
    assert result.exit_code == 0  # a later message answered: the session ended well


def test_an_unknown_stop_reason_is_a_usage_error_listing_the_valid_ones():
    result = cli("runs", "--stop-reason", "bogus")
    assert result.exit_code == 2
    assert "bogus" in result.stderr and "awaiting_approval" in result.stderr and "incomplete" in result.stderr


def test_the_stop_reasons_runs_accepts_are_the_engines_and_incomplete():
    from orderbot.commands.runs import STOP_REASONS
    from orderbot.loop.engine import StopReason

    assert set(STOP_REASONS) == {str(r) for r in StopReason} | {"incomplete"}


# ---- small things people expect ---------------------------------------------------------------


def test_ask_dash_reads_the_question_from_standard_input():
    result = cli("ask", "-", input="查询 ORD-1001\n")
    assert result.exit_code == 0, result.output
    assert "订单 ORD-1001 的状态是" in result.output


def test_last_names_the_newest_run_for_show_replay_and_resume(orders_file):
    cli("ask", "查询 ORD-1001")
    cli("ask", "--user", "C001", "--orders", str(orders_file), "取消 ORD-1002，不想要了")
    newest = json.loads(cli("runs", "--json", "--user", "C001").stdout)[0]["run_id"]
    shown = cli("runs", "show", "last")
    assert shown.exit_code == 0 and newest in shown.output and "awaiting_approval" in shown.output
    assert cli("replay", "last").exit_code == 0
    resumed = cli("resume", "last", "--reject", "--user", "C001", "--orders", str(orders_file))
    assert resumed.exit_code == 0 and newest in resumed.output


def test_last_without_runs_says_so():
    result = cli("runs", "show", "last")
    assert result.exit_code == 6 and "no runs recorded" in result.stderr


def test_runs_tells_an_approved_run_from_a_rejected_one(orders_file):
    ids = {}
    for decision in ("--approve", "--reject"):
        asked = cli("ask", "--json", "--user", "C001", "--orders", str(orders_file), "取消 ORD-1002，不想要了")
        ids[decision] = json.loads(asked.stdout)["run_id"]
        cli("resume", ids[decision], decision, "--user", "C001", "--orders", str(orders_file))
        orders_file.write_text(Path(orders_file).read_text().replace("已取消", "处理中"), encoding="utf-8")
    rows = {r["run_id"]: r for r in json.loads(cli("runs", "--json").stdout)}
    assert rows[ids["--approve"]]["decisions"] == ["approved"]
    assert rows[ids["--reject"]]["decisions"] == ["rejected"]
    table = cli("runs", env={"COLUMNS": "200"}).output
    assert "(rejected)" in table and "(approved)" in table


def test_doctor_json_holds_the_same_facts_and_never_the_key():
    result = cli("doctor", "--json", env={"OPENAI_API_KEY": "sk-test-SECRET-1234567890"})
    doc = json.loads(result.stdout)
    assert result.exit_code == doc["exit_code"] == 0
    assert doc["provider"] == "openai" and doc["api_key_set"] is True and doc["orders"]["count"] > 0
    assert "SECRET" not in result.stdout


def test_completion_of_providers_and_run_ids():
    assert complete_provider("") == ["auto", "offline", "openai", "chat"]
    assert complete_provider("o") == ["offline", "openai"]
    cli("ask", "查询 ORD-1001")
    newest = json.loads(cli("runs", "--json").stdout)[0]["run_id"]
    assert complete_run_id("") == ["last", newest]
    assert complete_run_id(newest[:8]) == [newest]


def test_the_log_is_private(tmp_path):
    cli("ask", "查询 ORD-1001")
    log = tmp_path / "state" / "orderbot.log"
    assert log.exists()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_bad_flag_value_is_a_usage_error_whoever_finds_it():
    assert cli("ask", "--max-steps", "abc", "x").exit_code == 2  # Typer finds it
    found = cli("ask", "--max-steps", "0", "x")  # orderbot finds it
    assert found.exit_code == 2 and "invalid value for --max-steps" in found.stderr


def test_a_bad_value_in_the_environment_or_env_file_names_its_source(monkeypatch):
    Path(".env").write_text("ORDERBOT_MAX_STEPS=0\n", encoding="utf-8")
    result = cli("ask", "x")
    assert result.exit_code == 6 and "ORDERBOT_MAX_STEPS in ./.env" in result.stderr
    monkeypatch.setenv("ORDERBOT_MAX_STEPS", "abc")  # the environment wins over .env, and is named
    result = cli("ask", "x")
    assert result.exit_code == 6 and "ORDERBOT_MAX_STEPS in the environment" in result.stderr


def test_tokens_are_in_the_footer_when_reported_and_none_offline(use_model):
    from orderbot.loop.items import Message
    from orderbot.loop.model import Turn, Usage

    offline = json.loads(cli("ask", "--json", "查询 ORD-1001").stdout)
    assert offline["usage"] is None  # not reported: not a measured 0
    assert "tokens:" not in cli("ask", "查询 ORD-1001").output

    class Counted:
        name, provider = "counted", "scripted"

        def respond(self, request):
            answer = Message(role="assistant", content="好的")
            return Turn(items=(answer,), usage=Usage(input_tokens=312, output_tokens=41))

    use_model(Counted())
    result = cli("ask", "--provider", "scripted", "查询 ORD-1001")
    assert "tokens: 312 in / 41 out" in result.output
    doc = json.loads(cli("ask", "--provider", "scripted", "--json", "查询 ORD-1001").stdout)
    assert doc["usage"] == {"input_tokens": 312, "output_tokens": 41}


def test_a_sqlite_database_given_as_a_path_gets_its_url_suggested(tmp_path):
    import sqlite3

    database = tmp_path / "shop.db"
    sqlite3.connect(database).close()
    database.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    result = cli("ask", "--orders", str(database), "x")
    assert result.exit_code == 6 and f"pass --orders sqlite:///{database}" in result.output


def test_every_orders_example_in_the_docs_is_a_json_file_or_a_database_url():
    """A path is a JSON file and a database is a URL, wherever `--orders` takes one: an example
    with `--orders shop.db` (a command line, a host's "args" list) would exit 6 as written."""
    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    given = re.compile(r'--orders(?:", "| |=)([^\s"`)]+)')
    values = {(page.name, value) for page in pages for value in given.findall(page.read_text(encoding="utf-8"))}
    assert sum(name == "mcp.md" for name, _ in values) >= 2  # the control: a host's "args" list is read too
    wrong = {
        (name, value)
        for name, value in values
        if not (value.endswith(".json") or re.match(r"(sqlite|postgresql)://", value) or value.isupper())
        and value != "with"  # prose: "--orders with ..."
    }
    assert not wrong


def test_a_missing_orders_file_does_not_suggest_the_flag_that_named_it():
    result = cli("ask", "--orders", "nothere.json", "x")
    assert result.exit_code == 6 and "nothere.json: no such file" in result.output
    assert "pass --orders" not in result.output


# ---- one set of conventions ------------------------------------------------------------------


def test_short_flags_for_the_common_options_are_listed_and_work(orders_file):
    help_text = cli("ask", "--help", env={"COLUMNS": "200"}).output
    for short, long in (
        ("-u", "--user"),
        ("-m", "--model"),
        ("-o", "--orders"),
        ("-j", "--json"),
        ("-c", "--continue"),
    ):
        assert re.search(rf"{long}\s+{short}\b", help_text), (short, long)
    result = cli("ask", "-u", "C001", "-o", str(orders_file), "-j", "ORD-1003 的详情")
    doc = json.loads(result.stdout)
    assert doc["user"] == "C001" and doc["stop_reason"] == "answered"
    assert json.loads(cli("runs", "-j", "-u", "C001").stdout)[0]["user"] == "C001"
    assert json.loads(cli("doctor", "-j").stdout)["provider"] == "offline"


def test_lang_works_before_or_after_the_command():
    for args in (["--lang", "zh", "runs"], ["runs", "--lang", "zh"], ["runs", "--lang=zh"]):
        assert cli(*args).output.startswith("orderbot：") or "没有记录" in cli(*args).output, args
    question = cli("ask", "--json", "--", "--lang")  # after --, a question like any
    assert json.loads(question.stdout)["question"] == "--lang"


def test_ask_continue_carries_the_latest_conversation_for_the_same_user_only():
    alone = json.loads(cli("ask", "-u", "C001", "-j", "它的详情").stdout)
    assert not alone["calls"]  # with nothing before it, "it" is nothing
    first = cli("ask", "-u", "C001", "-j", "查询 ORD-1002")
    assert first.exit_code == 0
    follow = json.loads(cli("ask", "-u", "C001", "-j", "-c", "它的详情").stdout)
    assert follow["calls"][0]["name"] == "get_order_details" and "ORD-1002" in follow["answer"]
    other = cli("ask", "-u", "C002", "-c", "它的详情")
    assert other.exit_code == 2 and "was C001's" in other.output


def test_ask_cid_continues_the_conversation_of_the_run_it_names():
    named = json.loads(cli("ask", "-u", "C001", "-j", "查询 ORD-1002").stdout)["run_id"]
    assert cli("ask", "-u", "C001", "-j", "查询 ORD-1001").exit_code == 0  # the latest is another conversation
    latest = json.loads(cli("ask", "-u", "C001", "-j", "-c", "它的详情").stdout)
    assert "ORD-1001" in latest["answer"]
    follow = json.loads(cli("ask", "-u", "C001", "-j", "--cid", named, "它的详情").stdout)
    assert follow["calls"][0]["name"] == "get_order_details" and "ORD-1002" in follow["answer"]
    other = cli("ask", "-u", "C002", "--cid", named, "它的详情")
    assert other.exit_code == 2 and f"run {named} was C001's" in other.stderr and "--cid" in other.stderr
    assert cli("ask", "--cid", "nope", "它的详情").exit_code == 2


def test_a_base_url_without_a_provider_uses_chat():
    from fakeapi import FakeAPI, completion

    with FakeAPI() as api:
        api.enqueue("chat", completion("好的。"))
        result = cli("ask", "--base-url", api.url, "-m", "local", "-j", "你好")
        assert len(api.requests_for("chat")) == 1
    doc = json.loads(result.stdout)
    assert doc["provider"] == "chat" and doc["answer"] == "好的。"


def test_the_one_exit_code_rule():
    usage = [
        ["ask", "--bogus", "x"],
        ["ask"],
        ["ask", ""],
        ["ask", "x" * 5000],
        ["ask", "--max-steps", "0", "x"],
        ["ask", "--user", "bad/user", "x"],
        ["orders", "list"],
        ["orders", "list", "--user", "C001", "--all"],
        ["resume", "last", "--approve", "--reject"],
    ]
    for args in usage:
        assert cli(*args).exit_code == 2, args
    assert cli().exit_code == 0
    for group in ("orders", "keys"):  # a command group alone: its help, as `orderbot` alone
        alone = cli(group)
        assert alone.exit_code == 0 and f"orderbot {group} [OPTIONS] COMMAND" in alone.output, (group, alone.output)
    bad_env = cli("ask", "x", env={"ORDERBOT_MAX_STEPS": "0"})
    assert bad_env.exit_code == 6 and "ORDERBOT_MAX_STEPS in the environment" in bad_env.output


def test_otel_help_shows_the_extra_with_its_brackets():
    assert "orderbot[otel]" in cli("ask", "--help", env={"COLUMNS": "250"}).output


# ---- one path from flags to exit code ---------------------------------------------------------

RUN_COMMANDS = ("ask", "resume", "approvals", "repl")
# What wiring a run means: who may decide, whether a person is asked, the runner, the views,
# the outcome. orderbot.commands.run does it for every run command.
WIRING = {
    "asks_at_the_prompt",
    "check_decider",
    "check_resume",
    "Runner",
    "TransitionView",
    "TraceView",
    "StepLines",
    "terminal_approver",
    "json_document",
    "print_header",
    "print_outcome",
    "run_exit_code",
    "open_session",
    "four_eyes",
}


def names_used(source: str) -> set[str]:
    tree = ast.parse(source)
    found = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    found |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found |= {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    return found


def test_run_commands_leave_the_wiring_to_the_one_path():
    """ask, resume, approvals and repl parse their flags and call orderbot.commands.run; none
    of them holds the four-eyes rule, builds the runner or a view, or words the outcome."""
    commands = Path(__file__).resolve().parents[1] / "orderbot" / "commands"
    wired = {
        name: sorted(names_used((commands / f"{name}.py").read_text(encoding="utf-8")) & WIRING)
        for name in RUN_COMMANDS
    }
    assert wired == {name: [] for name in RUN_COMMANDS}
    assert names_used((commands / "run.py").read_text(encoding="utf-8")) >= WIRING  # where it went


def test_the_wiring_check_sees_a_command_that_wires_a_run_itself():
    assert names_used(
        "from orderbot.runner import Runner\nRunner.for_session(s)\nx = settings.four_eyes\n"
    ) & WIRING == {
        "Runner",
        "four_eyes",
    }
