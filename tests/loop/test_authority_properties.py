"""Property: whatever the model says — random tool names, random JSON, random order ids,
smuggled identities — under any session user, no side effect happens without a person's
yes, and no other customer's data appears in any tool result.

max_examples stays modest (a few seconds in all) so the whole suite stays fast.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from fuzz import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.items import FunctionCall, FunctionCallOutput
from orderbot.loop.model import Turn
from orderbot.loop.state import PendingCall, RunState
from orderbot.models.scripted import ScriptedModel, text
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore
from orderbot.shops.sample.tools import order_tools

SAMPLE = JsonStore.load(SAMPLE_PATH)
ORDER_IDS = sorted(SAMPLE.orders) + ["ORD-9999", "ord-1002", "", "ORD-" + "9" * 40, "1002"]
USERS = [None, "C001", "C002", "C003", "C999"]
TOOL_NAMES = [
    "get_order_status",
    "get_order_details",
    "list_my_orders",
    "cancel_order",
    "delete_order",
    "cancel_orders",
    "CANCEL_ORDER",
    "__import__",
]


def private_strings(customer: str) -> set[str]:
    """What only the owner may learn about their orders."""
    found: set[str] = set()
    for order in SAMPLE.orders.values():
        if order.customer_id != customer:
            continue
        found.update(item.name for item in order.items)
        found.update(item.sku for item in order.items)
        if order.shipping and order.shipping.tracking_number:
            found.add(order.shipping.tracking_number)
        if order.note:
            found.add(order.note)
    return found


PRIVATE = {customer: private_strings(customer) for customer in ("C001", "C002", "C003")}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
identity = st.sampled_from(["C001", "C002", "C003"])
# Calls that look real (a known tool, an order id, sometimes a smuggled identity) ...
CANCELLABLE_IDS = sorted(o.order_id for o in SAMPLE.orders.values() if o.status in ("待付款", "处理中"))


def plausible_arguments(name: str) -> st.SearchStrategy[dict]:
    order_ids = st.one_of(
        st.sampled_from(CANCELLABLE_IDS), st.sampled_from(CANCELLABLE_IDS), st.sampled_from(ORDER_IDS)
    )
    fields = {} if name == "list_my_orders" else {"order_id": order_ids}
    if name == "cancel_order":
        fields["reason"] = st.sampled_from(["不想要了", "不想要了", "x", " ", "a" * 300])
    clean = st.fixed_dictionaries(fields)
    smuggled = st.fixed_dictionaries(fields, optional={"customer_id": identity, "user": identity})
    return st.one_of(clean, clean, clean, smuggled)


plausible_calls = st.sampled_from(TOOL_NAMES[:4] + ["cancel_order"] * 2).flatmap(
    lambda name: plausible_arguments(name).map(lambda args: (name, json.dumps(args, ensure_ascii=False)))
)
# ... and calls that do not: any name, any JSON, or no JSON at all.
wild_calls = st.tuples(
    st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=20)),
    st.one_of(json_values.map(json.dumps), st.text(max_size=30)),
)
function_calls = st.builds(
    lambda name_args, call_id: FunctionCall(call_id=call_id, name=name_args[0], arguments=name_args[1]),
    st.one_of(plausible_calls, plausible_calls, plausible_calls, wild_calls),
    st.sampled_from(["call_1", "call_2", "call_3", "call_4"]),  # models do reuse ids
)
tool_turns = st.lists(function_calls, min_size=1, max_size=3).map(lambda cs: Turn(tuple(cs)))
turns = st.lists(st.one_of(tool_turns, tool_turns, tool_turns, st.text(max_size=20).map(text)), min_size=1, max_size=5)


sessions = dict(
    user=st.sampled_from(USERS + ["C001", "C002", "C003"]),
    can_ask=st.booleans(),
    answers=st.lists(st.booleans(), max_size=8),
)


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns, **sessions)
def test_no_side_effect_without_approval_and_no_foreign_data(turns, user, can_ask, answers):
    check_authority(turns, user, can_ask, answers)


# The same property where every call is a cancel, mostly of the user's own open orders:
# approvals, rejections, pauses and repeated call ids are then common, not rare corners.
@pytest.mark.slow
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    user=st.sampled_from(["C001", "C002", "C003"]),
    can_ask=st.booleans(),
    answers=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_cancels_happen_only_when_approved(data, user, can_ask, answers):
    own = [oid for oid in CANCELLABLE_IDS if SAMPLE.orders[oid].customer_id == user]
    order_ids = st.one_of(st.sampled_from(own), st.sampled_from(own), st.sampled_from(ORDER_IDS))
    arguments = st.builds(
        lambda oid, reason: json.dumps({"order_id": oid, "reason": reason}, ensure_ascii=False),
        order_ids,
        st.sampled_from(["不想要了", "x", " "]),
    )
    turn = st.lists(arguments, min_size=1, max_size=3).map(
        lambda args: Turn(
            tuple(FunctionCall(call_id=f"call_{i}", name="cancel_order", arguments=a) for i, a in enumerate(args))
        )
    )
    check_authority(data.draw(st.lists(turn, min_size=1, max_size=4)), user, can_ask, answers)


def check_authority(turns: list[Turn], user: str | None, can_ask: bool, answers: list[bool]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "orders.json"
        shutil.copyfile(SAMPLE_PATH, path)
        approved: list[PendingCall] = []

        def approver(pending: PendingCall) -> bool:
            yes = answers.pop(0) if answers else False
            if yes:
                approved.append(pending)
            return yes

        engine = Engine(
            ScriptedModel(turns),
            Toolbox(order_tools(JsonStore.load(path))),
            Limits(max_steps=6, max_tool_calls=20),
            clock=lambda: 0.0,
            wall_clock=lambda: 0.0,
            approver=approver if can_ask else None,
        )
        state = engine.run(RunState.start("q", user=user))
        after = JsonStore.load(path)

        # 1. Every change in the file is an approved cancel of the user's own order, by that call.
        allowed = {(f"{state.run_id}/{p.call_id}", json.loads(p.arguments)["order_id"]) for p in approved}
        for order_id, order in after.orders.items():
            if order == SAMPLE.orders[order_id]:
                continue
            assert (order.cancelled_by, order_id) in allowed
            assert order.customer_id == user and SAMPLE.orders[order_id].status in ("待付款", "处理中")
        if not approved:
            assert path.read_bytes() == SAMPLE_PATH.read_bytes()

        # 2. Nothing with a side effect ran unless a person said yes to exactly that call.
        ran = [(c.call_id, c.arguments) for c in state.calls if c.name == "cancel_order" and c.executed]
        assert len(ran) == len(approved)
        assert all(p.user == user and p.name == "cancel_order" for p in approved + state.pending)

        # 3. No result the model saw holds another customer's private data.
        seen = "\n".join(i.output for i in state.items if isinstance(i, FunctionCallOutput))
        for customer, private in PRIVATE.items():
            if customer != user:
                assert not any(secret in seen for secret in private), (customer, seen)
