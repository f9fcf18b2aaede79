"""Importing a tau2-shaped file into SQLite and PostgreSQL: read one record at a time, refused
in the JSON store's own words (file, record, field), and a refused import writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retailkit import DB, import_into, open_retail
from saying import raises

from orderbot.errors import ConfigError, OrdersFileError
from orderbot.shops.retail import data, stream

DOCUMENT = json.loads(DB.read_text(encoding="utf-8"))


def written(tmp_path: Path, document: dict, name: str = "shop.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def json_store_refusal(path: Path) -> str:
    with pytest.raises(OrdersFileError) as refused:
        data.load_shop(path)
    return str(refused.value)


def test_the_stream_reads_every_member_in_the_files_order_across_block_boundaries(monkeypatch):
    monkeypatch.setattr(stream, "BLOCK", 97)  # values cut at every kind of place
    members = list(stream.members(DB))
    assert [(section, key) for section, key, _ in members] == [
        (section, key) for section in data.SECTIONS for key in DOCUMENT[section]
    ]
    assert {section: {k: v for s, k, v in members if s == section} for section in data.SECTIONS} == DOCUMENT


@pytest.mark.parametrize(
    "text",
    ['{"orders": {"a": 12', '{"orders": {"a": 1} x', "[]", '{"orders": {"a" 1}}', '{"orders": {"a": 1,}}', ""],
)
def test_the_stream_refuses_what_is_not_an_object_of_objects(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(stream.StreamError):
        list(stream.members(path))


def hostile_order_id(document: dict) -> dict:
    order_id, order = next(iter(document["orders"].items()))
    bad = "#W26\x0011340"
    orders = {bad if key == order_id else key: dict(value, order_id=bad) if key == order_id else value
              for key, value in document["orders"].items()}  # fmt: skip
    users = {key: dict(user, orders=[bad if o == order_id else o for o in user["orders"]])
             for key, user in document["users"].items()}  # fmt: skip
    return {**document, "users": users, "orders": orders}


def last_user_email_with_escape(document: dict) -> dict:
    users = dict(document["users"])
    key = list(users)[-1]
    users[key] = dict(users[key], email="x\x1b[31m@example.com")
    return {**document, "users": users}


def order_of_nobody(document: dict) -> dict:
    orders = dict(document["orders"])
    key = list(orders)[-1]
    orders[key] = dict(orders[key], user_id="nobody_0")
    return {**document, "orders": orders}


def key_not_its_id(document: dict) -> dict:
    products = dict(document["products"])
    key = list(products)[3]
    products[key] = dict(products[key], product_id="1234")
    return {**document, "products": products}


@pytest.mark.parametrize("spoil", [hostile_order_id, last_user_email_with_escape, order_of_nobody, key_not_its_id])
def test_a_refused_import_says_what_the_json_store_says_and_writes_nothing(tmp_path, empty_target, spoil):
    path = written(tmp_path, spoil(DOCUMENT))
    expected = json_store_refusal(path)
    with pytest.raises(OrdersFileError) as refused:
        import_into(empty_target, path)
    assert str(refused.value) == expected
    if empty_target.kind == "sqlite":
        assert list(tmp_path.glob("new.db*")) == []  # no file left behind
    else:
        with raises(ConfigError, match="holds no retail shop"):
            open_retail(empty_target)


def test_a_key_twice_in_a_section_is_refused(tmp_path, empty_target):
    raw = DB.read_text(encoding="utf-8")
    first_user = next(iter(DOCUMENT["users"]))
    twice = raw.replace('    "users": {', '    "users": {\n' + json.dumps(first_user) + ": "
                        + json.dumps(DOCUMENT["users"][first_user]) + ",", 1)  # fmt: skip
    path = tmp_path / "twice.json"
    path.write_text(twice, encoding="utf-8")
    with raises(OrdersFileError, match=f"users.{first_user}: this id appears twice"):
        import_into(empty_target, path)


def test_a_database_holding_a_shop_is_replaced_only_when_asked(retail_db, tmp_path):
    smaller = {**DOCUMENT, "orders": dict(list(DOCUMENT["orders"].items())[:10])}
    smaller["users"] = {
        key: dict(user, orders=[o for o in user["orders"] if o in smaller["orders"]])
        for key, user in DOCUMENT["users"].items()
    }
    path = written(tmp_path, smaller)
    with raises(ConfigError, match="already holds 1,000 retail orders; pass --replace"):
        import_into(retail_db.source, path)
    assert retail_db.open().count() == 1000
    assert import_into(retail_db.source, path, replace=True) == {"products": 50, "users": 500, "orders": 10}
    assert retail_db.open().count() == 10
