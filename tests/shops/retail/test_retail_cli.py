"""The retail shop on the command line: a hand-off ends the run (exit 8, the summary on screen,
in --json and in the record), a --user the shop does not know is refused before any run, and
the REPL keeps the customer a lookup signed in for the rest of the conversation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clikit import cli
from runkit import record_doc, run_ids

from orderbot.models.scripted import ScriptedModel, call, calls, text

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
SUMMARY = "The customer wants to undo a cancellation, which these tools cannot do."


@pytest.fixture
def shop(tmp_path) -> Path:
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    return path


def transferring(use_model) -> None:
    use_model(ScriptedModel([calls(call("transfer_to_human_agents", {"summary": SUMMARY})), text("never asked")]))


def test_a_hand_off_says_so_on_screen_and_exits_8(shop, use_model) -> None:
    transferring(use_model)
    result = cli("ask", "--provider", "scripted", "--orders", str(shop), "undo my cancellation")
    assert result.exit_code == 8, result.output
    assert f"Handed over to a person. {SUMMARY}" in " ".join(result.output.split())
    assert "stop reason: transferred" in result.output and "To resume" not in result.output


def test_a_hand_off_in_json_and_in_the_record(shop, use_model) -> None:
    transferring(use_model)
    result = cli("ask", "--provider", "scripted", "--orders", str(shop), "--json", "undo it")
    document = json.loads(result.stdout)
    assert (result.exit_code, document["exit_code"], document["stop_reason"]) == (8, 8, "transferred")
    assert document["stop_detail"] == SUMMARY and document["resume_command"] is None
    record = record_doc(document["run_id"])
    assert record["state"]["stop_reason"] == "transferred" and record["state"]["stop_detail"] == SUMMARY
    again = cli("resume", document["run_id"], "--orders", str(shop))
    assert again.exit_code == 1 and "stopped with transferred; it cannot be resumed" in again.stderr


def test_a_hand_off_in_chinese(shop, use_model) -> None:
    transferring(use_model)
    result = cli("--lang", "zh", "ask", "--provider", "scripted", "--orders", str(shop), "撤销取消")
    assert result.exit_code == 8 and "已转交人工客服。" in result.output


def test_a_customer_the_shop_does_not_know_is_refused_before_a_run(shop) -> None:
    result = cli("ask", "--orders", str(shop), "--user", "nobody_1", "where is #W5866402?")
    assert result.exit_code == 6
    assert "no customer 'nobody_1' in this shop" in result.stderr
    assert run_ids() == []  # nothing ran


def test_the_repl_keeps_the_customer_a_lookup_signed_in(shop) -> None:
    questions = "I am olivia.ito5204@example.com, where is #W5866402?\nwhere is #W5442520?\n"
    result = cli("repl", "--orders", str(shop), input=questions)
    assert result.exit_code == 0, result.output
    assert "Order #W5866402 is delivered." in result.output
    assert "Order #W5442520 is pending." in result.output  # the second message needed no sign-in
    assert "orderbot olivia_ito_3591>" in result.output
