"""What the model reads from orderbot itself: the fixed English of every tool error, every
refusal of dispatch and the hand-off's answer, in one place.

It is the model's input, not a person's: it never changes with the UI language, and a copy
edit of what people read (orderbot/i18n/catalogue.py) cannot reach it. A change here is a
change of what every model is told, made on purpose: tests/loop/test_model_text.py pins the
whole table. A person reads these only where a tool's own words are shown as the model got
them (the trace's "why", a refused resume); what people read about a failure is said from its
code (orderbot.ui).

    to_model("unknown_tool", name="'delete_all_orders'")   # -> "tool 'delete_all_orders' is not available"

Values are filled in with `str.format`, so a value is never read as a placeholder.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    # ---- dispatch and the engine: refusals, and calls that never ran ----
    "unknown_tool": "tool {name} is not available",
    "invalid_json": "arguments are not valid JSON",
    "sign_in": "this needs a signed-in user: sign in with --user",
    "sign_in_or_find": "this needs a signed-in customer: sign in with --user, "
    "or find the customer first with {lookups}",
    "internal": "the tool failed unexpectedly; the error was logged",
    "one_customer": "these details are not the signed-in customer's: a conversation is about one customer only; "
    "nothing about anyone else can be shown or changed",
    "rejected": "the person did not approve this action; nothing was done",
    "not_executed": "this call was not executed: the run stopped at a limit before it ran",
    # ---- the hand-off: what the model is told once a person has the conversation ----
    "transferred": "Transfer successful",
    # ---- both shops: whose data, and a store that cannot change anything right now ----
    "no_access": "no order with this id belongs to the signed-in customer; nothing about it can be shown or changed",
    "not_in_shop": "the signed-in customer is not in this shop; nothing about them can be shown or changed",
    "write_failed": "the change could not be saved; nothing was changed",
    # ---- the sample shop ----
    "sample_read_only": "the orders bundled with orderbot are a read-only sample; nothing was changed. "
    "Pass --orders with your own orders file to make changes",
    "not_cancellable": "order {order_id} is {status}; only orders that are {allowed} can be cancelled",
    "orders_file_busy": "the orders file is busy with another change; nothing was changed, try again",
    "orders_file_unreadable": "the orders file cannot be read right now; nothing was changed",
    "orders_db_unavailable": "the orders database cannot be used right now; nothing was changed",
    "orders_db_timed_out": "the orders database did not answer within the run's time limit; nothing was changed",
    "orders_db_busy": "the orders database is busy with another change; nothing was changed, try again",
    "order_changed": "order {order_id} changed while it was being cancelled; nothing was changed",
    # ---- the retail shop: its stores ----
    "shop_read_only": "this shop was opened read-only; nothing was changed",
    "shop_file_busy": "the shop file is busy with another change; nothing was changed, try again",
    "shop_file_unreadable": "the shop file cannot be read right now; nothing was changed",
    "shop_db_unavailable": "the shop's database cannot be used right now; nothing was changed",
    "shop_db_timed_out": "the shop's database did not answer within the run's time limit; nothing was changed",
    "shop_db_busy": "the shop's database is busy with another change; nothing was changed, try again",
    "changed_meanwhile": "the record changed after it was read, before this change could be saved; nothing was changed",
    "record_changed": "{key} changed while this was being done; nothing was changed, look it up again",
    # ---- the retail shop: its policy ----
    "no_such_product": "there is no product {product_id}; a product id is not an item id",
    "no_such_item": "there is no item {item_id}; an item id is not a product id",
    "user_not_found": "no customer matches these details",
    "already_modified": "the items of order {order_id} were already modified; it cannot be {action} any more",
    "not_pending": "order {order_id} is {status}; only a pending order can be {action}",
    "not_delivered": "order {order_id} is {status}; only a delivered order can be {action}",
    "not_your_payment_method": "{payment_method_id} is not one of the customer's payment methods",
    "gift_card_insufficient": "gift card {method_id} has {balance:.2f}, not enough to pay {amount:.2f} for {what}",
    "no_items": "name at least one item of the order",
    "item_not_in_order": "order {order_id} holds item {item_id} {held} time(s), not {asked}",
    "count_mismatch": "{items} item(s) to change but {new_items} new item(s): give one new item for each",
    "same_item": "item {item_id} would be changed to itself; choose another option",
    "not_same_product": "item {new_item_id} is not a variant of {name} (product {product_id}); "
    "an item can only change to another option of the same product",
    "variant_unavailable": "item {item_id} ({name}) is not available",
    "bad_reason": "the reason must be {first!r} or {second!r}",
    "not_one_payment": "order {order_id} has more than its one payment; its payment method cannot be changed",
    "same_payment_method": "order {order_id} is already paid with {payment_method_id}",
    "bad_refund_method": "a refund goes to the original payment method ({original}) "
    "or one of the customer's gift cards",
    "plain_text": "must be plain text: no control or format characters",
    "plain_id": "an id is plain text without a space at either end",
    # ---- the retail shop: its calculator ----
    "expression_too_long": "an expression has at most {chars} characters",
    "expression_empty": "the expression is empty",
    "expression_unexpected": "unexpected {token!r} in the expression",
    "expression_ends_early": "the expression ends too early",
    "division_by_zero": "division by zero",
    "expression_too_deep": "the expression nests more than {depth} deep",
    "parenthesis_not_closed": "a parenthesis is not closed",
    "not_a_number": "{number!r} is not a number",
    "expression_characters": "an expression may hold only numbers, + - * /, parentheses and spaces",
    "out_of_range": "a number or result beyond {limit:.0e} is out of range",
}


def to_model(key: str, /, **values: object) -> str:
    """The model's sentence `key` (TEXTS), its values filled in."""
    return TEXTS[key].format(**values)
