"""tau2's 74 training tasks through ask and resume on SQLite (tau2replay.py), each from a copy
of one database that `orderbot orders import` made: the full matrix, on the quickest store."""

from __future__ import annotations

import pytest
from tau2replay import TASKS, check_task, sqlite_copy, sqlite_template


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return sqlite_template(tmp_path_factory.mktemp("retail-sqlite"))


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_each_training_task_reaches_tau2s_end_state_in_sqlite(task_id, template, tmp_path, use_model) -> None:
    check_task(task_id, sqlite_copy(template, tmp_path), tmp_path, use_model)
