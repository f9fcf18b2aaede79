"""benchmarks/mcp_sessions.py's smoke path: one and three concurrent sessions, a few lookups and
a queued cancel each, on one server and on two over one PostgreSQL; every cancel approved and
executed once (the script fails otherwise), and the figures' table printed."""

from __future__ import annotations

import pytest
from benchkit import markdown_rows, run


@pytest.mark.slow  # servers and a cluster of their own
def test_the_smoke_path_measures_one_and_two_servers_and_every_cancel_runs_once(tmp_path):
    done = run("mcp_sessions.py", "--rounds", "1", "--lookups", "3", "--sessions", "1,3", cwd=tmp_path, timeout=600)
    rows = markdown_rows(done.stdout)
    for setup in ("one server", "two servers, one PostgreSQL"):
        assert rows[f"{setup}: cancels executed once"][0] == "4 of 4 queued, 4 reported approved", done.stdout
        rate_one, rate_three = (float(cell.replace(",", "")) for cell in rows[f"{setup}: calls/s"][:2])
        assert rate_one > 0 and rate_three > 0
        assert rows[f"{setup}: p99 / p50"][0].endswith("×")
