"""tau2's retail shop in each database store, private to the test: a SQLite file imported
from tau2's db.json, and a PostgreSQL database copied from the one imported once per session
(`retail_postgres_template`, tests/shops/conftest.py)."""

from __future__ import annotations

import pytest
from retailkit import SQL_KINDS, RetailDatabase, copy_sqlite

from orderbot.shops.source import parse_source


@pytest.fixture(params=SQL_KINDS)
def retail_db(request, tmp_path):
    """tau2's shop in SQLite, then in PostgreSQL."""
    if request.param == "sqlite":
        made = RetailDatabase(
            "sqlite", copy_sqlite(request.getfixturevalue("retail_sqlite_template"), tmp_path / "retail.db")
        )
        yield made
        made.close()
        return
    server = request.getfixturevalue("postgres_server")
    database = server.new_database(request.getfixturevalue("retail_postgres_template"))
    made = RetailDatabase("postgres", parse_source(server.url(database)))
    yield made
    made.close()
    server.drop_database(database)


@pytest.fixture(params=SQL_KINDS)
def empty_target(request, tmp_path):
    """Where an import may go: a SQLite path that does not exist yet, or an empty PostgreSQL database."""
    if request.param == "sqlite":
        yield parse_source(f"sqlite:///{tmp_path / 'new.db'}")
        return
    server = request.getfixturevalue("postgres_server")
    database = server.new_database()
    yield parse_source(server.url(database))
    server.drop_database(database)
