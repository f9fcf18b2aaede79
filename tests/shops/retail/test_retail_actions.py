"""Each retail action's policy checks and effects, one rule per test: every test here fails
when the check or effect it names is taken out of orderbot/shops/retail/actions.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from orderbot.errors import ToolError
from orderbot.shops.retail import actions, data

SHOP = data.load_shop(Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json")
PENDING = "#W4862767"  # sophia_thomas_5301: paid by PayPal; she also has a gift card (66.00) and two credit cards
DELIVERED = "#W5866402"  # olivia_ito_3591: paid by PayPal; she also has a gift card (56.00) and a credit card
PAYPAL, GIFT_CARD, CARD = "paypal_5297429", "gift_card_9178183", "credit_card_7326294"


def order(order_id: str = PENDING, **changes) -> data.Order:
    return SHOP.orders[order_id].model_copy(update=changes)


def owner(of: data.Order) -> data.User:
    return SHOP.users[of.user_id]


def refused(code: str, call, *args) -> ToolError:
    with pytest.raises(ToolError) as caught:
        call(*args)
    assert caught.value.code == code, str(caught.value)
    return caught.value


def other_variant(item: data.OrderItem, *, available: bool = True) -> data.Variant:
    product = SHOP.products[item.product_id]
    return next(v for v in product.variants.values() if v.item_id != item.item_id and v.available is available)


def swap_args(of: data.Order, count: int = 1) -> tuple[list[str], list[str]]:
    items = of.items[:count]
    return [i.item_id for i in items], [other_variant(i).item_id for i in items]


# ---- who may see what -----------------------------------------------------------------------


def test_an_order_is_shown_only_to_its_owner_and_a_missing_one_looks_the_same() -> None:
    mine = order()
    assert actions.owned_order(mine, "sophia_thomas_5301") is mine
    theirs = refused("no_access", actions.owned_order, mine, "olivia_ito_3591")
    missing = refused("no_access", actions.owned_order, None, "olivia_ito_3591")
    assert str(theirs) == str(missing)


# ---- cancel --------------------------------------------------------------------------------


def test_cancel_refunds_each_payment_and_keeps_the_reason() -> None:
    write = actions.cancel_pending_order(order(), owner(order()), "ordered by mistake")
    new = write.changes[0].new
    assert new.status == "cancelled" and new.cancel_reason == "ordered by mistake"
    assert new.payment_history[-1] == data.Payment(transaction_type="refund", amount=2492.53, payment_method_id=PAYPAL)
    assert write.result == data.dump(new)


def test_cancel_gives_a_gift_card_its_money_back_at_once() -> None:
    paid_by_gift_card = order(
        payment_history=[data.Payment(transaction_type="payment", amount=10.5, payment_method_id=GIFT_CARD)]
    )
    write = actions.cancel_pending_order(paid_by_gift_card, owner(paid_by_gift_card), "no longer needed")
    user = write.changes[1].new
    assert user.payment_methods[GIFT_CARD].balance == 76.5


@pytest.mark.parametrize("status", ["processed", "delivered", "cancelled", "return requested"])
def test_cancel_only_a_pending_order(status: str) -> None:
    refused("not_pending", actions.cancel_pending_order, order(status=status), owner(order()), "no longer needed")


def test_an_order_whose_items_were_modified_cannot_be_cancelled_or_modified() -> None:
    modified = order(status="pending (item modified)")
    user = owner(modified)
    refused("already_modified", actions.cancel_pending_order, modified, user, "no longer needed")
    refused("already_modified", actions.modify_pending_order_address, modified, user.address)
    refused("already_modified", actions.modify_pending_order_payment, modified, user, CARD)
    refused(
        "already_modified",
        actions.modify_pending_order_items,
        modified,
        user,
        SHOP.products,
        *swap_args(modified),
        CARD,
    )


@pytest.mark.parametrize("reason", ["changed my mind", "No longer needed", "", "no longer needed "])
def test_cancel_only_for_one_of_the_two_reasons(reason: str) -> None:
    refused("bad_reason", actions.cancel_pending_order, order(), owner(order()), reason)


# ---- modify ------------------------------------------------------------------------------------


def test_modify_items_swaps_them_charges_the_difference_and_marks_the_order() -> None:
    pending = order()
    old, new = swap_args(pending, 2)
    write = actions.modify_pending_order_items(pending, owner(pending), SHOP.products, old, new, CARD)
    changed = write.changes[0].new
    assert changed.status == "pending (item modified)"
    assert [i.item_id for i in changed.items[:2]] == new
    difference = sum(
        SHOP.products[i.product_id].variants[n].price - i.price for i, n in zip(pending.items, new, strict=False)
    )
    entry = changed.payment_history[-1]
    assert entry.amount == round(abs(difference), 2) and entry.payment_method_id == CARD
    assert entry.transaction_type == ("payment" if difference > 0 else "refund")
    # tau2's tool gives every modified item the price and options of the last new variant
    last = SHOP.products[pending.items[1].product_id].variants[new[1]]
    assert [(i.price, i.options) for i in changed.items[:2]] == [(last.price, last.options)] * 2


def test_modify_items_moves_a_gift_cards_balance_by_the_difference() -> None:
    pending = order()
    item = pending.items[0]
    cheaper = min(
        (v for v in SHOP.products[item.product_id].variants.values() if v.available and v.item_id != item.item_id),
        key=lambda v: v.price,
    )
    write = actions.modify_pending_order_items(
        pending, owner(pending), SHOP.products, [item.item_id], [cheaper.item_id], GIFT_CARD
    )
    balance = write.changes[1].new.payment_methods[GIFT_CARD].balance
    assert balance == round(66.0 - (cheaper.price - item.price), 2)


def test_modify_items_only_once_and_only_while_pending() -> None:
    refused(
        "not_pending",
        actions.modify_pending_order_items,
        order(status="processed"),
        owner(order()),
        SHOP.products,
        *swap_args(order()),
        CARD,
    )


def test_modify_items_only_items_the_order_holds_as_often_as_it_holds_them() -> None:
    pending, user = order(), owner(order())
    item = pending.items[0]
    refused(
        "item_not_in_order",
        actions.modify_pending_order_items,
        pending,
        user,
        SHOP.products,
        ["1111111111"],
        [other_variant(item).item_id],
        CARD,
    )
    refused(
        "item_not_in_order",
        actions.modify_pending_order_items,
        pending,
        user,
        SHOP.products,
        [item.item_id, item.item_id],
        [other_variant(item).item_id] * 2,
        CARD,
    )
    refused("no_items", actions.modify_pending_order_items, pending, user, SHOP.products, [], [], CARD)


def test_modify_items_one_new_item_for_each_and_never_the_same_one() -> None:
    pending, user = order(), owner(order())
    old, new = swap_args(pending)
    refused("count_mismatch", actions.modify_pending_order_items, pending, user, SHOP.products, old, new * 2, CARD)
    refused("same_item", actions.modify_pending_order_items, pending, user, SHOP.products, old, old, CARD)


def test_modify_items_only_to_an_available_variant_of_the_same_product() -> None:
    pending, user = order(), owner(order())
    chair, other = pending.items[2], pending.items[0]  # an office chair; something else
    refused(
        "not_same_product",
        actions.modify_pending_order_items,
        pending,
        user,
        SHOP.products,
        [chair.item_id],
        [other_variant(other).item_id],
        CARD,
    )
    refused(
        "variant_unavailable",
        actions.modify_pending_order_items,
        pending,
        user,
        SHOP.products,
        [chair.item_id],
        [other_variant(chair, available=False).item_id],
        CARD,
    )


def test_modify_items_with_the_customers_own_payment_method_and_a_gift_card_that_covers_it() -> None:
    pending, user = order(), owner(order())
    old, new = swap_args(pending)
    refused(
        "not_your_payment_method",
        actions.modify_pending_order_items,
        pending,
        user,
        SHOP.products,
        old,
        new,
        "paypal_8049766",
    )  # Olivia's
    poor = user.model_copy(
        update={
            "payment_methods": {
                **user.payment_methods,
                GIFT_CARD: user.payment_methods[GIFT_CARD].model_copy(update={"balance": 0.0}),
            }
        }
    )
    chair = pending.items[2]
    dearer = max((v for v in SHOP.products[chair.product_id].variants.values() if v.available), key=lambda v: v.price)
    assert dearer.price > chair.price
    refused(
        "gift_card_insufficient",
        actions.modify_pending_order_items,
        pending,
        poor,
        SHOP.products,
        [chair.item_id],
        [dearer.item_id],
        GIFT_CARD,
    )


def test_modify_address_changes_only_the_address() -> None:
    pending = order()
    address = data.Address(address1="1 Main St", address2="", city="Austin", country="USA", state="TX", zip="73301")
    write = actions.modify_pending_order_address(pending, address)
    assert write.changes[0].new == pending.model_copy(update={"address": address})
    assert len(write.changes) == 1
    refused("not_pending", actions.modify_pending_order_address, order(status="delivered"), address)


def test_modify_payment_pays_with_the_new_method_and_refunds_the_old() -> None:
    pending = order()
    write = actions.modify_pending_order_payment(pending, owner(pending), CARD)
    assert write.changes[0].new.payment_history[1:] == [
        data.Payment(transaction_type="payment", amount=2492.53, payment_method_id=CARD),
        data.Payment(transaction_type="refund", amount=2492.53, payment_method_id=PAYPAL),
    ]


def test_modify_payment_to_another_own_method_that_can_pay_all_of_it() -> None:
    pending, user = order(), owner(order())
    refused("same_payment_method", actions.modify_pending_order_payment, pending, user, PAYPAL)
    refused("not_your_payment_method", actions.modify_pending_order_payment, pending, user, "gift_card_7794233")
    refused("gift_card_insufficient", actions.modify_pending_order_payment, pending, user, GIFT_CARD)
    twice = order(payment_history=[*pending.payment_history, *pending.payment_history])
    refused("not_one_payment", actions.modify_pending_order_payment, twice, user, CARD)


def test_modify_payment_from_a_gift_card_gives_it_back_and_to_one_takes_from_it() -> None:
    small = order(payment_history=[data.Payment(transaction_type="payment", amount=20.0, payment_method_id=GIFT_CARD)])
    back = actions.modify_pending_order_payment(small, owner(small), CARD).changes[1].new
    assert back.payment_methods[GIFT_CARD].balance == 86.0
    cheap = order(payment_history=[data.Payment(transaction_type="payment", amount=20.0, payment_method_id=PAYPAL)])
    taken = actions.modify_pending_order_payment(cheap, owner(cheap), GIFT_CARD).changes[1].new
    assert taken.payment_methods[GIFT_CARD].balance == 46.0


def test_modify_user_address() -> None:
    user = owner(order())
    address = user.address.model_copy(update={"zip": "99999"})
    write = actions.modify_user_address(user, address)
    assert write.changes[0].new.address.zip == "99999" and write.result["address"]["zip"] == "99999"


# ---- return and exchange -----------------------------------------------------------------------


def test_return_records_the_items_and_where_the_refund_goes() -> None:
    delivered = order(DELIVERED)
    items = sorted(i.item_id for i in delivered.items)
    new = actions.return_delivered_order_items(delivered, owner(delivered), items[::-1], "gift_card_7794233")
    order_after = new.changes[0].new
    assert (order_after.status, order_after.return_items) == ("return requested", items)
    assert order_after.return_payment_method_id == "gift_card_7794233"
    assert order_after.payment_history == delivered.payment_history  # the refund comes when the items do


def test_return_only_delivered_only_its_items_and_refund_to_the_original_or_a_gift_card() -> None:
    delivered, user = order(DELIVERED), owner(order(DELIVERED))
    item = delivered.items[0].item_id
    refused(
        "not_delivered",
        actions.return_delivered_order_items,
        order(DELIVERED, status="processed"),
        user,
        [item],
        "paypal_8049766",
    )
    refused("bad_refund_method", actions.return_delivered_order_items, delivered, user, [item], "credit_card_9753331")
    refused("not_your_payment_method", actions.return_delivered_order_items, delivered, user, [item], GIFT_CARD)
    refused("item_not_in_order", actions.return_delivered_order_items, delivered, user, [item, item], "paypal_8049766")
    refused("no_items", actions.return_delivered_order_items, delivered, user, [], "paypal_8049766")


def test_exchange_records_old_and_new_items_and_the_price_difference() -> None:
    delivered = order(DELIVERED)
    old, new = swap_args(delivered, 2)
    write = actions.exchange_delivered_order_items(
        delivered, owner(delivered), SHOP.products, old, new, "paypal_8049766"
    )
    after = write.changes[0].new
    assert after.status == "exchange requested"
    assert (after.exchange_items, after.exchange_new_items) == (sorted(old), sorted(new))
    difference = sum(
        SHOP.products[i.product_id].variants[n].price - i.price for i, n in zip(delivered.items, new, strict=False)
    )
    assert after.exchange_price_difference == round(difference, 2)
    assert after.items == delivered.items and write.changes[1].new == write.changes[1].old  # nothing paid yet


def test_exchange_follows_the_same_rules_as_modifying_items() -> None:
    delivered, user = order(DELIVERED), owner(order(DELIVERED))
    old, new = swap_args(delivered)
    pay = "paypal_8049766"
    refused(
        "not_delivered",
        actions.exchange_delivered_order_items,
        order(DELIVERED, status="pending"),
        user,
        SHOP.products,
        old,
        new,
        pay,
    )
    refused("same_item", actions.exchange_delivered_order_items, delivered, user, SHOP.products, old, old, pay)
    refused("count_mismatch", actions.exchange_delivered_order_items, delivered, user, SHOP.products, old, [], pay)
    refused(
        "item_not_in_order", actions.exchange_delivered_order_items, delivered, user, SHOP.products, ["1"], new, pay
    )
    refused(
        "not_same_product",
        actions.exchange_delivered_order_items,
        delivered,
        user,
        SHOP.products,
        old,
        [other_variant(delivered.items[1]).item_id],
        pay,
    )
    refused(
        "variant_unavailable",
        actions.exchange_delivered_order_items,
        delivered,
        user,
        SHOP.products,
        old,
        [other_variant(delivered.items[0], available=False).item_id],
        pay,
    )
    refused(
        "not_your_payment_method",
        actions.exchange_delivered_order_items,
        delivered,
        user,
        SHOP.products,
        old,
        new,
        PAYPAL,
    )


def test_an_exchange_paid_by_gift_card_must_be_covered_by_it() -> None:
    delivered, user = order(DELIVERED), owner(order(DELIVERED))
    item = delivered.items[0]
    dearest = max((v for v in SHOP.products[item.product_id].variants.values() if v.available), key=lambda v: v.price)
    assert dearest.price - item.price > 56.0
    refused(
        "gift_card_insufficient",
        actions.exchange_delivered_order_items,
        delivered,
        user,
        SHOP.products,
        [item.item_id],
        [dearest.item_id],
        "gift_card_7794233",
    )


# ---- reads and lookups ---------------------------------------------------------------------


def test_unknown_products_items_and_customers_are_refusals() -> None:
    refused("no_such_product", actions.product_details, None, "123")
    refused("no_such_item", actions.item_details, None, "123")
    refused("user_not_found", actions.found_user, None)
    assert actions.found_user("x_1") == "x_1"


# ---- calculate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("652.61 + 473.43", "1126.04"),
        ("2623.69 - 1126.04", "1497.65"),
        ("2 + 3", "5.0"),
        ("2 + 3 * 4", "14.0"),
        ("(2 + 3) * 4", "20.0"),
        ("10 / 4", "2.5"),
        ("10 / 3", "3.33"),
        ("-3 + 5", "2.0"),
        ("2 * -3", "-6.0"),
        ("--2", "2.0"),
        (".5 + 5.", "5.5"),
        ("8 - 2 - 1", "5.0"),
        ("16 / 4 / 2", "2.0"),
        (" ( ( 1 ) ) ", "1.0"),
    ],
)
def test_calculate_gives_what_tau2s_calculator_gives(expression: str, value: str) -> None:
    assert actions.calculate(expression) == value
    assert str(round(float(eval(expression, {"__builtins__": None}, {})), 2)) == value  # noqa: S307 - the reference


@pytest.mark.parametrize(
    ("expression", "code"),
    [
        ("", "bad_expression"),
        ("2 +", "bad_expression"),
        ("(2 + 3", "bad_expression"),
        ("2 + 3)", "bad_expression"),
        ("2 ** 3", "bad_expression"),
        ("2 // 3", "bad_expression"),
        ("1.2.3", "bad_expression"),
        ("2 3", "bad_expression"),
        ("__import__('os')", "bad_expression"),
        ("1e5", "bad_expression"),
        ("2\t+ 3", "bad_expression"),
        ("1 / 0", "division_by_zero"),
        ("1 / (2 - 2)", "division_by_zero"),
        ("9" * 200, "out_of_range"),
        ("(" * 40 + "1" + ")" * 40, "bad_expression"),
        ("1+" * 101 + "1", "bad_expression"),
    ],
)
def test_calculate_refuses_what_is_not_arithmetic(expression: str, code: str) -> None:
    refused(code, actions.calculate, expression)


def test_a_huge_product_is_out_of_range_not_infinity() -> None:
    refused("out_of_range", actions.calculate, " * ".join(["9" * 60] * 3))
