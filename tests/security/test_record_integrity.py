"""A run record in the state directory's store cannot change what an approval does.

Each tamper case must exit 6 with one sentence, and change nothing: not the orders file,
not the record, no new file. Cases are tried twice where it matters: edited by another
tool (the integrity tag no longer verifies), and edited and re-tagged with the state
directory's key (what only someone who can read the key could do), so the field-for-field
checks behind the tag are exercised on their own.
"""

from __future__ import annotations

import json
import os
import stat
import time

import pytest
from clikit import cli
from runkit import copy_run, only_run, record_bytes, record_doc, run_ids, state_dir, write_doc
from securitykit import statuses

CANCEL = "取消订单 ORD-1002"


def paused(orders_file) -> str:
    result = cli("ask", "--user", "C001", "--orders", str(orders_file), CANCEL)
    assert result.exit_code == 4, result.output
    return only_run()


def snapshot(orders_file) -> tuple:
    """The orders file and every record."""
    return orders_file.read_bytes(), [(run_id, record_bytes(run_id)) for run_id in run_ids()]


def refused(result, *words: str) -> None:
    assert result.exit_code == 6, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output  # one sentence
    for word in words:
        assert word in result.output, result.output


def resume(run_id: str, *extra: str):
    return cli("resume", run_id, "--approve", *extra)


def edit_pending_arguments(doc: dict) -> None:
    pending = doc["state"]["pending"][0]
    pending["arguments"] = json.dumps({"order_id": "ORD-1013", "reason": "不要了"}, ensure_ascii=False, sort_keys=True)


def edit_user(doc: dict, user: str) -> None:
    doc["state"]["user"] = user
    doc["state"]["pending"][0]["user"] = user


@pytest.mark.parametrize("sign", [False, True], ids=["edited", "edited-and-retagged"])
def test_a_only_the_pending_arguments_edited(orders_file, sign):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    edit_pending_arguments(doc)
    write_doc(run_id, doc, sign=sign)
    before = snapshot(orders_file)
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "altered")
    assert snapshot(orders_file) == before
    assert statuses(orders_file)["ORD-1013"] == "待付款"


@pytest.mark.parametrize("sign", [False, True], ids=["edited", "edited-and-retagged"])
def test_b_arguments_and_user_edited_consistently(orders_file, sign):
    """Point the pending call at C002's ORD-1004 and make the run C002's."""
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    edit_user(doc, "C002")
    args = json.dumps({"order_id": "ORD-1004", "reason": "不要了"}, ensure_ascii=False, sort_keys=True)
    doc["state"]["pending"][0]["arguments"] = args
    write_doc(run_id, doc, sign=sign)
    before = snapshot(orders_file)
    refused(resume(run_id, "--user", "C002", "--orders", str(orders_file)), "altered")
    assert snapshot(orders_file) == before
    assert statuses(orders_file)["ORD-1004"] == "待付款"


@pytest.mark.parametrize("when", [10 * 365 * 86400, float("nan")], ids=["ten-years-ahead", "nan"])
def test_c_requested_at_in_the_future_does_not_defeat_the_ttl(orders_file, when):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    doc["state"]["pending"][0]["requested_at"] = time.time() + when
    write_doc(run_id, doc, sign=True)
    before = snapshot(orders_file)
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "dated in the future")
    assert snapshot(orders_file) == before


def test_c_an_old_request_still_expires(orders_file, monkeypatch):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    doc["state"]["pending"][0]["requested_at"] -= 2 * 3600
    write_doc(run_id, doc, sign=True)
    monkeypatch.setenv("ORDERBOT_APPROVAL_TTL_HOURS", "1")
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "expired")
    assert statuses(orders_file)["ORD-1002"] == "处理中"


def test_d_a_pending_call_of_another_user_is_refused(orders_file):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    doc["state"]["pending"][0]["user"] = "C002"
    write_doc(run_id, doc, sign=True)
    before = snapshot(orders_file)
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "user differs")
    assert snapshot(orders_file) == before


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("call_id", "call_other", "no such call"),
        ("name", "get_order_status", ""),
        ("step", 7, "model turn"),
    ],
)
def test_every_field_of_the_pending_call_is_bound(orders_file, field, value, words):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    doc["state"]["pending"][0][field] = value
    write_doc(run_id, doc, sign=True)
    before = snapshot(orders_file)
    result = resume(run_id, "--user", "C001", "--orders", str(orders_file))
    refused(result, words)
    assert snapshot(orders_file) == before


def test_the_recorded_model_turn_is_checked_too(orders_file):
    """Conversation and pending edited together, but the recorded model turn not."""
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    args = json.dumps({"order_id": "ORD-1013", "reason": "不要了"}, ensure_ascii=False, sort_keys=True)
    doc["state"]["pending"][0]["arguments"] = args
    for item in doc["state"]["items"]:
        if item["type"] == "function_call":
            item["arguments"] = args
    write_doc(run_id, doc, sign=True)
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "model turn differs")
    assert statuses(orders_file)["ORD-1013"] == "待付款"


def test_e_a_record_whose_run_id_is_not_its_file_name(orders_file):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    other = "261101-000000-beef"
    doc["run_id"] = other
    doc["state"]["run_id"] = other
    write_doc(run_id, doc, sign=True)
    before = snapshot(orders_file)
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "altered", other)
    assert snapshot(orders_file) == before
    assert other not in run_ids()  # no second run


def test_a_record_copied_from_another_state_directory_is_refused(orders_file, tmp_path, monkeypatch):
    run_id = paused(orders_file)
    elsewhere = tmp_path / "other-state"
    copy_run(run_id, elsewhere)
    monkeypatch.setenv("ORDERBOT_STATE_DIR", str(elsewhere))
    refused(resume(run_id, "--user", "C001", "--orders", str(orders_file)), "altered")
    refused(cli("replay", run_id, "--orders", str(orders_file)), "altered")
    assert statuses(orders_file)["ORD-1002"] == "处理中"


def test_an_untouched_record_still_resumes(orders_file):
    run_id = paused(orders_file)
    result = resume(run_id, "--user", "C001", "--orders", str(orders_file))
    assert result.exit_code == 0, result.output
    assert statuses(orders_file)["ORD-1002"] == "已取消"


def test_runs_show_still_displays_an_altered_record_marked_as_altered(orders_file):
    run_id = paused(orders_file)
    doc = record_doc(run_id)
    edit_pending_arguments(doc)
    write_doc(run_id, doc, sign=False)
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "altered" in shown.output and "cancel_order" in shown.output
    assert "orderbot resume" not in shown.output  # no hint to resume what will be refused
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001").exit_code == 0
    [clean] = set(run_ids()) - {run_id}
    assert "altered" not in cli("runs", "show", clean).output


def test_the_key_is_private_created_once_and_never_in_a_record(orders_file):
    run_id = paused(orders_file)
    key_path = state_dir() / "record.key"
    key = key_path.read_bytes()
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    assert len(key) == 32
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001").exit_code == 0
    assert key_path.read_bytes() == key  # created once, reused
    for path in state_dir().iterdir():  # the database, and whatever SQLite keeps beside it
        raw = path.read_bytes()
        assert path.name == "record.key" or (key not in raw and key.hex().encode() not in raw)
    shown = cli("runs", "show", run_id, "--json")
    assert key.hex() not in shown.output
