"""benchmarks/record_writes.py's smoke path: a few runs a side, to its figures, with what each
side wrote counted (the script stops when the store or the baseline did not do its job)."""

from __future__ import annotations

import pytest
from benchkit import run


@pytest.mark.slow  # a process of its own
def test_the_smoke_path_measures_both_sides_and_counts_what_each_wrote(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = run("record_writes.py", "--rounds", "1", "--runs", "3", "--dir", str(scratch), cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 rounds × 3 runs a side") and lines[0].endswith("store: SqliteRunStore")
    for label in ("store work per run", "plain durable writes", "ratio", "opening the store"):
        assert any(line.strip().startswith(label) for line in lines), done.stdout
    assert lines[-1].strip() == "runs kept by the store 8, files written by the baseline 8"
    assert list(scratch.iterdir()) == []  # its temporary directory is gone
