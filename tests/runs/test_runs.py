"""Run records in the state directory's store, `orderbot runs`, `orderbot runs show` and
`orderbot runs export`."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from clikit import cli
from runkit import open_store, record_bytes, record_doc, run_ids, sql, state_dir
from saying import raises

from orderbot.errors import RecordError
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.state import RunState, new_run_id
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.record import COMMITTED, EXECUTING, FORMAT, MAX_RESULT, MAX_TEXT
from orderbot.runs.recorder import Recorder
from orderbot.runs.sqlite import SqliteRunStore
from orderbot.runs.tagged import read_record
from orderbot.shops.sample.tools import order_tools


def only_record() -> dict:
    [run_id] = run_ids()
    return record_doc(run_id)


def test_ask_writes_one_record_with_what_is_needed_to_inspect_it(orders_file):
    result = cli(
        "ask",
        "--json",
        "--user",
        "C001",
        "--orders",
        str(orders_file),
        "查询 ORD-1001 和 ORD-1002",
        env={"OPENAI_API_KEY": "sk-test-secret-key-1234567890", "ORDERBOT_PROVIDER": "offline"},
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    doc = only_record()
    assert doc["format"] == FORMAT and doc["version"] == 3
    assert doc["run_id"] == shown["run_id"] and doc["state"]["user"] == "C001"
    assert (doc["provider"], doc["model"]) == ("offline", "offline-planner")
    assert doc["state"]["stop_reason"] == "answered" and doc["state"]["answer"] == shown["answer"]
    assert doc["transitions"] == [
        {**t, "segment": 0, "elapsed": doc_t["elapsed"]}
        for t, doc_t in zip(shown["transitions"], doc["transitions"], strict=True)
    ]
    assert [c["call_id"] for c in doc["state"]["calls"]] == [c["call_id"] for c in shown["calls"]]
    assert len(doc["turns"]) == 2 and doc["turns"][0]["items"][0]["name"] == "get_order_status"
    assert set(doc["tool_versions"]) >= {"get_order_status", "cancel_order"}
    assert doc["segments"][0]["limits"]["max_steps"] == 3
    for kept in state_dir().iterdir():  # the database and whatever SQLite keeps beside it
        assert b"sk-test-secret" not in kept.read_bytes() and b"api_key" not in kept.read_bytes()  # never a key


def test_record_is_bounded_when_tools_return_huge_results(toolbox, store, tmp_path):
    huge = "x" * 50_000
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text(huge)])
    runs = open_store(tmp_path / "state")
    state = RunState.start("查询 ORD-1001 " + "很长" * 5000)
    recorder = Recorder.start(
        runs, state, provider="scripted", model="m", toolbox=toolbox, limits=Limits(max_response_chars=100_000)
    )
    Engine(recorder.wrap(model), toolbox, Limits(max_response_chars=100_000), observers=[recorder]).run(state)
    recorder.close()
    kept = runs.export(state.run_id)
    assert state.answer == huge  # the run itself is untouched
    assert len(kept) < 60_000  # the per-field caps, whatever the run produced (over 100 KB here)
    doc = json.loads(kept)
    assert len(doc["state"]["answer"]) <= 8000
    assert all(len(i.get("content", "")) <= MAX_TEXT for i in doc["state"]["items"])
    assert doc["turns"][1]["size"] == 50_000  # replay pads the turn back to this size


def test_long_results_are_shortened_in_the_record(toolbox, tmp_path):
    from orderbot.loop.state import CallRecord
    from orderbot.runs.record import bound_call

    big = CallRecord(
        step=1, call_id="c", name="n", arguments="{}", decision="executed", result={"ok": True, "data": ["row"] * 2000}
    )
    small = bound_call(big)
    assert small.result["truncated"] is True and len(small.result["preview"]) <= MAX_RESULT
    assert big.result["data"] == ["row"] * 2000  # the run's own copy is not changed


class WatchedStore(SqliteRunStore):
    """The state directory's store that also notes what each save wrote: status, transitions,
    side effects."""

    writes: list[tuple[str, list[str], dict]]

    def save(self, record, steps=()):
        events = [t["kind"] for t in record.transitions]
        self.writes.append((record.status, events, dict(record.side_effects)))
        return super().save(record, steps)


def watched_store(state: Path) -> WatchedStore:
    store = WatchedStore.in_state_dir(state)
    store.writes = []
    return store


def test_a_read_only_run_writes_its_record_at_the_start_and_at_the_stop(toolbox, tmp_path):
    runs = watched_store(tmp_path / "state")
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
    Runner(toolbox, model, runs, provider="scripted").start(RunState.start("查询 ORD-1001"), Limits())
    assert runs.writes == [
        ("incomplete", ["started"], {}),
        ("answered", ["started", "proposed", "executed", "returned", "finished"], {}),
    ]


def test_an_approved_side_effect_is_executing_on_disk_before_it_runs(store, tmp_path):
    runs = watched_store(tmp_path / "state")
    seen = []

    def watched(run):
        def run_and_look(args, ctx):
            seen.append(runs.load(ctx.run_id).side_effects)  # what a crash right now would leave
            return run(args, ctx)

        return run_and_look

    toolbox = Toolbox([dataclasses.replace(t, run=watched(t.run)) for t in order_tools(store)])
    cancel = call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}, call_id="c1")
    model = ScriptedModel([calls(cancel), text("已取消")])
    state = RunState.start("取消订单 ORD-1002", user="C001")
    Runner(toolbox, model, runs, provider="scripted").start(state, Limits(), approver=lambda pending: True)
    assert seen == [{"c1": EXECUTING}]
    assert [w[2] for w in runs.writes] == [{}, {"c1": EXECUTING}, {"c1": COMMITTED}, {"c1": COMMITTED}]
    assert runs.load(state.run_id).side_effects == {"c1": COMMITTED}


CHILD = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from orderbot.loop.engine import Engine, Limits
    from orderbot.loop.state import RunState
    from orderbot.models.scripted import ScriptedModel, call, calls
    from orderbot.shops.sample.tools import order_tools
    from orderbot.shops.sample.stores.jsonfile import JsonStore
    from orderbot.runs.recorder import Recorder
    from orderbot.runs.sqlite import SqliteRunStore
    from orderbot.loop.dispatch import Toolbox

    def block(request):
        print("waiting", flush=True)       # the parent kills us now
        threading.Event().wait()

    toolbox = Toolbox(order_tools(JsonStore.load(Path(sys.argv[1]))))
    state = RunState.start("查询 ORD-1001", run_id=sys.argv[3])
    recorder = Recorder.start(SqliteRunStore.in_state_dir(Path(sys.argv[2])), state, provider="scripted", model="slow",
                              toolbox=toolbox, limits=Limits())
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), block])
    Engine(recorder.wrap(model), toolbox, Limits(), observers=[recorder]).run(state)
""")


@pytest.mark.slow  # a process of its own
def test_a_run_killed_mid_way_leaves_a_readable_record(orders_file):
    run_id = new_run_id()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(orders_file), str(state_dir()), run_id], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "waiting"  # blocked inside the second model request
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    record = open_store().load(run_id)
    assert record.state.stop_reason is None and record.status == "incomplete"
    # A read-only run is written when it starts and when it stops: killed in between, it
    # leaves the record of its start.
    assert [t["kind"] for t in record.transitions] == ["started"]
    assert record.state.question == "查询 ORD-1001"
    listed = cli("runs")
    assert listed.exit_code == 0 and run_id in listed.output and "incomplete" in listed.output
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0 and "did not finish" in shown.output
    refused = cli("resume", run_id, "--max-steps", "3")
    assert refused.exit_code == 6 and "did not finish cleanly" in refused.output


def _run(runs: SqliteRunStore, toolbox, run_id: str, question: str = "查询 ORD-1001") -> None:
    state = RunState.start(question, run_id=run_id)
    recorder = Recorder.start(runs, state, provider="scripted", model="m", toolbox=toolbox, limits=Limits())
    Engine(recorder.wrap(ScriptedModel([text("好")])), toolbox, Limits(), observers=[recorder]).run(state)
    recorder.close()


def test_retention_keeps_the_newest_runs(toolbox, monkeypatch):
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "3")
    from orderbot.settings import load_settings

    runs = open_store(keep=load_settings().keep_runs)
    ids = [new_run_id(now=1_790_000_000 + day * 86400) for day in range(5)]
    for run_id in ids:
        _run(runs, toolbox, run_id)
    assert run_ids() == sorted(ids[2:], reverse=True)  # the two oldest are gone


def test_runs_lists_newest_first_with_filters_and_json(orders_file):
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001").exit_code == 0
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002").exit_code == 4
    assert cli("ask", "--max-steps", "1", "查询 ORD-1003").exit_code == 3
    listed = cli("runs")
    assert listed.exit_code == 0
    for word in ("awaiting_approval", "answered", "step_limit", "取消订单 ORD-1002", "C001"):
        assert word in listed.output
    rows = json.loads(cli("runs", "--json").output)
    # Newest first by when each started (three runs of one second, as often here), not by id.
    assert [r["question"] for r in rows] == ["查询 ORD-1003", "取消订单 ORD-1002", "查询 ORD-1001"]
    mine = json.loads(cli("runs", "--json", "--user", "C001").output)
    assert {r["user"] for r in mine} == {"C001"} and len(mine) == 2
    paused = json.loads(cli("runs", "--json", "--stop-reason", "awaiting_approval").output)
    assert [r["question"] for r in paused] == ["取消订单 ORD-1002"]
    assert len(json.loads(cli("runs", "--json", "--limit", "1").output)) == 1


def test_runs_show_reproduces_the_table_of_ask(orders_file):
    asked = cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001 和 ORD-1002")
    run_id = json.loads(cli("runs", "--json").output)[0]["run_id"]
    shown = cli("runs", "show", run_id[:13])  # a unique prefix is enough
    assert shown.exit_code == 0, shown.output
    table = _table(asked.output)
    assert len(table) > 5 and table == _table(shown.output)
    assert "订单 ORD-1001 的状态是：已发货。" in shown.output
    doc = json.loads(cli("runs", "show", run_id, "--json").output)
    assert doc["run_id"] == run_id and doc["state"]["stop_reason"] == "answered"


def _table(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["step"] and "detail" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("+"))  # the answer panel
    return lines[start:end]


def test_corrupt_and_foreign_records_are_named_and_do_not_hide_the_others(orders_file):
    """Records changed behind orderbot's back (sqlite3 on the database): each is refused in one
    sentence naming the run, and a damaged listing row shows as unreadable beside the others."""
    for question in ("查询 ORD-1001", "查询 ORD-1003", "查询 ORD-1006"):
        assert cli("ask", question).exit_code == 0
    corrupt, foreign, unlisted = run_ids()
    sql("UPDATE runs SET record = ? WHERE run_id = ?", ('{"format": "orderbot-run", "version": 1, "run_', corrupt))
    sql("UPDATE runs SET record = ? WHERE run_id = ?", ('{"hello": "world"}', foreign))
    sql("UPDATE runs SET summary = ? WHERE run_id = ?", ("[not a summary", unlisted))
    shown = cli("runs", "show", corrupt)
    assert shown.exit_code == 6
    assert corrupt in shown.output and "corrupt" in shown.output
    assert "Traceback" not in shown.output
    refused = cli("resume", foreign, "--max-steps", "3")
    assert refused.exit_code == 6 and "not an orderbot run record" in refused.output
    listed = cli("runs")
    assert listed.exit_code == 0 and listed.output.count("unreadable") == 1
    assert "查询 ORD-1006" in listed.output and "查询 ORD-1003" in listed.output
    assert cli("runs", "show", "../../etc/passwd").exit_code == 2  # typed, and no run id


def test_damaged_and_newer_records_are_refused(tmp_path):
    bad = tmp_path / "261101-000000-0000.json"
    bad.write_text(json.dumps({"format": FORMAT, "version": 99}))
    with raises(RecordError, match="version 99 is not supported"):
        read_record(bad)
    bad.write_text(json.dumps({"format": FORMAT, "version": 1, "run_id": "x"}))
    with raises(RecordError, match="damaged"):
        read_record(bad)


def test_runs_search_finds_runs_by_question_or_answer_and_n_limits_them():
    for question in ("查询 ORD-1001", "查询 ORD-1002", "What is the status of ORD-1003?"):
        assert cli("ask", question).exit_code == 0
    by_question = json.loads(cli("runs", "--search", "ord-1002", "--json").stdout)
    assert [r["question"] for r in by_question] == ["查询 ORD-1002"]  # in any case
    by_answer = json.loads(cli("runs", "--search", "已发货", "--json").stdout)  # only ORD-1001's answer says it
    assert [r["question"] for r in by_answer] == ["查询 ORD-1001"]
    assert len(json.loads(cli("runs", "-n", "2", "--json").stdout)) == 2
    none = cli("runs", "--search", "nothing like this")
    assert none.exit_code == 0 and none.stdout.strip() == "No runs match."
    assert cli("runs", "--search", " ").exit_code == 2


def test_export_writes_the_record_as_kept(orders_file, tmp_path):
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001").exit_code == 0
    run_id = run_ids()[0]
    exported = tmp_path / "run.json"
    done = cli("runs", "export", run_id[:13], "--output", str(exported))
    assert done.exit_code == 0 and done.output == "", done.output
    assert exported.read_bytes() == record_bytes(run_id)  # tagged, as an earlier orderbot's runs/<id>.json
    assert oct(exported.stat().st_mode & 0o777) == "0o600"  # it holds customers' orders
    piped = cli("runs", "export", run_id)
    assert piped.stdout_bytes == record_bytes(run_id)
    assert read_record(exported).run_id == run_id  # what the tests' replay_file reads, for one
    missing = cli("runs", "export", "261101-000000-dead")
    assert missing.exit_code == 6 and "no run 261101-000000-dead" in missing.output
