"""benchmarks/mcp_calls.py's smoke path: a few lookups a round through `orderbot mcp` and the
minimal server of the same SDK (benchmarks/mcp_minimal.py), to its figures."""

from __future__ import annotations

import pytest
from benchkit import load, run

from orderbot.mcp.server import ENVELOPE_SCHEMA


def test_the_minimal_server_lists_orderbots_output_schema():
    assert load("mcp_minimal").ENVELOPE == ENVELOPE_SCHEMA  # the client checks each result against it


@pytest.mark.slow  # two servers of their own
@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_the_smoke_path_measures_both_servers_call_by_call(tmp_path, era):
    done = run("mcp_calls.py", "--rounds", "3", "--calls", "20", "--era", era, cwd=tmp_path, timeout=300)
    lines = done.stdout.splitlines()
    assert (
        lines[0] == f"20 sequential get_order_status lookups per round, 3 rounds, stdio, the SDK's client ({era} era)"
    )
    assert lines[1].lstrip().startswith("orderbot") and lines[2].lstrip().startswith("minimal")
    assert "orderbot / minimal, wall: median of per-round ratios" in lines[3]
