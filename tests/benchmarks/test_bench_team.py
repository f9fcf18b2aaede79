"""benchmarks/team.py's smoke path: three actions settled by twenty desks at once in a
PostgreSQL run store, then the two listings at 300 runs; run as a person runs it."""

from __future__ import annotations

import json

import pytest
from benchkit import run
from shopkit import require_postgres


@pytest.mark.slow
def test_the_queue_is_settled_exactly_once_and_every_refused_loser_is_a_lost_race(tmp_path):
    require_postgres()
    out = tmp_path / "team.json"
    run("team.py", "--approvals", "3", "--runs", "300", "--rounds", "1", "--json", str(out), cwd=tmp_path)
    doc = json.loads(out.read_text(encoding="utf-8"))
    settle = doc["settle"]
    assert settle["settled"] == 3 and settle["approval_rows"] == {"committed": 3}
    assert settle["executed_once"] and settle["failed_entries"] == 0 and settle["audit_intact"]
    assert settle["orders_cancelled_by_their_run"] == 3
    # Twenty desks start at once on three actions: every desk that finds one waiting tries it,
    # and at most three tries can win, so the others lose a race (exit 9, told who won) and
    # nothing else fails.
    assert settle["other_failures"] == []
    assert settle["lost_races"] == settle["attempts"] - 3 >= 1
    assert settle["lost_told_who_won"] == settle["lost_races"]
    listing = doc["listing"]
    for figure in ("runs in-process", "runs process", "approvals in-process", "approvals process"):
        assert listing[figure]["ratio (median of rounds)"] > 0 and "300 runs ms" in listing[figure]
    for query in ("runs query", "approvals query"):
        assert listing[query]["ratio (median of rounds)"] > 0
    assert listing["runs plan"] and listing["approvals plan"]
