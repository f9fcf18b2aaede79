"""Loading orders.json: one clear line for every kind of broken file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from saying import english, raises

from orderbot.errors import OrdersFileError
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore

SAMPLE = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))


def write(tmp_path: Path, content: str | dict) -> Path:
    path = tmp_path / "orders.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return path


def test_sample_loads_and_matches_the_top_level_copy():
    store = JsonStore.load(SAMPLE_PATH)
    assert len(store) >= 12
    assert {o.customer_id for o in store.orders.values()} >= {"C001", "C002", "C003"}
    assert store.get("ORD-1001").status == "已发货"
    assert store.get("ORD-1001").shipping.tracking_number
    assert store.get("ORD-1002").status == "处理中" and store.get("ORD-1002").customer_id == "C001"
    assert store.get("ORD-1003").customer_id == "C002"
    top_level = Path(__file__).parents[3] / "orders.json"
    assert top_level.read_bytes() == SAMPLE_PATH.read_bytes()


def test_missing_file(tmp_path):
    with raises(OrdersFileError, match=r"nowhere\.json: no such file"):
        JsonStore.load(tmp_path / "nowhere.json")


def test_not_json_names_line_and_column(tmp_path):
    path = write(tmp_path, '{"orders": [\n  {"order_id": "ORD-1",}\n]}')
    with pytest.raises(OrdersFileError) as info:
        JsonStore.load(path)
    message = english(info.value)
    assert str(path) in message and "not valid JSON" in message and "line 2" in message


@pytest.mark.parametrize("content", ["[]", '{"order": []}', '{"orders": {}}', '"orders"'])
def test_wrong_shape(tmp_path, content):
    with raises(OrdersFileError, match=r"expected .*orders"):
        JsonStore.load(write(tmp_path, content))


def test_duplicate_id(tmp_path):
    data = {"orders": [SAMPLE["orders"][0], SAMPLE["orders"][1], SAMPLE["orders"][0]]}
    with raises(OrdersFileError, match=r"order #3 repeats the id ORD-1001"):
        JsonStore.load(write(tmp_path, data))


def test_bad_field_names_the_order_and_field(tmp_path):
    broken = dict(SAMPLE["orders"][1], total="lots")
    data = {"orders": [SAMPLE["orders"][0], broken]}
    with pytest.raises(OrdersFileError) as info:
        JsonStore.load(write(tmp_path, data))
    message = english(info.value)
    assert "order #2 (ORD-1002)" in message and "field total" in message
    assert "\n" not in message


def test_unknown_status_is_a_bad_field(tmp_path):
    data = {"orders": [dict(SAMPLE["orders"][0], status="shipped")]}
    with raises(OrdersFileError, match=r"order #1 \(ORD-1001\), field status"):
        JsonStore.load(write(tmp_path, data))
