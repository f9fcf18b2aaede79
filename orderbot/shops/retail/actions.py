"""What each retail tool does, as pure functions of the records it needs: no store, no I/O.

A read returns the data the model sees. A write returns a `Write`: the records it changes
(each new version with the old one it was computed from, so a store can refuse it when
a record changed meanwhile) and the result the tool returns. Every rule of the shop's
policy that a program can check is checked here, before anyone is asked to approve, and
refused with a `ToolError` whose code is stable (docs/retail.md has the table):

    no_access                  the order is not the signed-in customer's (or does not exist:
                               one answer for both, so a stranger learns nothing)
    not_pending                cancel or modify an order that is not pending
    already_modified           the order's items were modified: it can be neither modified nor
                               cancelled any more
    bad_reason                 a cancellation's reason is not one of REASONS
    not_delivered              return or exchange an order that is not delivered
    no_items                   an empty list of items to modify, return or exchange
    item_not_in_order          an item (or more copies of it) than the order holds
    count_mismatch             not one new item for each old one
    same_item                  an item "changed" to itself
    not_same_product           the new item is not a variant of the old item's product
    variant_unavailable        the new item is not available
    not_your_payment_method    a payment method the customer does not have
    gift_card_insufficient     a gift card that cannot cover what it would pay
    same_payment_method        a new payment method that is the current one
    not_one_payment            a payment change on an order whose history is not one payment
    bad_refund_method          a refund to neither the original payment method nor a gift card
    bad_expression, division_by_zero, out_of_range    calculate

The effects are exactly those of tau2-bench's retail tools: the statuses they leave, the
refund entries they append to the payment history, how gift-card balances move, price
differences, rounding to cents. Where tau2's tool accepts what its policy forbids, the
policy wins, and the difference is named where it is checked (an order whose items were
modified, an exchange of an item for itself, an empty list of items).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from orderbot.errors import ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.retail.data import (
    Address,
    GiftCard,
    Order,
    OrderItem,
    Payment,
    Product,
    User,
    Variant,
    cents,
    dump,
)
from orderbot.shops.retail.store import Change, Write

REASONS = ("no longer needed", "ordered by mistake")
PENDING = "pending"
ITEMS_MODIFIED = "pending (item modified)"
DELIVERED = "delivered"
MAX_EXPRESSION_CHARS = 200
MAX_NESTING = 32
MAX_VALUE = 1e15  # past this a calculation is not about a shop's money; nor is it exact any more

# One refusal for "someone else's order" and "no such order".
NO_ACCESS = to_model("no_access")


# ---- who may see what ------------------------------------------------------------------


def owned_order(order: Order | None, customer: str) -> Order:
    """The order if it is the customer's; otherwise the same refusal whether or not it exists."""
    if order is None or order.user_id != customer:
        raise ToolError(NO_ACCESS, "no_access")
    return order


def order_details(order: Order) -> dict:
    return dump(order)


def user_details(user: User) -> dict:
    return dump(user)


def product_details(product: Product | None, product_id: str) -> dict:
    if product is None:
        raise ToolError(to_model("no_such_product", product_id=product_id), "no_such_product")
    return dump(product)


def item_details(variant: Variant | None, item_id: str) -> dict:
    if variant is None:
        raise ToolError(to_model("no_such_item", item_id=item_id), "no_such_item")
    return dump(variant)


def found_user(user_id: str | None) -> str:
    """A lookup's answer: the user id, or a refusal that says no more than "not found"."""
    if user_id is None:
        raise ToolError(to_model("user_not_found"), "user_not_found")
    return user_id


# ---- the checks every write shares --------------------------------------------------------


def ensure_pending(order: Order, action: str) -> None:
    if order.status == ITEMS_MODIFIED:
        # tau2's tools still change the address or payment of such an order; its policy says
        # that after modifying items "the agent will not be able to modify or cancel the order".
        raise ToolError(
            to_model("already_modified", order_id=order.order_id, action=action),
            "already_modified",
        )
    if order.status != PENDING:
        raise ToolError(
            to_model("not_pending", order_id=order.order_id, status=order.status, action=action), "not_pending"
        )


def ensure_delivered(order: Order, action: str) -> None:
    if order.status != DELIVERED:
        raise ToolError(
            to_model("not_delivered", order_id=order.order_id, status=order.status, action=action), "not_delivered"
        )


def payment_method(user: User, payment_method_id: str):
    method = user.payment_methods.get(payment_method_id)
    if method is None:
        raise ToolError(
            to_model("not_your_payment_method", payment_method_id=payment_method_id),
            "not_your_payment_method",
        )
    return method


def ensure_covers(method, amount: float, what: str) -> None:
    """A gift card pays only what its balance covers (compared at cents)."""
    if isinstance(method, GiftCard) and cents(method.balance) < cents(amount):
        raise ToolError(
            to_model("gift_card_insufficient", method_id=method.id, balance=method.balance, amount=amount, what=what),
            "gift_card_insufficient",
        )


def ensure_items_in_order(order: Order, item_ids: Sequence[str]) -> None:
    """Each item, as many times as it is listed, among the order's items."""
    if not item_ids:
        raise ToolError(to_model("no_items"), "no_items")
    held = [item.item_id for item in order.items]
    for item_id in dict.fromkeys(item_ids):
        if item_ids.count(item_id) > held.count(item_id):
            times = held.count(item_id)
            raise ToolError(
                to_model(
                    "item_not_in_order",
                    order_id=order.order_id,
                    item_id=item_id,
                    held=times,
                    asked=item_ids.count(item_id),
                ),
                "item_not_in_order",
            )


def first_item(items: Sequence[OrderItem], item_id: str) -> OrderItem:
    return next(item for item in items if item.item_id == item_id)


def priced_swaps(
    order: Order, products: Mapping[str, Product], item_ids: Sequence[str], new_item_ids: Sequence[str]
) -> tuple[float, Variant]:
    """Check each old item → new item and return the price difference (new − old, summed)
    and the last new variant. Each new item must be an available variant of the same
    product as the item it replaces, and a different one."""
    ensure_items_in_order(order, item_ids)
    if len(item_ids) != len(new_item_ids):
        raise ToolError(
            to_model("count_mismatch", items=len(item_ids), new_items=len(new_item_ids)),
            "count_mismatch",
        )
    difference = 0.0
    variant: Variant | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if item_id == new_item_id:
            raise ToolError(to_model("same_item", item_id=item_id), "same_item")
        item = first_item(order.items, item_id)
        product = products.get(item.product_id)
        variant = product.variants.get(new_item_id) if product is not None else None
        if variant is None:
            raise ToolError(
                to_model("not_same_product", new_item_id=new_item_id, name=item.name, product_id=item.product_id),
                "not_same_product",
            )
        if not variant.available:
            raise ToolError(
                to_model("variant_unavailable", item_id=new_item_id, name=item.name),
                "variant_unavailable",
            )
        difference += variant.price - item.price
    assert variant is not None  # ensure_items_in_order refused an empty list
    return difference, variant


def with_balance(user: User, changes: Mapping[str, float]) -> User:
    """The user with each listed gift card's balance moved by its amount, at cents."""
    methods = dict(user.payment_methods)
    for method_id, delta in changes.items():
        method = methods[method_id]
        if isinstance(method, GiftCard):
            methods[method_id] = method.model_copy(update={"balance": cents(method.balance + delta)})
    return user.model_copy(update={"payment_methods": methods})


def order_write(old: Order, new: Order, user: User | None = None, new_user: User | None = None) -> Write:
    """The write of an order change, pinning the customer's record too when the change read
    a payment method (its ownership, a gift card's balance), so a concurrent change to them
    refuses it."""
    changes = [Change(old, new)]
    if user is not None:
        changes.append(Change(user, new_user if new_user is not None else user))
    return Write(tuple(changes), dump(new))


# ---- the writes ------------------------------------------------------------------------


def cancel_pending_order(order: Order, user: User, reason: str) -> Write:
    """Status `cancelled` with the reason; each payment refunded to its method (a gift card
    gets its balance back at once)."""
    ensure_pending(order, "cancelled")
    if reason not in REASONS:
        raise ToolError(to_model("bad_reason", first=REASONS[0], second=REASONS[1]), "bad_reason")
    refunds = []
    moves: dict[str, float] = {}
    for payment in order.payment_history:
        method = payment_method(user, payment.payment_method_id)
        refunds.append(Payment(transaction_type="refund", amount=payment.amount, payment_method_id=method.id))
        moves[method.id] = moves.get(method.id, 0.0) + payment.amount
    new = order.model_copy(
        update={
            "status": "cancelled",
            "cancel_reason": reason,
            "payment_history": [*order.payment_history, *refunds],
        }
    )
    return order_write(order, new, user, with_balance(user, moves))


def modify_pending_order_address(order: Order, address: Address) -> Write:
    ensure_pending(order, "modified")
    return order_write(order, order.model_copy(update={"address": address}))


def modify_pending_order_items(
    order: Order,
    user: User,
    products: Mapping[str, Product],
    item_ids: Sequence[str],
    new_item_ids: Sequence[str],
    payment_method_id: str,
) -> Write:
    """Each item to another variant of its product, once per order: status `pending (item
    modified)`, the price difference paid by (or refunded to) the given method."""
    ensure_pending(order, "modified")
    difference, last_variant = priced_swaps(order, products, item_ids, new_item_ids)
    method = payment_method(user, payment_method_id)
    ensure_covers(method, difference, "the new items")
    entry = Payment(
        transaction_type="payment" if difference > 0 else "refund",
        amount=cents(abs(difference)),
        payment_method_id=payment_method_id,
    )
    # As tau2's tool does: each listed item, in turn, is the first one still holding its
    # old id; it takes its new id and the price and options of the *last* new variant (the
    # tool's loop reuses its last `variant`). tau2's end states are computed so.
    items = list(order.items)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        index = next(i for i, item in enumerate(items) if item.item_id == item_id)
        items[index] = items[index].model_copy(
            update={"item_id": new_item_id, "price": last_variant.price, "options": dict(last_variant.options)}
        )
    new = order.model_copy(
        update={"items": items, "status": ITEMS_MODIFIED, "payment_history": [*order.payment_history, entry]}
    )
    return order_write(order, new, user, with_balance(user, {payment_method_id: -difference}))


def modify_pending_order_payment(order: Order, user: User, payment_method_id: str) -> Write:
    """Pay the order with another method: a payment by the new one, a refund to the old one
    (gift-card balances move at once), status unchanged."""
    ensure_pending(order, "modified")
    method = payment_method(user, payment_method_id)
    history = order.payment_history
    if len(history) != 1 or history[0].transaction_type != "payment":
        raise ToolError(to_model("not_one_payment", order_id=order.order_id), "not_one_payment")
    original = history[0]
    if original.payment_method_id == payment_method_id:
        raise ToolError(
            to_model("same_payment_method", order_id=order.order_id, payment_method_id=payment_method_id),
            "same_payment_method",
        )
    ensure_covers(method, original.amount, f"order {order.order_id}")
    old_method = payment_method(user, original.payment_method_id)
    new = order.model_copy(
        update={
            "payment_history": [
                *history,
                Payment(transaction_type="payment", amount=original.amount, payment_method_id=payment_method_id),
                Payment(transaction_type="refund", amount=original.amount, payment_method_id=old_method.id),
            ]
        }
    )
    moves = {payment_method_id: -original.amount}
    moves[old_method.id] = moves.get(old_method.id, 0.0) + original.amount
    return order_write(order, new, user, with_balance(user, moves))


def modify_user_address(user: User, address: Address) -> Write:
    new = user.model_copy(update={"address": address})
    return Write((Change(user, new),), dump(new))


def return_delivered_order_items(order: Order, user: User, item_ids: Sequence[str], payment_method_id: str) -> Write:
    """Status `return requested`, the items (sorted) and where the refund goes: the original
    payment method or one of the customer's gift cards."""
    ensure_delivered(order, "returned")
    method = payment_method(user, payment_method_id)
    original = order.payment_history[0].payment_method_id if order.payment_history else None
    if not isinstance(method, GiftCard) and payment_method_id != original:
        raise ToolError(
            to_model("bad_refund_method", original=original),
            "bad_refund_method",
        )
    ensure_items_in_order(order, item_ids)
    new = order.model_copy(
        update={
            "status": "return requested",
            "return_items": sorted(item_ids),
            "return_payment_method_id": payment_method_id,
        }
    )
    return order_write(order, new, user)


def exchange_delivered_order_items(
    order: Order,
    user: User,
    products: Mapping[str, Product],
    item_ids: Sequence[str],
    new_item_ids: Sequence[str],
    payment_method_id: str,
) -> Write:
    """Status `exchange requested`, old and new items (each sorted), the payment method and
    the price difference (at cents; nothing is charged until the exchange is processed)."""
    ensure_delivered(order, "exchanged")
    difference, _ = priced_swaps(order, products, item_ids, new_item_ids)
    difference = cents(difference)
    method = payment_method(user, payment_method_id)
    ensure_covers(method, difference, "the price difference")
    new = order.model_copy(
        update={
            "status": "exchange requested",
            "exchange_items": sorted(item_ids),
            "exchange_new_items": sorted(new_item_ids),
            "exchange_payment_method_id": payment_method_id,
            "exchange_price_difference": difference,
        }
    )
    return order_write(order, new, user)


# ---- calculate ---------------------------------------------------------------------------


def calculate(expression: str) -> str:
    """The value of `expression` (numbers, + - * /, parentheses, spaces), rounded to cents and
    written as tau2 writes it (str of a float: '5.0', '1126.04'). A small recursive-descent
    parser: nothing is ever evaluated as code, and length and nesting are bounded."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(to_model("expression_too_long", chars=MAX_EXPRESSION_CHARS), "bad_expression")
    value = _Parser(expression).parse()
    return str(round(value, 2))


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0

    def parse(self) -> float:
        if not self.tokens:
            raise ToolError(to_model("expression_empty"), "bad_expression")
        value = self.sum()
        if self.at != len(self.tokens):
            raise ToolError(to_model("expression_unexpected", token=self.tokens[self.at]), "bad_expression")
        return value

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ToolError(to_model("expression_ends_early"), "bad_expression")
        self.at += 1
        return token

    def sum(self) -> float:
        value = self.product()
        while self.peek() in ("+", "-"):
            operator = self.take()
            term = self.product()
            value = _finite(value + term if operator == "+" else value - term)
        return value

    def product(self) -> float:
        value = self.factor()
        while self.peek() in ("*", "/"):
            operator = self.take()
            operand = self.factor()
            if operator == "/" and operand == 0:
                raise ToolError(to_model("division_by_zero"), "division_by_zero")
            value = _finite(value * operand if operator == "*" else value / operand)
        return value

    def factor(self) -> float:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ToolError(to_model("expression_too_deep", depth=MAX_NESTING), "bad_expression")
        try:
            token = self.take()
            if token in ("+", "-"):
                value = self.factor()
                return value if token == "+" else -value
            if token == "(":
                value = self.sum()
                if self.take() != ")":
                    raise ToolError(to_model("parenthesis_not_closed"), "bad_expression")
                return value
            if token[0].isdigit() or token[0] == ".":
                return _finite(float(token))
            raise ToolError(to_model("expression_unexpected", token=token), "bad_expression")
        finally:
            self.depth -= 1


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    at = 0
    while at < len(text):
        ch = text[at]
        if ch == " ":
            at += 1
        elif ch in "+-*/()":
            tokens.append(ch)
            at += 1
        elif ch in "0123456789.":
            end = at
            while end < len(text) and text[end] in "0123456789.":
                end += 1
            number = text[at:end]
            if number.count(".") > 1 or number == ".":
                raise ToolError(to_model("not_a_number", number=number), "bad_expression")
            tokens.append(number)
            at = end
        else:
            raise ToolError(to_model("expression_characters"), "bad_expression")
    return tokens


def _finite(value: float) -> float:
    if not math.isfinite(value) or abs(value) > MAX_VALUE:
        raise ToolError(to_model("out_of_range", limit=MAX_VALUE), "out_of_range")
    return value
