"""What every MCP test starts from: its own copy of the sample orders, which a cancel changes."""

from __future__ import annotations

import shutil

import pytest

from orderbot.shops.sample.model import SAMPLE_PATH


@pytest.fixture
def orders(tmp_path):
    path = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, path)
    return path
