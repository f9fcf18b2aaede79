"""tau2's training tasks of the covering subset through ask and resume on PostgreSQL
(tau2replay.py says how the subset is chosen; SQLite runs all 74), on the throwaway cluster
of tests/conftest.py, each in a copy of one database that `orderbot orders import` made
(under CI=true it runs, never skips)."""

from __future__ import annotations

import pytest
from tau2replay import SUBSET, Shop, check_task, postgres_template


@pytest.fixture(scope="module")
def template(postgres_server):
    return postgres_template(postgres_server)


@pytest.fixture
def database(postgres_server, template):
    name = postgres_server.new_database(template)
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


@pytest.mark.parametrize("task_id", SUBSET)
def test_each_task_of_the_subset_reaches_tau2s_end_state_in_postgres(task_id, database, tmp_path, use_model) -> None:
    check_task(task_id, Shop("postgres", database), tmp_path, use_model)
