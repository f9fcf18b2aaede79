"""tau2's training tasks of the covering subset through ask and resume on the JSON file store
(tau2replay.py says how the subset is chosen; SQLite runs all 74)."""

from __future__ import annotations

import shutil

import pytest
from tau2replay import FIXTURES, SUBSET, Shop, check_task


@pytest.mark.parametrize("task_id", SUBSET)
def test_each_task_of_the_subset_reaches_tau2s_end_state_in_a_json_file(task_id, tmp_path, use_model) -> None:
    path = tmp_path / "db.json"
    shutil.copyfile(FIXTURES / "db.json", path)
    check_task(task_id, Shop("json", str(path)), tmp_path, use_model)
