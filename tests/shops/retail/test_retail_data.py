"""The retail records: tau2's shape in, exactly tau2's shape out, and strict about the rest."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from saying import english, raises

from orderbot.errors import OrdersFileError
from orderbot.shops.choice import is_shop_document
from orderbot.shops.retail import data

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"


@pytest.fixture(scope="module")
def raw() -> bytes:
    return DB.read_bytes()


@pytest.fixture(scope="module")
def document(raw: bytes) -> dict:
    return json.loads(raw)


def test_tau2s_shop_loads_and_writes_back_byte_for_byte(raw: bytes) -> None:
    shop, _ = data.parse_shop(DB, raw)
    assert (len(shop.products), len(shop.users), len(shop.orders)) == (50, 500, 1000)
    out = io.StringIO()
    data.write_document(data.records(shop), out)
    assert out.getvalue().encode() == raw
    assert data.document(data.records(shop)) == json.loads(raw)


def test_the_compact_document_is_the_same_json(raw: bytes) -> None:
    shop, _ = data.parse_shop(DB, raw)
    out = io.StringIO()
    data.write_document(data.records(shop), out, indent=None)
    assert "\n" not in out.getvalue()
    assert json.loads(out.getvalue()) == json.loads(raw)


def test_an_empty_section_is_written_as_an_empty_object() -> None:
    product = data.Product(name="Kettle", product_id="1", variants={})
    for indent in (4, None):
        out = io.StringIO()
        data.write_document([product], out, indent=indent)
        assert json.loads(out.getvalue()) == {"products": {"1": data.dump(product)}, "users": {}, "orders": {}}


def test_records_out_of_export_order_are_refused(document: dict) -> None:
    shop = data.shop_from("db.json", document)
    order, product = next(iter(shop.orders.values())), next(iter(shop.products.values()))
    with pytest.raises(ValueError, match="export order"):
        data.write_document([order, product], io.StringIO())


def test_a_dump_has_no_null_field_and_amounts_at_cents(document: dict) -> None:
    order = data.Order.model_validate({**document["orders"]["#W2611340"], "exchange_price_difference": 12.3400000001})
    dumped = data.dump(order)
    assert dumped["exchange_price_difference"] == 12.34
    assert "cancel_reason" not in dumped and "return_items" not in dumped
    assert list(dumped)[:7] == ["order_id", "user_id", "address", "items", "status", "fulfillments", "payment_history"]


def test_payment_methods_keep_their_kinds(document: dict) -> None:
    user = data.User.model_validate(document["users"]["noah_brown_6181"])
    kinds = {type(method).__name__ for method in user.payment_methods.values()}
    assert kinds == {"Paypal", "CreditCard"}
    assert data.dump(user) == document["users"]["noah_brown_6181"]


def broken(document: dict, edit) -> dict:
    copy = json.loads(json.dumps(document))
    edit(copy)
    return copy


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda d: d["orders"]["#W2611340"]["payment_history"][0].update(amount=1e12), "less than or equal to 1000000"),
        (lambda d: d["orders"]["#W2611340"]["payment_history"][0].update(amount=-5.0), "greater than or equal to 0"),
        (lambda d: d["orders"]["#W2611340"]["items"][0].update(price="47.84"), "valid number"),
        (lambda d: d["orders"]["#W2611340"]["items"][0].update(price=True), "valid number"),
        (lambda d: d["orders"]["#W2611340"].update(order_id="#W2611340\x00"), "plain text"),
        (lambda d: d["orders"]["#W2611340"].update(user_id="james_li_5688\u202e"), "plain text"),
        (lambda d: d["orders"]["#W2611340"].update(status="lost"), "input should be"),
        (lambda d: d["orders"]["#W2611340"].update(note="hello"), "extra inputs are not permitted"),
        (lambda d: d["users"]["noah_brown_6181"]["payment_methods"]["paypal_5727330"].update(source="cash"), "tag"),
        (lambda d: d["users"]["noah_brown_6181"].update(email="x" * 300), "at most 256"),
        (lambda d: d["products"]["9523456873"].update(product_id="9523456874"), "record's id is"),
        (lambda d: d["orders"]["#W2611340"].update(user_id="nobody_1"), "not in the shop"),
    ],
)
def test_a_broken_shop_is_one_clear_error(document: dict, edit, says: str) -> None:
    with raises(OrdersFileError, match=says) as caught:
        data.shop_from("db.json", broken(document, edit))
    message = english(caught.value)
    assert message.startswith("db.json: ") and "\n" not in message
    assert "47.84" not in message and "\x00" not in message  # the place, never the value


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_non_finite_amounts_in_the_file_are_refused(raw: bytes, value: bytes) -> None:
    text = raw.replace(b'"price": 50.88', b'"price": ' + value, 1)
    with raises(OrdersFileError, match="db.json: products.9523456873.variants.9612497925.price: .*finite"):
        data.parse_shop("db.json", text)


def test_amounts_are_kept_at_cents() -> None:
    assert data.cents(0.1 + 0.2) == 0.3
    item = data.Variant(item_id="1", options={}, available=True, price=71.96000000000001)
    assert item.price == 71.96


CHARACTERS = [
    "a",
    " ",
    "\t",
    "\x00",
    "\x1b",
    "\x7f",
    "\x9b",
    "\u00a0",
    "\u200b",
    "\u202e",
    "\u2028",
    "\u2029",
    "\ue000",
    "\U0010fffd",
    "\ufeff",
    "中",
    "é",
    "\u0378",
]


@pytest.mark.parametrize("ch", CHARACTERS)
def test_the_record_patterns_and_the_argument_checks_agree(ch: str) -> None:
    from pydantic import TypeAdapter

    for fast, slow in ((data.Text, data.PlainText), (data.Id, data.PlainId)):
        for value in (ch, f"x{ch}y", f"{ch}x", f"x{ch}"):
            results = []
            for kind in (fast, slow):
                try:
                    TypeAdapter(kind).validate_python(value)
                    results.append(True)
                except ValueError:
                    results.append(False)
            assert results[0] == results[1], (repr(value), results)


def test_not_json_and_not_a_shop_are_clear_errors() -> None:
    with raises(OrdersFileError, match="x.json: not valid JSON"):
        data.parse_shop("x.json", b"{")
    with raises(OrdersFileError, match="expected an object"):
        data.parse_shop("x.json", b"[]")
    with raises(OrdersFileError, match="x.json: users: field required"):
        data.parse_shop("x.json", b'{"products": {}, "orders": {}}')


def test_a_stores_bookkeeping_is_kept_apart_from_the_shop(raw: bytes) -> None:
    document = json.loads(raw)
    document[data.LEDGER] = {"run/call": {"ok": 1}}
    shop, ledger = data.parse_shop("db.json", json.dumps(document))
    assert ledger == {"run/call": {"ok": 1}}
    assert data.document(data.records(shop)) == json.loads(raw)
    document["something_else"] = 1
    with raises(OrdersFileError, match="something_else: extra inputs"):
        data.parse_shop("db.json", json.dumps(document))


def test_a_shop_file_is_told_from_the_sample_orders(raw: bytes) -> None:
    assert is_shop_document(raw)
    assert not is_shop_document(b'{"orders": [{"order_id": "ORD-1", "note": "users products"}]}')
    assert is_shop_document(b' {\n "orders" : {}, "users": {}, "products": {}}')
    assert not is_shop_document(b'{"note": {"products": {}}}')
