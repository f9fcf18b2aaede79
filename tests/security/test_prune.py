"""Pruning deletes only run records, from one directory listing, and only
once the run has finished (never on its clock)."""

from __future__ import annotations

import os

from clikit import cli
from securitykit import runs_dir

from orderbot.models.scripted import ScriptedModel, text
from orderbot.runs.store import RunStore

OLD = [f"250101-{i // 60:04d}{i % 60:02d}-0000" for i in range(300)]  # older than any real run


def fill(count: int) -> None:
    runs_dir().mkdir(parents=True, exist_ok=True)
    for run_id in OLD[:count]:
        (runs_dir() / f"{run_id}.json").write_text("{}")


def test_files_that_are_not_run_records_survive_pruning(monkeypatch):
    fill(5)
    keepers = ["0-my-notes.json", "notes.txt", "README.json", ".hidden.json", "250101-000000-0000.json.bak"]
    for name in keepers:
        (runs_dir() / name).write_text("mine")
    (runs_dir() / f".{OLD[0]}.json.x1y2.tmp").write_text("torn")  # a killed writer's leftover: ours
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "1")
    assert cli("ask", "查询 ORD-1001").exit_code == 0
    left = sorted(p.name for p in runs_dir().iterdir() if not p.name.endswith(".lock"))
    assert [n for n in left if n not in keepers and not n.endswith(".json")] == []
    assert all(name in left for name in keepers)
    assert sum(1 for n in left if n.endswith(".json") and n not in keepers) == 1  # the new run only


def test_pruning_waits_until_the_run_has_finished(use_model, monkeypatch):
    fill(50)
    seen_during_run: list[int] = []

    def answer(request):
        seen_during_run.append(len(list(runs_dir().glob("250101-*.json"))))
        return text("好")

    use_model(ScriptedModel([answer]))
    monkeypatch.setenv("ORDERBOT_KEEP_RUNS", "10")
    assert cli("ask", "--provider", "scripted", "查询 ORD-1001").exit_code == 0
    assert seen_during_run == [50]  # nothing was deleted while the run's clock ran
    assert len(list(runs_dir().glob("*.json"))) == 10


def test_pruning_lists_the_directory_once(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "state", keep=10)
    store.dir.mkdir(parents=True)
    for run_id in OLD:
        (store.dir / f"{run_id}.json").write_text("{}")
        (store.dir / f"{run_id}.lock").write_text("")
    listings = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listings.append(path) or real(path))
    monkeypatch.setattr(type(store.dir), "glob", lambda *a, **k: (_ for _ in ()).throw(AssertionError("glob")))
    doomed = store.prune()
    assert len(listings) == 1 and len(doomed) == 290
    assert sorted(p.name for p in store.dir.iterdir()) == sorted(
        [f"{i}.json" for i in OLD[-10:]] + [f"{i}.lock" for i in OLD[-10:]]
    )
