"""tau2's 74 training tasks through ask and resume on the JSON file store (tau2replay.py)."""

from __future__ import annotations

import shutil

import pytest
from tau2replay import FIXTURES, TASKS, Shop, check_task


@pytest.mark.parametrize("task_id", TASKS)
def test_each_training_task_reaches_tau2s_end_state_in_a_json_file(task_id, tmp_path, use_model) -> None:
    path = tmp_path / "db.json"
    shutil.copyfile(FIXTURES / "db.json", path)
    check_task(task_id, Shop("json", str(path)), tmp_path, use_model)
