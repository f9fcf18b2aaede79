"""Pruning by count (ORDERBOT_KEEP_RUNS) drops only the oldest runs, whole, and only once the
run has finished (never on its clock); a run waiting for approval is never dropped, nothing
else in the state directory is touched, and the audit log keeps every entry and still verifies."""

from __future__ import annotations

from clikit import cli
from runkit import plant_runs, run_ids, sql, state_dir

from orderbot.models.scripted import ScriptedModel, text

OLD = [f"250101-{i // 60:04d}{i % 60:02d}-0000" for i in range(300)]  # older than any real run


def test_only_the_oldest_runs_go_and_nothing_else_in_the_state_directory(monkeypatch):
    plant_runs(OLD[:5])
    keepers = ["notes.txt", "0-my-notes.json", ".hidden.json", f"{OLD[0]}.json"]
    for name in keepers:
        (state_dir() / name).write_text("mine")
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "2")
    assert cli("ask", "查询 ORD-1001").exit_code == 0
    [new, kept] = run_ids()
    assert kept == OLD[4] and new > OLD[4]
    assert all((state_dir() / name).read_text() == "mine" for name in keepers)


def test_pruning_waits_until_the_run_has_finished(use_model, monkeypatch):
    plant_runs(OLD[:50])
    seen_during_run: list[int] = []

    def answer(request):
        seen_during_run.append(len(run_ids()))
        return text("好")

    use_model(ScriptedModel([answer]))
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "10")
    assert cli("ask", "--provider", "scripted", "查询 ORD-1001").exit_code == 0
    assert seen_during_run == [51]  # nothing was dropped while the run's clock ran
    assert len(run_ids()) == 10


def test_a_waiting_run_is_kept_past_the_count_and_the_log_of_dropped_runs_still_verifies(orders_file, monkeypatch):
    ask = ("ask", "--user", "C001", "--orders", str(orders_file))
    assert cli(*ask, "取消订单 ORD-1002").exit_code == 4
    assert cli("resume", "last", "--approve", "--user", "C001", "--orders", str(orders_file)).exit_code == 0
    assert cli(*ask, "取消订单 ORD-1013").exit_code == 4  # waits, and stays waiting
    [waiting, done] = run_ids()
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "1")
    for _ in range(2):
        assert cli(*ask, "查询 ORD-1001").exit_code == 0
    assert waiting in run_ids() and done not in run_ids() and len(run_ids()) == 2  # the newest, and the waiting one
    assert sql("SELECT run_id, status FROM run_approvals") == [(waiting, "pending")]
    verified = cli("audit", "--verify")
    assert verified.exit_code == 0, verified.output  # the dropped run's entries stay, linked as they were
    assert [e[0] for e in sql("SELECT run_id FROM run_audit ORDER BY seq")] == [done, done, done, waiting]
