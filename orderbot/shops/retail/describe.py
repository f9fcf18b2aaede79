"""What an approval shows for each retail write, as a Phrase said in the reader's language
where it is shown (orderbot.i18n.catalogue, `retail.*`): the order, each item old → new
with its price, the price difference and the payment method that pays it or gets it back,
where a refund goes, an address before → after. Pure: records in, one phrase out; the
tools (orderbot/shops/retail/tools.py) look the records up. Every value here is outside
text; the approval prompt shows it through orderbot.ui.escape.visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from orderbot.errors import Phrase
from orderbot.shops.retail.data import Address, CreditCard, GiftCard, Order, User, Variant
from orderbot.shops.retail.store import Write


def money(amount: float) -> str:
    return f"${amount:,.2f}"


def method(user: User | None, method_id: str) -> Phrase | str:
    """A payment method as a person recognises it, with its id."""
    found = user.payment_methods.get(method_id) if user is not None else None
    if isinstance(found, GiftCard):
        return Phrase("retail.gift_card", {"id": method_id, "balance": money(found.balance)})
    if isinstance(found, CreditCard):
        return Phrase("retail.credit_card", {"id": method_id, "brand": found.brand, "last_four": found.last_four})
    return Phrase("retail.paypal", {"id": method_id}) if found is not None else method_id


def address(where: Address) -> str:
    parts = (where.address1, where.address2, where.city, where.state, where.zip, where.country)
    return ", ".join(part for part in parts if part)


def options(of: Mapping[str, str]) -> str:
    return ", ".join(f"{key} {value}" for key, value in of.items())


def _user_of(write: Write) -> User | None:
    return next((c.old for c in write.changes if isinstance(c.old, User)), None)


def _orders(write: Write) -> tuple[Order, Order]:
    change = write.changes[0]
    return change.old, change.new  # type: ignore[return-value]


def cancel(write: Write) -> Phrase:
    old, new = _orders(write)
    user = _user_of(write)
    refunds = new.payment_history[len(old.payment_history) :]
    total = sum(p.amount for p in refunds)
    where = [
        Phrase("retail.refund_to", {"amount": money(p.amount), "method": method(user, p.payment_method_id)})
        for p in refunds
    ]
    return Phrase(
        "retail.cancel", {"order": old.order_id, "total": money(total), "reason": new.cancel_reason, "refunds": where}
    )


def order_address(write: Write) -> Phrase:
    old, new = _orders(write)
    return Phrase(
        "retail.order_address", {"order": old.order_id, "old": address(old.address), "new": address(new.address)}
    )


def user_address(write: Write) -> Phrase:
    change = write.changes[0]
    return Phrase(
        "retail.user_address",
        {"customer": change.old.user_id, "old": address(change.old.address), "new": address(change.new.address)},
    )


def swaps(
    order: Order, item_ids: Sequence[str], new_item_ids: Sequence[str], variants: Mapping[str, Variant]
) -> tuple[list[Phrase], float]:
    """Each old item → new item with their prices, and the price difference (new − old)."""
    lines, difference = [], 0.0
    for item_id, new_id in zip(item_ids, new_item_ids, strict=True):
        item = next(i for i in order.items if i.item_id == item_id)
        variant = variants[new_id]
        difference += variant.price - item.price
        lines.append(
            Phrase(
                "retail.swap",
                {
                    "name": item.name,
                    "old": item_id,
                    "old_options": options(item.options),
                    "old_price": money(item.price),
                    "new": new_id,
                    "new_options": options(variant.options),
                    "new_price": money(variant.price),
                },
            )
        )
    return lines, round(difference, 2)


def difference(amount: float, user: User | None, method_id: str) -> Phrase:
    if amount > 0:
        return Phrase("retail.pay_difference", {"amount": money(amount), "method": method(user, method_id)})
    if amount < 0:
        return Phrase("retail.refund_difference", {"amount": money(-amount), "method": method(user, method_id)})
    return Phrase("retail.no_difference")


def modify_items(write: Write, item_ids, new_item_ids, variants, method_id: str) -> Phrase:
    old, _ = _orders(write)
    listed, amount = swaps(old, item_ids, new_item_ids, variants)
    return Phrase(
        "retail.modify_items",
        {"order": old.order_id, "swaps": listed, "difference": difference(amount, _user_of(write), method_id)},
    )


def exchange(write: Write, item_ids, new_item_ids, variants, method_id: str) -> Phrase:
    old, _ = _orders(write)
    listed, amount = swaps(old, item_ids, new_item_ids, variants)
    return Phrase(
        "retail.exchange",
        {"order": old.order_id, "swaps": listed, "difference": difference(amount, _user_of(write), method_id)},
    )


def modify_payment(write: Write) -> Phrase:
    old, new = _orders(write)
    user = _user_of(write)
    paid, refunded = new.payment_history[-2:]
    return Phrase(
        "retail.payment",
        {
            "order": old.order_id,
            "amount": money(paid.amount),
            "new": method(user, paid.payment_method_id),
            "old": method(user, refunded.payment_method_id),
        },
    )


def return_items(write: Write, item_ids: Sequence[str], method_id: str) -> Phrase:
    old, _ = _orders(write)
    listed, total, remaining = [], 0.0, list(old.items)
    for item_id in item_ids:
        item = next(i for i in remaining if i.item_id == item_id)
        remaining.remove(item)
        total += item.price
        listed.append(
            Phrase(
                "retail.item",
                {"name": item.name, "id": item_id, "options": options(item.options), "price": money(item.price)},
            )
        )
    return Phrase(
        "retail.return",
        {
            "order": old.order_id,
            "items": listed,
            "amount": money(total),
            "method": method(_user_of(write), method_id),
        },
    )
