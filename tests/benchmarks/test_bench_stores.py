"""benchmarks/stores.py's smoke path: 300 generated orders in SQLite, PostgreSQL and the JSON
file, one round, run as a person runs it, to its table."""

from __future__ import annotations

import pytest
from benchkit import markdown_rows, run
from shopkit import require_postgres


@pytest.mark.slow
def test_every_store_runs_to_its_table(tmp_path):
    require_postgres()
    done = run("stores.py", "300", "--rounds", "1", cwd=tmp_path)
    rows = markdown_rows(done.stdout)
    assert list(rows) == [
        "import 300 into SQLite (whole command, validation included)",
        "import 300 into PostgreSQL (COPY)",
        "SQLite 300: ask one order",
        "SQLite 300: peak memory of that ask",
        "SQLite 300: cancel + approve vs a plain ask",
        "PostgreSQL 300: ask one order",
        "PostgreSQL 300: peak memory of that ask",
        "PostgreSQL 300: cancel + approve vs a plain ask",
        "JSON 300: cancel + approve vs read-modify-write",
        "JSON 300: its peak memory",
    ]
    assert all(cells[2].endswith("×") for name, cells in rows.items() if "PostgreSQL (COPY)" not in name)
