"""`orderbot eval`: the default suite, scoring, user suites, and the orders left untouched."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

import pytest
from clikit import cli

from orderbot.answers.evaluate import DEFAULT_SUITE, load_suite
from orderbot.loop.items import assistant
from orderbot.loop.model import Turn
from orderbot.shops.sample.model import SAMPLE_PATH


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def evaluate(*args: str):
    result = cli("eval", *args)
    return result, (json.loads(result.output) if "--json" in args and result.output.startswith("{") else None)


class IgnoresTools:
    """A model that never calls a tool: it answers every question from thin air."""

    provider = "scripted"
    name = "ignores-tools"

    def respond(self, request) -> Turn:
        return Turn((assistant("ORD-1001 的状态是已发货。"),))


def test_the_default_suite_covers_every_kind_of_question_in_both_languages():
    suite, _ = load_suite()
    names = [case.name for case in suite.cases]
    assert len(names) >= 25
    for topic in (
        "status",
        "details",
        "list",
        "other-customer",
        "unknown-id",
        "cancel-allowed",
        "cancel-shipped",
        "chit-chat",
        "two-orders",
        "injection",
    ):
        assert any(topic in name for name in names), topic
    assert any(name.endswith("-zh") for name in names) and any(name.endswith("-en") for name in names)
    assert {c.stop_reason for c in suite.cases} == {"answered", "awaiting_approval"}


def test_offline_passes_the_default_suite_and_the_orders_never_change(orders_file):
    before = digest(orders_file)
    result, doc = evaluate("--orders", str(orders_file), "--json")
    assert result.exit_code == 0, result.output[-3000:]
    failed = [c for c in doc["cases"] if not c["passed"]]
    assert failed == []
    assert doc["totals"]["pass_rate"] == 100 and doc["totals"]["orders_unchanged"] is True
    assert digest(orders_file) == before
    cancel = next(c for c in doc["cases"] if c["name"] == "cancel-allowed-zh")
    assert cancel["stop_reason"] == "awaiting_approval" and cancel["calls"][0].startswith("cancel_order(")


def test_the_default_suite_reads_the_sample_and_leaves_it_alone():
    before = digest(SAMPLE_PATH)
    result, _ = evaluate()
    assert result.exit_code == 0, result.output[-3000:]
    assert "28/28 passed (100%, needed 100%)" in result.output
    assert "time median" in result.output and "tokens median" in result.output
    assert digest(SAMPLE_PATH) == before


def test_a_model_that_ignores_tools_fails_the_right_cases(use_model, orders_file):
    use_model(IgnoresTools())
    before = digest(orders_file)
    result, doc = evaluate("--provider", "scripted", "--orders", str(orders_file), "--json")
    assert result.exit_code == 1
    by_name = {c["name"]: c for c in doc["cases"]}
    # Chit-chat expects no tool call: those cases only fail on their own checks.
    status = by_name["status-zh"]
    assert not status["passed"]
    failed = {c["name"] for c in status["checks"] if not c["ok"]}
    assert "tools" in failed
    assert by_name["cancel-allowed-zh"]["checks"][1] == {
        "name": "stop",
        "ok": False,
        "reasons": [{"id": "eval.reason.stop", "params": {"stop": "answered", "expected": "awaiting_approval"}}],
    }
    unknown = next(c for c in by_name["unknown-id-zh"]["checks"] if c["name"] == "claims")
    assert not unknown["ok"]
    # "ORD-1001 的状态是已发货" happens to be right for no case but this one's facts: the claim
    # check still flags it, since no tool returned ORD-1001.
    assert by_name["status-zh"]["claims"][0]["kind"] == "unknown_id"
    assert doc["totals"]["passed"] < doc["totals"]["cases"] and doc["ok"] is False
    assert digest(orders_file) == before


def test_min_pass_lowers_the_bar(use_model):
    use_model(IgnoresTools())
    result, doc = evaluate("--provider", "scripted", "--min-pass", "0", "--json")
    assert result.exit_code == 0 and doc["ok"] is True


def test_a_user_suite_with_its_own_orders_file(tmp_path, orders_file):
    shutil.copyfile(orders_file, tmp_path / "shop.json")
    suite = {
        "orders": "shop.json",
        "cases": [
            {
                "name": "mine",
                "question": "ORD-1002 的详情",
                "user": "C001",
                "calls": [{"name": "get_order_details", "arguments": {"order_id": "ORD-1002"}}],
                "facts": ["帆布托特包"],
            },
            {"name": "wrong-expectation", "question": "查询 ORD-1001", "facts": ["已签收"], "limits": {"max_steps": 2}},
        ],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite, ensure_ascii=False), encoding="utf-8")
    before = digest(tmp_path / "shop.json")
    result, doc = evaluate(str(path), "--json", "--jobs", "2")
    assert result.exit_code == 1
    assert [c["passed"] for c in doc["cases"]] == [True, False]
    assert doc["cases"][1]["checks"][-1]["reasons"] == [{"id": "eval.reason.lacks", "params": {"facts": ["已签收"]}}]
    assert doc["orders"] == str((tmp_path / "shop.json").resolve())
    assert digest(tmp_path / "shop.json") == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ('{"cases": []}', "cases"),
        ('{"cases": [{"name": "a", "question": "q", "stop_reason": "maybe"}]}', "stop_reason"),
        ('{"cases": [{"name": "a", "question": "q"}, {"name": "a", "question": "r"}]}', "used twice"),
    ],
)
def test_a_broken_suite_is_one_sentence_and_exit_6(tmp_path, content, message):
    path = tmp_path / "suite.json"
    path.write_text(content, encoding="utf-8")
    result, _ = evaluate(str(path))
    assert result.exit_code == 6
    assert message.lower() in result.output.lower() and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "chinese"),
    [
        ("{", "不是有效的 JSON"),
        ('{"cases": []}', "cases：至少要有 1 项，而不是 0 项"),
        ('{"cases": [{"name": "a", "question": "q"}, {"name": "a", "question": "r"}]}', "用例名 'a' 用了两次"),
        ('{"cases": [{"name": "a", "question": "q", "limits": {"max_steps": 0}}]}', "cases.0.limits.max_steps："),
    ],
)
def test_a_broken_suite_is_said_in_the_ui_language(tmp_path, content, chinese):
    path = tmp_path / "suite.json"
    path.write_text(content, encoding="utf-8")
    result = cli("--lang", "zh", "eval", str(path))
    assert result.exit_code == 6 and chinese in result.output, result.output
    assert "suite" not in result.output.replace(str(path), ""), result.output  # orderbot's own words: none English


def test_a_missing_suite_is_said_in_the_ui_language(tmp_path):
    result = cli("--lang", "zh", "eval", str(tmp_path / "nothere.json"))
    assert result.exit_code == 6 and "无法读取测试集" in result.output, result.output


def test_the_default_suite_file_ships_with_the_package():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["orderbot.shops.sample"]
    assert DEFAULT_SUITE.name in shipped and DEFAULT_SUITE.is_file()


def test_the_default_suite_on_a_sqlite_copy_leaves_the_database_alone(tmp_path):
    database = tmp_path / "shop.db"
    imported = cli("orders", "import", str(SAMPLE_PATH), "--to", f"sqlite:///{database}")
    assert imported.exit_code == 0, imported.output
    before = digest(database)
    result, doc = evaluate("--orders", f"sqlite:///{database}", "--json")
    assert result.exit_code == 0, [c for c in doc["cases"] if not c["passed"]]
    assert doc["totals"]["passed"] == 28 and digest(database) == before


def test_a_database_server_cannot_be_copied_for_an_eval():
    result, _ = evaluate("--orders", "postgresql://eval@127.0.0.1:1/shop")
    assert result.exit_code == 6 and "cannot be copied" in result.output


def test_why_a_case_failed_is_said_in_the_ui_language_and_kept_as_values_in_json(use_model, tmp_path):
    """Every check fails at once (no call, no refusal, the wrong stop, an unknown id, a missing
    fact): the table says each reason in Chinese under --lang zh; --json keeps its English."""
    use_model(IgnoresTools())
    case = {
        "name": "all-wrong",
        "question": "取消 ORD-1002",
        "user": "C001",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "ORD-1002"}}],
        "refused": ["no_access", "not_found"],
        "stop_reason": "awaiting_approval",
        "facts": ["已取消", "ORD-1002"],
    }
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"cases": [case]}, ensure_ascii=False), encoding="utf-8")
    wide = {"COLUMNS": "400"}  # one line per case: each reason whole
    shown = cli("--lang", "zh", "eval", str(suite), "--provider", "scripted", env=wide)
    assert shown.exit_code == 1, shown.output
    for said in (
        '工具调用：缺少调用 cancel_order(order_id="ORD-1002")',
        "拒绝：没有调用因 no_access、not_found 被拒绝",
        "停止原因：answered，而不是 awaiting_approval",
        "无依据的说法：ORD-1001：没有工具返回过这个订单（ORD-1001）",
        "事实：回答缺少 已取消、ORD-1002",
    ):
        assert said in shown.output, shown.output
    for english in ("missing", "refused with", ", not", "unknown_id", "lacks", "facts:", "tools:"):
        assert english not in shown.output, english
    _, doc = evaluate(str(suite), "--provider", "scripted", "--json", "--lang", "zh")
    reasons = {c["name"]: [(r["id"], r["params"]) for r in c["reasons"]] for c in doc["cases"][0]["checks"]}
    assert reasons == {  # the reasons' ids and values, whatever the language
        "tools": [("eval.reason.missing_call", {"call": 'cancel_order(order_id="ORD-1002")'})],
        "refused": [("eval.reason.not_refused", {"codes": ["no_access", "not_found"]})],
        "stop": [("eval.reason.stop", {"stop": "answered", "expected": "awaiting_approval"})],
        "claims": [("eval.reason.claim.unknown_id", {"order_id": "ORD-1001", "said": "ORD-1001"})],
        "facts": [("eval.reason.lacks", {"facts": ["已取消", "ORD-1002"]})],
    }
