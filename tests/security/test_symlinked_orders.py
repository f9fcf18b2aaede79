"""Writing through a symlinked orders.json replaces the file the link
points to, and keeps the link."""

from __future__ import annotations

import json
import os
import shutil

from clikit import cli
from runkit import only_run

from orderbot.shops.sample.model import SAMPLE_PATH


def test_a_cancel_through_a_symlink_changes_the_real_file_and_keeps_the_link(tmp_path):
    real_dir = tmp_path / "data"
    real_dir.mkdir()
    real = real_dir / "orders-real.json"
    shutil.copyfile(SAMPLE_PATH, real)
    link = tmp_path / "work" / "orders.json"
    link.symlink_to(real)
    assert cli("ask", "--user", "C001", "取消订单 ORD-1002").exit_code == 4
    result = cli("resume", only_run(), "--approve", "--user", "C001", "--orders", str(link))
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    status = {o["order_id"]: o["status"] for o in json.loads(real.read_text("utf-8"))["orders"]}
    assert status["ORD-1002"] == "已取消"
    assert not [p for p in real_dir.iterdir() if p.name.endswith(".tmp")]
    assert not [p for p in link.parent.iterdir() if p.name.endswith(".tmp")]
