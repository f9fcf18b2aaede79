"""Facts: what the tools returned in one run, one line per order, in orderbot's own words.

A person reading the model's answer cannot see the observations behind it; this module
renders them from the run's call records (never from the model's text), so the answer can
be checked against them at a glance. It is pure: call records in, `Fact` values out. The
same values feed the facts panel, the `facts` array of --json and the claim check
(orderbot.answers.claims).

    ORD-1001 · 已发货 · items: 西湖龙井 250g ×1, 玻璃茶杯 ×2 · total: ¥227.00 · shipping: 顺丰速运 …
    ORD-9999 · not found
    ORD-1003 · no access
    ORD-1006 · not cancellable: 已发货
    #W6390527 · delivered · … · exchange rejected: nothing was done

A call that acts (the shop's Vocabulary.actions) is named as the action it is, and as what
became of it: awaiting approval, rejected, done (a person approved it, or nothing had to) or
failed. One that concerns no order (a customer's address, a hand-off) is a fact about the
run's customer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from orderbot.loop.state import CallRecord, PendingCall, RunState
from orderbot.shops.shop import Vocabulary
from orderbot.text import cut

FIELD_CHARS = 80  # one field of a fact line; order data is outside text of any length

KNOWN_FAILURES = frozenset(
    (
        "no_access",
        "sign_in_required",
        "rejected",
        "read_only",
        "busy",
        "write_failed",
        "store_unavailable",
        "internal_error",
    )
)
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})")
# The failures an action's outcome names as that action ("exchange rejected: nothing was done").
ACTED_FAILURES = frozenset(("rejected", "read_only", "busy", "write_failed", "store_unavailable"))


# The subject of a fact about the customer rather than an order (an address change, a hand-off)
# when the run has no customer's id to name: a code, said as a word where it is shown.
CUSTOMER = "customer"


class Outcome(NamedTuple):
    """One thing that became of a call: a code (the catalogue's facts.<key> says it), and the
    action (a key of orderbot.shops.shop.ACTIONS, or the tool's own name) it befell, if any."""

    key: str
    action: str = ""


@dataclass
class Fact:
    """What this run learnt about one order."""

    order_id: str
    status: str | None = None  # the last status a tool returned; the shop's not_found for an unknown id
    fields: dict[str, str] = field(default_factory=dict)  # the details shown, as short text
    outcomes: list[Outcome] = field(default_factory=list)  # refusals, cancellations, actions
    failure: str = ""  # the error code behind a `failed` outcome
    no_access: bool = False
    cancelled: bool = False  # a cancel_order call for it executed and succeeded
    # Every amount the details named (total, prices, line totals, payments, refunds) and every
    # date they hold, for the claim check.
    amounts: list[float] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # the items' names, as the store writes them
    unknown: str = ""  # the status the shop gives an unknown id (Vocabulary.not_found), if it has one

    @property
    def not_found(self) -> bool:
        return bool(self.unknown) and self.status == self.unknown

    def as_dict(self) -> dict:
        """Codes and values (--json); orderbot.ui.facts says a fact as the panel's line."""
        return {
            "order_id": self.order_id,
            "status": self.status,
            "fields": dict(self.fields),
            "outcomes": [o.key for o in self.outcomes],
            "actions": [{"action": o.action, "outcome": o.key} for o in self.outcomes if o.action],
        }


def facts(
    calls: Iterable[CallRecord],
    pending: Iterable[PendingCall] = (),
    *,
    vocabulary: Vocabulary,
    customer: str | None = None,
) -> list[Fact]:
    """One Fact per order the run's tool calls touched, in the order they were first touched,
    read in the words of the run's shop; an action on no order (a customer's address, a
    hand-off) is a fact about `customer`. Calls that were never executed nor answered by a
    refusal (limits, bad arguments, unknown tools) say nothing about an order and are left out."""
    found: dict[str, Fact] = {}

    def fact(order_id: str) -> Fact:
        order_id = _text(order_id[:32])  # the model wrote it (or the store holds it): outside text
        return found.setdefault(order_id, Fact(order_id, unknown=vocabulary.not_found))

    def subject(order_id: str | None, action: str) -> str | None:
        return order_id or (customer or CUSTOMER if action else None)

    for call in calls:
        result = call.result or {}
        if call.decision in ("not_executed", "unknown_tool", "invalid_arguments") or not result:
            continue
        action = vocabulary.actions.get(call.name, "")
        order_id = _order_id(call.arguments)
        if result.get("ok"):
            _observe_ok(call.name, order_id, result.get("data"), fact, vocabulary)
            about = subject(order_id, action)
            if action and about:
                target = fact(about)
                target.cancelled = target.cancelled or action == "cancel"
                target.outcomes.append(Outcome("cancelled") if action == "cancel" else Outcome("done", action))
        elif about := subject(order_id, action):
            code, error = str(result.get("code", "")), str(result.get("error", ""))
            _observe_failure(call.name, fact(about), code, error, vocabulary, action)
    for waiting in pending:
        action = vocabulary.actions.get(waiting.name, "")
        about = subject(_order_id(waiting.arguments), action)
        if about:
            fact(about).outcomes.append(Outcome("pending", action or _text(waiting.name[:40])))
    return list(found.values())


def facts_of(state: RunState, vocabulary: Vocabulary) -> list[Fact]:
    return facts(state.calls, state.pending, vocabulary=vocabulary, customer=state.user)


def _observe_ok(name: str, order_id: str | None, data: object, fact, vocabulary: Vocabulary) -> None:
    data = data if isinstance(data, dict) else {}
    if name == "list_my_orders":
        for row in data.get("orders") or []:
            if isinstance(row, dict) and isinstance(row.get("order_id"), str):
                fact(row["order_id"]).status = _text(row.get("status"))
        return
    oid = data.get("order_id") if isinstance(data.get("order_id"), str) else order_id
    if not oid:
        return
    target = fact(oid)
    if "status" in data:
        target.status = _text(data.get("status"))
    if name == "get_order_details":
        target.fields.update(detail_fields(data, vocabulary))
    if isinstance(data.get("items"), list):  # a retail write returns the order
        target.amounts = detail_amounts(data)
        target.dates = sorted(set(DATE.findall(json.dumps(data))))
        target.items = [_text(i.get("name")) for i in data["items"] if isinstance(i, dict) and i.get("name")]


def _observe_failure(name: str, target: Fact, code: str, error: str, vocabulary: Vocabulary, action: str) -> None:
    if code == "not_cancellable":
        # The refusal names the order's status first, then the ones that could be cancelled.
        named = [s for s in vocabulary.statuses if s in error]
        status = min(named, key=error.find) if named else None
        if status:
            target.status = status
        target.outcomes.append(Outcome("not_cancellable"))
        return
    if code in ("no_access", "sign_in_required"):
        target.no_access = True
    if code == "store_unavailable" and not action:  # a lookup failed: nothing was done
        target.outcomes.append(Outcome("unreadable"))
    elif code in ACTED_FAILURES:  # only a call that acts is rejected or fails to write
        target.outcomes.append(Outcome(code, action or _text(name[:40])))
    elif code in KNOWN_FAILURES:
        target.outcomes.append(Outcome(code))
    else:
        target.outcomes.append(Outcome("failed", action))
        target.failure = _text(code[:40])


def detail_fields(data: dict, vocabulary: Vocabulary) -> dict[str, str]:
    """The fields of get_order_details a person checks an answer against."""
    out: dict[str, str] = {}
    items = [i for i in data.get("items") or [] if isinstance(i, dict)]
    if items:
        # A quantity where the shop has one (the retail shop lists each unit as an item of its own).
        out["items"] = _text(
            ", ".join(f"{i.get('name')} ×{i['quantity']}" if "quantity" in i else str(i.get("name")) for i in items)
        )
    if isinstance(data.get("total"), int | float) and isinstance(data.get("currency"), str):
        out["total"] = vocabulary.money(float(data["total"]), data["currency"])
    shipping = data.get("shipping") if isinstance(data.get("shipping"), dict) else {}
    where = " ".join(str(shipping[k]) for k in ("carrier", "tracking_number", "city") if shipping.get(k))
    if where:
        out["shipping"] = _text(where)
    if data.get("created_at"):
        out["created"] = _text(str(data["created_at"])[:10])
    if data.get("note"):
        out["note"] = _text(data["note"])
    return out


def detail_amounts(data: dict) -> list[float]:
    """The amounts an answer may quote from an order's details: the total (or, where the shop
    has none, the sum of its items' prices), each unit price, each line's quantity times its
    price, each payment and refund, and what a return or an exchange the tools planned
    moves: the returned items' prices together, the price difference."""
    amounts = [float(data["total"])] if isinstance(data.get("total"), int | float) else []
    items = [i for i in data.get("items") or [] if isinstance(i, dict)]
    prices: dict[str, float] = {}
    every: list[float] = []
    for item in items:
        price = item.get("unit_price", item.get("price"))
        if isinstance(price, int | float):
            amounts.append(float(price))
            every.append(float(price))
            prices.setdefault(str(item.get("item_id")), float(price))
            if isinstance(item.get("quantity"), int):
                amounts.append(round(price * item["quantity"], 2))
    if prices and "total" not in data:
        amounts.append(round(sum(every), 2))
    for payment in data.get("payment_history") or []:
        if isinstance(payment, dict) and isinstance(payment.get("amount"), int | float):
            amounts.append(abs(float(payment["amount"])))
    returned = [prices[str(i)] for i in data.get("return_items") or [] if str(i) in prices]
    if returned:
        amounts.append(round(sum(returned), 2))
    if isinstance(data.get("exchange_price_difference"), int | float):
        amounts.append(abs(float(data["exchange_price_difference"])))
    return amounts


def _order_id(arguments: str) -> str | None:
    try:
        value = json.loads(arguments).get("order_id")
    except (ValueError, AttributeError):
        return None
    return value[:32] if isinstance(value, str) else None


def _text(value: object) -> str:
    """Order data is outside text of any length: bounded here, and shown only through the
    views' escaping (orderbot.ui.escape), which is not this floor's to do."""
    return cut(value if isinstance(value, str) else str(value), FIELD_CHARS)
