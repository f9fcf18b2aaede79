"""The facts panel and the claim check through the real command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from clikit import cli
from fakeapi import WIRES, FakeAPI
from runkit import open_store

from orderbot.models.scripted import ScriptedModel, call, calls, text


def wrong_about_missing_order() -> ScriptedModel:
    return ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-9999"})), text("ORD-9999 的状态是已发货")])


def test_a_claim_the_tools_contradict_is_flagged_under_the_answer(use_model):
    use_model(wrong_about_missing_order())
    result = cli("ask", "--provider", "scripted", "查询 ORD-9999")
    assert result.exit_code == 0, result.output  # flagged, not failed, by default
    answer_at = result.output.index("ORD-9999 的状态是已发货")
    warning = "Unsupported: the answer gives ORD-9999 the status 已发货, but the tools returned 不存在"
    assert warning in result.output and result.output.index(warning) > answer_at
    assert "Facts from the tools:\n  ORD-9999 · not found" in result.output


def test_claims_and_facts_in_json_and_in_the_run_record(use_model, tmp_path):
    use_model(wrong_about_missing_order())
    result = cli("ask", "--provider", "scripted", "--json", "查询 ORD-9999")
    doc = json.loads(result.output)
    expected = [{"kind": "status", "order_id": "ORD-9999", "said": "已发货", "observed": "不存在"}]
    assert doc["claims"] == expected
    assert [(f["order_id"], f["status"], f["outcomes"]) for f in doc["facts"]] == [("ORD-9999", "不存在", [])]
    record = open_store(tmp_path / "state").load(doc["run_id"])
    assert record.claims == expected


def test_strict_claims_exits_7(use_model):
    use_model(wrong_about_missing_order())
    result = cli("ask", "--provider", "scripted", "--strict-claims", "--json", "查询 ORD-9999")
    assert result.exit_code == 7
    assert json.loads(result.output)["exit_code"] == 7


def test_strict_claims_is_a_setting_too(use_model):
    use_model(wrong_about_missing_order())
    Path(".env").write_text("ORDERBOT_STRICT_CLAIMS=1\n", encoding="utf-8")
    assert cli("ask", "--provider", "scripted", "查询 ORD-9999").exit_code == 7


def test_a_correct_answer_has_no_warning_and_strict_still_exits_0():
    result = cli("ask", "--strict-claims", "What is the status of ORD-1001?")
    assert result.exit_code == 0
    assert "Unsupported" not in result.output
    assert "ORD-1001 · 已发货" in result.output
    doc = json.loads(cli("ask", "--json", "查询 ORD-1001").output)
    assert doc["claims"] == [] and doc["facts"][0]["status"] == "已发货"


def test_no_facts_leaves_the_panel_out():
    result = cli("ask", "--no-facts", "查询 ORD-1001")
    assert result.exit_code == 0 and "Facts from the tools" not in result.output
    doc = json.loads(cli("ask", "--no-facts", "--json", "查询 ORD-1001").output)
    assert "facts" not in doc and doc["claims"] == []


def test_the_repl_shows_facts_and_claims_under_each_answer(use_model):
    use_model(wrong_about_missing_order())
    result = cli("repl", "--provider", "scripted", input="查询 ORD-9999\n")
    assert "Facts from the tools:\n  ORD-9999 · not found" in result.output
    assert "Unsupported: the answer gives ORD-9999 the status 已发货" in result.output
    quiet = cli("repl", "--no-facts", input="查询 ORD-9999\n")
    assert "没有找到订单 ORD-9999" in quiet.output and "Facts from the tools" not in quiet.output


def test_the_facts_panel_speaks_chinese_when_asked(monkeypatch):
    monkeypatch.setenv("ORDERBOT_LANG", "zh")
    result = cli("ask", "--user", "C001", "取消 ORD-1001")
    assert "工具返回的事实：\n  ORD-1001 · 已发货 · 不能取消：已发货" in result.output


def test_a_lookup_the_store_could_not_answer_is_not_called_a_failed_cancellation(tmp_path):
    """A store that cannot be read (here a row orderbot did not write) fails a status query;
    the answer and the facts say the order could not be looked up, not that it was not cancelled."""
    import sqlite3

    from orderbot.shops.sample.model import SAMPLE_PATH

    url = f"sqlite:///{tmp_path / 'shop.db'}"
    assert cli("orders", "import", str(SAMPLE_PATH), "--to", url).exit_code == 0
    with sqlite3.connect(tmp_path / "shop.db") as db:
        db.execute("UPDATE orders SET status = 'bogus' WHERE order_id = 'ORD-1001'")
    for question, said in [
        ("查询 ORD-1001", "订单 ORD-1001 暂时无法查询"),
        ("What is the status of ORD-1001?", "I could not look up order ORD-1001"),
    ]:
        doc = json.loads(cli("ask", "--orders", url, "--json", question).output)
        assert doc["answer"].startswith(said), doc["answer"]
        assert [(f["order_id"], f["outcomes"]) for f in doc["facts"]] == [("ORD-1001", ["unreadable"])]


RETAIL = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"


def test_a_wrong_item_list_from_a_real_provider_is_an_unsupported_claim(tmp_path):
    """A retail answer naming items the order does not hold, through the openai SDK and a
    loopback server: each wrong item is a claim on screen, in --json and behind exit 7, and
    nothing ends in a traceback (the claim's kind had no sentence once)."""
    shop = tmp_path / "db.json"
    shutil.copyfile(RETAIL, shop)
    wire = WIRES["openai"]
    args = ["--provider", "openai", "--orders", str(shop), "--user", "olivia_ito_3591", "--strict-claims"]
    expected = [
        {"kind": "items", "order_id": "#W5866402", "said": said, "observed": "Espresso Machine, Sneakers"}
        for said in ("a Laptop", "a Desk Lamp")
    ]
    for lang, shown in (
        ("en", "the answer says #W5866402 holds a Laptop"),
        ("zh", "回答说 #W5866402 包含 a Desk Lamp"),
    ):
        with FakeAPI() as api:
            for _ in range(2):
                api.enqueue(
                    wire.route,
                    wire.calls(("get_order_details", {"order_id": "#W5866402"})),
                    wire.text("Order #W5866402 contains a Laptop and a Desk Lamp."),
                )
            env = {"OPENAI_API_KEY": "sk-test", "ORDERBOT_LANG": lang}
            screen = cli("ask", *args, "--base-url", api.url, "what is in #W5866402?", env=env)
            document = cli("ask", *args, "--base-url", api.url, "--json", "what is in #W5866402?", env=env)
        assert screen.exit_code == 7 and "Traceback" not in screen.output, screen.output
        assert shown in " ".join(screen.output.split())
        assert document.exit_code == 7 and json.loads(document.stdout)["claims"] == expected
