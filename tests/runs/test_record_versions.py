"""Run records of an older format version still show, resume and replay: `upgrade` reads a
version 1 record (transitions without a kind in the oldest, a finish's reason kept only as
its row's words) as the current version, and what is read are the transitions' values."""

from __future__ import annotations

import json

from clikit import cli
from runkit import PREVIOUS_RELEASE, only_run, open_store, previous_release, record_doc, write_doc

from orderbot.loop.state import Event
from orderbot.runs.record import VERSION
from orderbot.ui.describe import Said, describe

CANCEL = "取消订单 ORD-1002"


def as_version_1(doc: dict, said: list[Said]) -> dict:
    """The record as orderbot wrote it before the current version: each transition's English
    words (`said`) beside it, no kind on a transition, no stop reason nor detail in a finish's
    data, no data for a `returned` row."""
    transitions = []
    for t, words in zip(doc["transitions"], said, strict=True):
        t = {k: v for k, v in t.items() if k != "kind"} | {"event": words.event, "detail": words.detail}
        data = t.get("data")
        if t["to"] == "finish":
            t["data"] = {k: v for k, v in data.items() if k not in ("reason", "detail")}
        elif t["from"] == "observe" and t["to"] == "plan":
            t["data"] = None
        transitions.append(t)
    return {**doc, "version": 1, "transitions": transitions}


def rewrite_as_version_1(run_id: str) -> None:
    """Write the record back as version 1, tagged with this state directory's key (as a
    record an older orderbot wrote here would be)."""
    said = [describe(transition, "en") for _, transition in open_store().load(run_id).transition_values()]
    write_doc(run_id, as_version_1(record_doc(run_id), said), sign=True)


def test_a_version_1_record_shows_resumes_and_replays(orders_file):
    asked = cli("ask", "--user", "C001", "--orders", str(orders_file), CANCEL)
    assert asked.exit_code == 4, asked.output
    run_id = only_run()
    rewrite_as_version_1(run_id)
    assert record_doc(run_id)["version"] == 1

    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "approval needed" in shown.output and "cancel_order" in shown.output

    resumed = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    assert resumed.exit_code == 0, resumed.output
    assert "approved and executed" in resumed.output and "订单 ORD-1002 已取消。" in resumed.output
    record = open_store().load(run_id)  # written back in the current version, the older transitions upgraded
    assert record_doc(run_id)["version"] == VERSION
    kinds = [t.kind for _, t in record.transition_values()]
    assert kinds == [
        Event.STARTED,
        Event.PROPOSED,
        Event.AWAITING_APPROVAL,
        Event.RESUMED,
        Event.APPROVED,
        Event.RETURNED,
        Event.FINISHED,
    ]

    rewrite_as_version_1(run_id)  # both segments as an older orderbot wrote them
    replayed = cli("replay", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
    report = json.loads(replayed.stdout)
    assert report["identical"] and report["differences"] == []


def test_a_version_1_finish_keeps_its_stop_reason_and_detail(orders_file):
    asked = cli("ask", "--max-steps", "1", "--orders", str(orders_file), "查询 ORD-1001")
    assert asked.exit_code == 3, asked.output
    run_id = only_run()
    rewrite_as_version_1(run_id)
    [*_, (_, finish)] = open_store().load(run_id).transition_values()
    assert finish.stop_reason == "step_limit" and finish.payload.message.id.startswith("detail.")
    shown = cli("runs", "show", run_id)
    assert "step_limit" in shown.output
    assert "The model asked for get_order_status at step 1 of 1" in " ".join(shown.output.split())


STEP_LIMITED = "261204-203152-28c0"


def test_version_2_records_of_the_previous_release_show_in_either_language_and_replay(tmp_path):
    """Records written before a stop's reason was kept as its phrase alone (their English beside
    it, and beside every transition): each replays without difference against the orders it
    ran on, and a step-limited one says why in the reader's language."""
    previous_release(tmp_path)
    english = " ".join(cli("--lang", "en", "runs", "show", STEP_LIMITED).stdout.split())
    chinese = " ".join(cli("--lang", "zh", "runs", "show", STEP_LIMITED).stdout.split())
    assert "Stopped: the step limit was reached. The model asked for get_order_status at step 1 of 1" in english
    assert "已停止：达到了步数上限。模型在第 1 步（共 1 步）请求调用 get_order_status" in chinese
    assert "the model asked for" not in chinese
    for path in sorted((PREVIOUS_RELEASE / "state" / "runs").glob("*.json")):
        replayed = cli("replay", path.stem, "--json")
        assert replayed.exit_code == 0, replayed.output
        assert json.loads(replayed.stdout)["differences"] == []
