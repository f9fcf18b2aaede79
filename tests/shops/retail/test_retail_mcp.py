"""The hostile cases of test_retail_hostile.py through the MCP face: a host's model sends the
same calls over MCP (the mcp package's own client, in-process), with a person in the host who
would approve anything. Each is refused with the same code before anyone is asked, and the
shop file is left as it was; a session signs in one customer only."""

from __future__ import annotations

import json
import shutil

import pytest
from mcpkit import Served, approving, envelope
from test_retail_hostile import (
    ADDRESS,
    CARD,
    CUSTOMER_TOOLS,
    DB,
    DELIVERED,
    GIFT_CARD,
    MOUSE,
    MOUSE_GONE,
    MOUSE_OTHER,
    OLIVIA,
    OLIVIA_EMAIL,
    ORIGINAL,
    OTHERS_ORDER,
    PAYPAL,
    PENDING,
    PROCESSED,
    SNEAKERS,
    SNEAKERS_GONE,
    SOPHIA,
    SOPHIAS_CARD,
    UMBRELLA_OTHER,
)

from orderbot.shops.retail import data
from orderbot.shops.retail.jsonstore import JsonShopStore

POLICY = [
    ("not_your_payment_method", "modify_pending_order_payment", {"order_id": PENDING,
                                                                 "payment_method_id": SOPHIAS_CARD}),
    ("not_pending", "cancel_pending_order", {"order_id": PROCESSED, "reason": "no longer needed"}),
    ("bad_reason", "cancel_pending_order", {"order_id": PENDING, "reason": "found it cheaper elsewhere"}),
    ("not_pending", "modify_pending_order_address", {"order_id": PROCESSED, **ADDRESS}),
    ("not_delivered", "return_delivered_order_items", {"order_id": PENDING, "item_ids": [MOUSE],
                                                       "payment_method_id": CARD}),
    ("item_not_in_order", "return_delivered_order_items", {"order_id": DELIVERED, "item_ids": [SNEAKERS, SNEAKERS],
                                                           "payment_method_id": PAYPAL}),
    ("not_same_product", "exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [SNEAKERS],
                                                            "new_item_ids": [MOUSE_OTHER],
                                                            "payment_method_id": PAYPAL}),
    ("variant_unavailable", "exchange_delivered_order_items", {"order_id": DELIVERED, "item_ids": [SNEAKERS],
                                                               "new_item_ids": [SNEAKERS_GONE],
                                                               "payment_method_id": PAYPAL}),
    ("not_same_product", "modify_pending_order_items", {"order_id": PENDING, "item_ids": [MOUSE],
                                                        "new_item_ids": [UMBRELLA_OTHER], "payment_method_id": CARD}),
    ("variant_unavailable", "modify_pending_order_items", {"order_id": PENDING, "item_ids": [MOUSE],
                                                           "new_item_ids": [MOUSE_GONE], "payment_method_id": CARD}),
    ("gift_card_insufficient", "modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": GIFT_CARD}),
    ("bad_refund_method", "return_delivered_order_items", {"order_id": DELIVERED, "item_ids": [SNEAKERS],
                                                           "payment_method_id": CARD}),
    ("same_payment_method", "modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": CARD}),
    ("invalid_arguments", "get_user_details", {"user_id": SOPHIA}),
    ("invalid_arguments", "modify_user_address", {"user_id": SOPHIA, **ADDRESS}),
    ("other_customer", "find_user_id_by_email", {"email": "sophia.thomas1364@example.com"}),
]  # fmt: skip
SESSIONS = {
    "anonymous": (None, [("sign_in_required", name, arguments) for name, arguments in CUSTOMER_TOOLS]),
    "another_customers_order": (OLIVIA, [("no_access", name, arguments) for name, arguments in OTHERS_ORDER]),
    "the_policy": (OLIVIA, POLICY),
}


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    return path


def session_of(shop, state, user, attempts, asked):
    served = Served(shop, state, user=user, max_tool_calls=len(attempts) + 2)

    async def script(client):
        return [envelope(await client.call_tool(name, arguments)) for _, name, arguments in attempts]

    try:
        return served, served.drive(script, elicitation=approving(asked))
    finally:
        served.close()


@pytest.mark.parametrize("case", SESSIONS)
def test_the_same_refusals_over_mcp_and_nothing_written(shop, tmp_path, case) -> None:
    user, attempts = SESSIONS[case]
    asked: list[str] = []
    served, replies = session_of(shop, tmp_path / "state", user, attempts, asked)
    assert [r.get("code") for r in replies] == [code for code, _, _ in attempts]
    assert asked == []  # nobody was asked to approve what cannot happen
    assert data.document(JsonShopStore.load(shop).export()) == ORIGINAL
    calls = [c for run_id in served.session.runs for c in served.runs.load(run_id).state.calls]
    assert [c.result["code"] for c in calls] == [code for code, _, _ in attempts]  # recorded, as a run's


def test_a_session_signs_in_one_customer_only(shop, tmp_path) -> None:
    attempts = [
        (None, "find_user_id_by_email", {"email": OLIVIA_EMAIL}),
        ("other_customer", "find_user_id_by_email", {"email": "sophia.thomas1364@example.com"}),
        ("other_customer", "find_user_id_by_name_zip", {"first_name": "Sophia", "last_name": "Thomas", "zip": "75396"}),
        (None, "get_user_details", {}),
    ]
    served, replies = session_of(shop, tmp_path / "state", None, attempts, [])
    assert [r.get("code") for r in replies] == [code for code, _, _ in attempts]
    assert replies[3]["data"]["user_id"] == OLIVIA
    assert SOPHIA not in json.dumps(replies[1:3])


def test_a_session_reads_the_shop_file_again_when_another_desk_wrote_it(shop, tmp_path) -> None:
    served = Served(shop, tmp_path / "state", user=OLIVIA)

    async def script(client):
        before = envelope(await client.call_tool("get_order_details", {"order_id": PENDING}))
        document = json.loads(shop.read_text(encoding="utf-8"))
        document["orders"][PENDING]["status"] = "cancelled"  # as another orderbot's write would leave it
        shop.write_text(json.dumps(document), encoding="utf-8")
        after = envelope(await client.call_tool("get_order_details", {"order_id": PENDING}))
        return before, after

    try:
        before, after = served.drive(script)
    finally:
        served.close()
    assert (before["data"]["status"], after["data"]["status"]) == ("pending", "cancelled")
