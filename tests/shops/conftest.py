"""tau2's retail shop as a SQLite file and as a PostgreSQL template, imported once per session on the throwaway
cluster of tests/conftest.py (under CI=true it runs, never skips): every test that wants the
shop in PostgreSQL gets its own copy (tests/shops/retail/, test_store_contract.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orderbot.shops.retail.transfer import import_file
from orderbot.shops.source import parse_source

TAU2_DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"


@pytest.fixture(scope="session")
def retail_sqlite_template(tmp_path_factory) -> Path:
    """The same in SQLite: a file imported once, which tests copy (retailkit.copy_sqlite)."""
    path = tmp_path_factory.mktemp("retail-sqlite") / "template.db"
    import_file(TAU2_DB, parse_source(f"sqlite:///{path}"), replace=False)
    return path


@pytest.fixture(scope="session")
def retail_postgres_template(postgres_server) -> str:
    name = postgres_server.new_database()
    import_file(TAU2_DB, parse_source(postgres_server.url(name)), replace=False)
    return name
