"""benchmarks/retail.py's smoke path: tau2's retail shop against a generated one of 1,500 orders,
in SQLite and PostgreSQL, one round, run as a person runs it, to its table."""

from __future__ import annotations

import pytest
from benchkit import markdown_rows, run
from shopkit import require_postgres


@pytest.mark.slow
def test_both_databases_at_both_sizes_run_to_the_table(tmp_path):
    require_postgres()
    done = run("retail.py", "--orders", "1500", "--rounds", "1", cwd=tmp_path)
    rows = markdown_rows(done.stdout)
    imports = [f"{db}: {what}" for db in ("SQLite", "PostgreSQL") for what in (
        "import 1,500 orders, 750 customers (whole command)", "peak memory of that import")]  # fmt: skip
    figures = [
        f"{db}: {what}, 1,500 vs 1,000 orders"
        for db in ("SQLite", "PostgreSQL")
        for what in (
            "find_user_id_by_email (store.find_user_by_email)",
            "an order's details (store.order)",
            "one approved cancellation (read, compute, apply)",
        )
    ]
    assert list(rows) == imports + figures
    assert all(rows[name][2].endswith("×") for name in figures)
