"""tau2's retail shop in each database store, private to the test: a SQLite file imported
from tau2's db.json, and a PostgreSQL database copied from one imported once per session
(on the throwaway cluster of tests/conftest.py; under CI=true it runs, never skips)."""

from __future__ import annotations

import pytest
from retailkit import SQL_KINDS, RetailDatabase, import_into

from orderbot.shops.source import parse_source


@pytest.fixture(scope="session")
def retail_postgres_template(postgres_server) -> str:
    name = postgres_server.new_database()
    import_into(parse_source(postgres_server.url(name)))
    return name


@pytest.fixture(params=SQL_KINDS)
def retail_db(request, tmp_path):
    """tau2's shop in SQLite, then in PostgreSQL."""
    if request.param == "sqlite":
        source = parse_source(f"sqlite:///{tmp_path / 'retail.db'}")
        import_into(source)
        made = RetailDatabase("sqlite", source)
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
