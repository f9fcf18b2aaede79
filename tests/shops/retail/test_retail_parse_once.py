"""A shop's bytes are parsed and checked once per process (orderbot/shops/retail/jsonstore.py):
a second store over the same bytes, wherever they lie, shares the first one's records, and a
write keeps what it wrote, so the next command of the same process (a resume after an ask)
validates nothing again. Kept shops must be exactly what reading the file gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from saying import raises

from orderbot.errors import OrdersFileError
from orderbot.shops.retail import actions, data
from orderbot.shops.retail.jsonstore import JsonShopStore

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"


@pytest.fixture
def parses(monkeypatch) -> list[Path]:
    """The paths data.parse_shop validated, in order."""
    seen: list[Path] = []
    real = data.parse_shop

    def counted(path, raw):
        seen.append(Path(path))
        return real(path, raw)

    monkeypatch.setattr(data, "parse_shop", counted)
    return seen


def a_shop_of_its_own(tmp_path: Path, name: str = "shop.json") -> Path:
    """A small part of tau2's shop (the orders of three customers, every product) with one
    email of its own, so that no other test parsed these bytes yet."""
    document = json.loads(DB.read_text(encoding="utf-8"))
    users = {"noah_brown_6181", document["orders"]["#W6779827"]["user_id"], "olivia_ito_3591"}
    document["users"] = {key: user for key, user in document["users"].items() if key in users}
    document["orders"] = {key: order for key, order in document["orders"].items() if order["user_id"] in users}
    document["users"]["noah_brown_6181"]["email"] = f"{tmp_path.name}@example.com"
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_same_bytes_in_two_files_are_validated_once(tmp_path: Path, parses) -> None:
    first = a_shop_of_its_own(tmp_path)
    second = tmp_path / "copy.json"
    second.write_bytes(first.read_bytes())
    one, two = JsonShopStore.load(first), JsonShopStore.load(second)
    assert parses == [first]
    assert data.document(one.export()) == data.document(two.export())
    assert two.source == str(second)  # each store is still its own file's


def test_after_a_write_the_file_is_read_back_without_validating_it_again(tmp_path: Path, parses) -> None:
    path = a_shop_of_its_own(tmp_path)
    store = JsonShopStore.load(path)
    order = store.order("#W6779827")
    store.apply(actions.cancel_pending_order(order, store.user(order.user_id), "no longer needed"), "run-1/call-1")
    again = JsonShopStore.load(path)
    assert parses == [path]
    # What was kept is what validating the file gives, records and ledger alike.
    on_disk = data.ShopFile.model_validate_json(path.read_bytes())
    assert data.document(again.export()) == data.document(data.records(on_disk))
    other = actions.modify_user_address(store.user("noah_brown_6181"), store.user("noah_brown_6181").address)
    assert again.apply(other, "run-1/call-1") == on_disk.orderbot_applied_calls["run-1/call-1"]
    assert parses == [path]


def test_bytes_changed_by_another_writer_are_validated_again(tmp_path: Path, parses) -> None:
    path = a_shop_of_its_own(tmp_path)
    JsonShopStore.load(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["orders"]["#W6779827"]["status"] = "cancelled"
    path.write_text(json.dumps(document, indent=4), encoding="utf-8")
    assert JsonShopStore.load(path).order("#W6779827").status == "cancelled"
    assert parses == [path, path]


def test_a_broken_file_is_refused_with_its_own_name_every_time(tmp_path: Path) -> None:
    good = a_shop_of_its_own(tmp_path)
    JsonShopStore.load(good)
    broken = tmp_path / "broken.json"
    broken.write_bytes(good.read_bytes().replace(b'"price": ', b'"price": "x", "p": ', 1))
    for _ in range(2):
        with raises(OrdersFileError, match="broken.json"):
            JsonShopStore.load(broken)
