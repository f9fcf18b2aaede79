"""orderbot's retail actions against tau2's own results: each of the 74 training tasks'
reference actions, applied through orderbot/shops/retail/actions.py to a fresh copy of
tau2's shop, changes exactly the records tau2's tools changed, to exactly the same values
(amounts at cents), and refuses exactly the calls tau2's tools refused.

The customer is bound the way a run binds it: from the start when the task says who the
customer is, else by the first successful lookup. Identity arguments of tau2's tools
(get_user_details and modify_user_address take a user_id) are not arguments in orderbot:
they must name the bound customer, and then the bound customer's record is used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orderbot.errors import ToolError
from orderbot.shops.retail import actions, data
from orderbot.shops.retail.store import Write

FIXTURES = Path(__file__).parents[2] / "fixtures" / "tau2-retail"
ORACLE = json.loads((FIXTURES / "expected-train.json").read_text(encoding="utf-8"))
SHOP = data.load_shop(FIXTURES / "db.json")

LOOKUPS = ("find_user_id_by_email", "find_user_id_by_name_zip")
ANYONE = (*LOOKUPS, "calculate", "transfer_to_human_agents")


class Shop:
    """A fresh copy of tau2's shop in memory (records are immutable: copying the dicts is enough)."""

    def __init__(self) -> None:
        self.sections = {section: dict(getattr(SHOP, section)) for section in data.SECTIONS}

    def apply(self, write: Write) -> None:
        for change in write.changes:
            section = self.sections[data.SECTION_OF[type(change.new)]]
            assert section[data.key_of(change.old)] == change.old, "a write computed from a stale record"
            section[data.key_of(change.new)] = change.new

    def changed(self) -> dict:
        changed: dict[str, dict] = {}
        for section, records in self.sections.items():
            for key, record in records.items():
                if record != getattr(SHOP, section)[key]:
                    changed.setdefault(section, {})[key] = data.dump(record)
        return changed

    def run(self, name: str, args: dict, customer: str | None):
        """One tool call through the pure actions, with the records it needs."""
        products, users, orders = (self.sections[section] for section in data.SECTIONS)
        if name == "find_user_id_by_email":
            email = args["email"].lower()
            return actions.found_user(next((u.user_id for u in users.values() if u.email.lower() == email), None))
        if name == "find_user_id_by_name_zip":
            match = (args["first_name"].lower(), args["last_name"].lower(), args["zip"])
            return actions.found_user(
                next(
                    (
                        u.user_id
                        for u in users.values()
                        if (u.name.first_name.lower(), u.name.last_name.lower(), u.address.zip) == match
                    ),
                    None,
                )
            )
        if name == "calculate":
            return actions.calculate(args["expression"])
        if name == "transfer_to_human_agents":
            return "transferred"
        if customer is None:
            raise ToolError("sign in first", "sign_in_required")
        if "user_id" in args:
            assert args.pop("user_id") == customer, "a reference action names another customer"
        user = users[customer]
        if name == "get_user_details":
            return actions.user_details(user)
        if name == "get_product_details":
            return actions.product_details(products.get(args["product_id"]), args["product_id"])
        if name == "get_item_details":
            variant = next(
                (p.variants[args["item_id"]] for p in products.values() if args["item_id"] in p.variants), None
            )
            return actions.item_details(variant, args["item_id"])
        if name == "list_all_product_types":
            return dict(sorted((p.name, p.product_id) for p in products.values()))
        if name == "modify_user_address":
            write = actions.modify_user_address(user, data.Address(**args))
            self.apply(write)
            return write.result
        order = actions.owned_order(orders.get(args.pop("order_id")), customer)
        if name == "get_order_details":
            return actions.order_details(order)
        write = self.write(name, order, user, products, args)
        self.apply(write)
        return write.result

    @staticmethod
    def write(name: str, order: data.Order, user: data.User, products: dict, args: dict) -> Write:
        if name == "cancel_pending_order":
            return actions.cancel_pending_order(order, user, args["reason"])
        if name == "modify_pending_order_address":
            return actions.modify_pending_order_address(order, data.Address(**args))
        if name == "modify_pending_order_payment":
            return actions.modify_pending_order_payment(order, user, args["payment_method_id"])
        if name == "return_delivered_order_items":
            return actions.return_delivered_order_items(order, user, args["item_ids"], args["payment_method_id"])
        swap = actions.modify_pending_order_items if name == "modify_pending_order_items" else None
        swap = swap or actions.exchange_delivered_order_items
        assert name in ("modify_pending_order_items", "exchange_delivered_order_items"), name
        return swap(order, user, products, args["item_ids"], args["new_item_ids"], args["payment_method_id"])


def at_cents(value):
    """tau2 keeps a few amounts unrounded (71.96000000000001); orderbot keeps every amount at cents."""
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {key: at_cents(item) for key, item in value.items()}
    if isinstance(value, list):
        return [at_cents(item) for item in value]
    return value


def replay(task: dict) -> tuple[Shop, list[str], list[str]]:
    """The task's reference actions in order: the shop after them, the refused tools' names,
    and each refusal's code."""
    shop = Shop()
    customer = None if task["authenticates"] else task["user"]
    refused, codes = [], []
    for action in task["actions"]:
        name, args = action["name"], json.loads(json.dumps(action["arguments"]))
        try:
            result = shop.run(name, args, customer)
        except ToolError as exc:
            refused.append(name)
            codes.append(exc.code)
            continue
        if name in LOOKUPS:
            assert customer in (None, result), "one customer per conversation"
            customer = result
    if task["authenticates"]:
        assert customer == task["user"]
    return shop, refused, codes


@pytest.mark.parametrize("task_id", sorted(ORACLE, key=int))
def test_the_reference_actions_reach_tau2s_end_state(task_id: str) -> None:
    task = ORACLE[task_id]
    shop, refused, _ = replay(task)
    assert refused == task["refused"]
    assert shop.changed() == at_cents(task["changed"])


def test_the_oracle_is_all_there() -> None:
    assert len(ORACLE) == 74
    writes = sum(task["writes"] for task in ORACLE.values())
    assert writes == sum(
        1
        for task in ORACLE.values()
        for a in task["actions"]
        if a["name"] not in ANYONE and a["name"][:3] != "get" and a["name"] != "list_all_product_types"
    )


def test_the_refusals_are_the_ones_tau2_makes_for_the_same_reasons() -> None:
    codes = {task_id: replay(task)[2] for task_id, task in ORACLE.items() if task["refused"]}
    assert codes == {
        "2": ["no_such_product"],
        "3": ["no_such_product"],
        "4": ["no_such_product"],
        "35": ["user_not_found"],
        "37": ["user_not_found"],
        "46": ["no_access", "no_access"],
        "47": ["no_access", "no_access"],
        "54": ["user_not_found"],
        "67": ["user_not_found", "user_not_found"],
        "105": ["gift_card_insufficient"],
    }
