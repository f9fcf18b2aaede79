"""The runs index: `orderbot runs` reads one line per run instead of every record, and the
index follows every change to the records, including changes made without it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from clikit import cli

from orderbot.atomic import atomic_write
from orderbot.runs.index import INDEX_FILE


def state() -> Path:
    return Path(os.environ["ORDERBOT_STATE_DIR"])


def listed(*filters: str) -> list[dict]:
    result = cli("runs", "--json", *filters)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def index_lines() -> list[str]:
    return (state() / INDEX_FILE).read_text(encoding="utf-8").splitlines()[2:]  # header, inode numbers


def three_runs(orders_file: Path) -> None:
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001").exit_code == 0
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002").exit_code == 4
    assert cli("ask", "--max-steps", "1", "查询 ORD-1003").exit_code == 3


def test_the_index_has_one_line_per_run_and_lists_as_the_records_do(orders_file):
    three_runs(orders_file)
    from_index = listed()
    assert len(index_lines()) == 3
    (state() / INDEX_FILE).unlink()
    assert listed() == from_index  # rebuilt from the records: the same listing
    assert len(index_lines()) == 3
    assert sorted(r["status"] for r in from_index) == ["answered", "awaiting_approval", "step_limit"]


def test_a_current_index_is_listed_without_reading_any_record(orders_file):
    three_runs(orders_file)
    before = listed()
    runs = state() / "runs"
    # Garble every record but keep its and the directory's modification times, as if
    # nothing had changed: only a listing that reads the records could notice.
    stamps = {path: path.stat() for path in [*runs.glob("*.json"), runs]}
    for path in runs.glob("*.json"):
        path.write_text("garbled", encoding="utf-8")
    for path, st in stamps.items():
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert listed() == before
    assert listed("--user", "nobody") == []
    assert [r["question"] for r in listed("--stop-reason", "awaiting_approval")] == ["取消订单 ORD-1002"]


def test_saves_update_the_index_in_place(orders_file):
    three_runs(orders_file)
    listed()  # builds the index
    paused = listed("--stop-reason", "awaiting_approval")[0]["run_id"]
    assert cli("resume", paused, "--approve", "--user", "C001", "--orders", str(orders_file)).exit_code == 0
    assert cli("ask", "查询 ORD-1004").exit_code == 0
    statuses = {r["run_id"]: r["history"] for r in listed()}
    assert statuses[paused] == ["awaiting_approval", "answered"]
    assert len(statuses) == 4 and len(index_lines()) == 4


def test_records_changed_behind_the_index_are_picked_up(orders_file, tmp_path):
    three_runs(orders_file)
    rows = listed()
    runs = state() / "runs"
    newest, oldest = runs / f"{rows[0]['run_id']}.json", runs / f"{rows[-1]['run_id']}.json"

    # A writer killed between the record and its line: the record says more than the index.
    doc = json.loads(newest.read_text(encoding="utf-8"))
    doc["state"]["stop_reason"] = "answered"
    atomic_write(newest, json.dumps(doc).encode())
    # A record removed by hand, and one copied in from elsewhere.
    saved = tmp_path / "oldest.json"
    shutil.move(oldest, saved)
    copied = saved.read_text(encoding="utf-8").replace(rows[-1]["run_id"], "991231-235959-abcd")
    (runs / "991231-235959-abcd.json").write_text(copied, encoding="utf-8")

    after = {r["run_id"]: r["status"] for r in listed()}
    assert after == {
        "991231-235959-abcd": rows[-1]["status"],
        rows[0]["run_id"]: "answered",
        rows[1]["run_id"]: rows[1]["status"],
    }


def test_an_unreadable_record_is_listed_as_such_and_matches_no_filter(orders_file):
    three_runs(orders_file)
    (state() / "runs" / "991231-235959-abcd.json").write_text("{not json", encoding="utf-8")
    rows = listed()
    assert rows[0]["run_id"] == "991231-235959-abcd" and rows[0]["error"] == "not valid JSON"
    assert all(r.get("error") is None for r in listed("--user", "C001"))


def test_a_damaged_index_is_rebuilt(orders_file):
    three_runs(orders_file)
    before = listed()
    index = state() / INDEX_FILE
    index.write_text(index.read_text(encoding="utf-8")[:-40], encoding="utf-8")  # torn
    assert listed() == before
    index.write_text("not an index\n", encoding="utf-8")
    assert listed() == before


def test_a_forged_index_line_changes_no_decision(orders_file):
    """The index only decides what a listing shows: resume reads and checks the record."""
    assert cli("ask", "查询 ORD-1001").exit_code == 0
    [row] = listed()
    index = state() / INDEX_FILE
    index.write_text(index.read_text(encoding="utf-8").replace('"answered"', '"awaiting_approval"'), encoding="utf-8")
    assert listed()[0]["status"] == "awaiting_approval"  # a current index is believed for listing
    refused = cli("resume", row["run_id"], "--approve")
    assert refused.exit_code == 1 and "already answered" in refused.output  # what the record says
