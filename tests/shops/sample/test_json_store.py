"""The JSON store's cost: one parse per command, edits in the file's own style, a frozen
collector after a large load."""

from __future__ import annotations

import difflib
import gc
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores import jsonfile
from orderbot.shops.sample.stores.jsonfile import JsonStore

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
ADDED = '"cancelled_at"{sep}"2026-11-30T12:00:00Z"{comma}"cancel_reason"{sep}"不想要了"{comma}"cancelled_by"{sep}"r/c"'


def cancel(path: Path) -> None:
    store = JsonStore.load(path)
    store.now = lambda: NOW
    store.cancel("ORD-1002", "不想要了", "r/c", user="C001")


def test_a_compact_file_stays_compact_and_changes_only_the_changed_fields(tmp_path):
    path = tmp_path / "orders.json"
    document = json.loads(SAMPLE_PATH.read_bytes())
    path.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    [old] = [
        json.dumps(o, ensure_ascii=False, separators=(",", ":"))
        for o in document["orders"]
        if o["order_id"] == "ORD-1002"
    ]
    new = old.replace('"status":"处理中"', '"status":"已取消"')
    new = new.replace(f'"updated_at":"{document["orders"][1]["updated_at"]}"', '"updated_at":"2026-11-30T12:00:00Z"')
    new = new[:-1] + "," + ADDED.format(sep=":", comma=",") + "}"
    cancel(path)
    assert path.read_text(encoding="utf-8") == before.replace(old, new)


def test_an_indented_file_stays_indented_and_grows_by_the_new_fields_only(orders_file):
    before = orders_file.read_text(encoding="utf-8").splitlines()
    cancel(orders_file)
    after = orders_file.read_text(encoding="utf-8").splitlines()
    diff = [line for line in difflib.unified_diff(before, after, lineterm="", n=0) if line[:1] in "+-"][2:]
    assert [line for line in diff if line.startswith("-")] == [
        '-      "status": "处理中",',
        '-      "updated_at": "2026-11-27T14:05:00+08:00",',
        "-      }",
    ]
    assert [line for line in diff if line.startswith("+")] == [
        '+      "status": "已取消",',
        '+      "updated_at": "2026-11-30T12:00:00Z",',
        "+      },",
        '+      "cancelled_at": "2026-11-30T12:00:00Z",',
        '+      "cancel_reason": "不想要了",',
        '+      "cancelled_by": "r/c"',
    ]


def test_a_key_spelled_with_escapes_still_cancels_by_rewriting(tmp_path):
    path = tmp_path / "orders.json"
    path.write_text(
        SAMPLE_PATH.read_text(encoding="utf-8").replace('"order_id": "ORD-1002"', '"order\\u005fid": "ORD-1002"')
    )
    cancel(path)
    assert JsonStore.load(path).get("ORD-1002").status == "已取消"


def test_a_cancel_parses_the_file_once_unless_someone_else_wrote_it(orders_file, monkeypatch):
    parsed = []
    real = jsonfile.parse_orders
    monkeypatch.setattr(jsonfile, "parse_orders", lambda path, raw: parsed.append(path) or real(path, raw))
    cancel(orders_file)
    assert len(parsed) == 1  # the load; the cancel reused it

    parsed.clear()
    store = JsonStore.load(orders_file)
    JsonStore.load(orders_file).cancel("ORD-1004", "x", "other/c", user="C002")  # another writer
    store.cancel("ORD-1013", "x", "r/c2", user="C001")
    assert len(parsed) == 3  # two loads, and one re-read because the file had changed
    assert JsonStore.load(orders_file).get("ORD-1004").status == "已取消"  # the other write was kept


def test_a_large_store_is_frozen_before_the_collector_runs_again(orders_file, monkeypatch):
    monkeypatch.setattr(jsonfile, "FREEZE_AT", 1)
    frozen = gc.get_freeze_count()
    try:
        JsonStore.load(orders_file)
        assert gc.get_freeze_count() > frozen and gc.isenabled()
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("content", ['{"orders": []}'])
def test_an_empty_store_lists_nothing(tmp_path, content):
    path = tmp_path / "orders.json"
    path.write_text(content)
    assert JsonStore.load(path).list_orders("C001", limit=5) == []
