"""The claim check reads what an answer says of an order's items, amounts and dates, on both
shops and in both languages, against what the tools returned: something specific that
contradicts them is flagged, and nothing else. Real engine, real tools, scripted models."""

from __future__ import annotations

import pytest
from test_claims import details, run
from test_fact_actions import retail_run

from orderbot.answers.claims import check
from orderbot.answers.facts import facts_of
from orderbot.models.scripted import call, calls
from orderbot.shops.retail.shop import VOCABULARY as RETAIL
from orderbot.shops.sample.shop import VOCABULARY as SAMPLE

ITEMS = "Espresso Machine, Sneakers"


def retail_claims(tmp_path, answer: str, *more) -> list[tuple[str, str, str | None]]:
    state = retail_run(tmp_path, calls(call("get_order_details", {"order_id": "#W5866402"})), *more)
    found = check(answer, facts_of(state, RETAIL), state.calls, vocabulary=RETAIL)
    return [(c.kind, c.said, c.observed) for c in found]


def sample_claims(toolbox, answer: str) -> list[tuple[str, str, str | None]]:
    state = run(toolbox, "ok", details("ORD-1001"))
    found = check(answer, facts_of(state, SAMPLE), state.calls, vocabulary=SAMPLE)
    return [(c.kind, c.said, c.observed) for c in found]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("Order #W5866402 contains a Laptop and a Desk Lamp.", ["a Laptop", "a Desk Lamp"]),
        ("订单 #W5866402 包含 Laptop 和 Desk Lamp。", ["Laptop", "Desk Lamp"]),
        ("It includes a Laptop.", ["a Laptop"]),  # the run's one order, not named
    ],
)
def test_a_wrong_item_list_is_caught(tmp_path, answer, said):
    assert retail_claims(tmp_path, answer) == [("items", s, ITEMS) for s in said]


@pytest.mark.parametrize(
    "answer",
    [
        "Order #W5866402 contains an Espresso Machine and Sneakers.",
        "订单 #W5866402 包含 Espresso Machine 和 Sneakers。",
        "订单 #W5866402 包含一台咖啡机和一双运动鞋。",  # a translation is not read as a claim
        "Order #W5866402 is delivered; it contains the following items: Espresso Machine, Sneakers.",
        "Order #W5866402 contains 2 items: Espresso Machine ($2,996.03) and Sneakers ($207.75), total $3,203.78.",
        "订单 #W5866402 已送达，共付款 $3,203.78。",
        "Returning the Sneakers gets you a refund of $207.75.",
        "Your refund includes tax.",  # a list, but not of the order's items
        "Order #W5866402 contains no items that can be returned.",
    ],
)
def test_what_the_tools_returned_passes(tmp_path, answer):
    assert retail_claims(tmp_path, answer) == []


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("Your refund of $300.00 for the Sneakers goes to your gift card.", "$300.00"),
        ("退款 300 美元将退回你的礼品卡。", "300 美元"),
        ("Order #W5866402 cost $3,100.00.", "$3,100.00"),
    ],
)
def test_an_amount_the_tools_did_not_compute_is_caught(tmp_path, answer, said):
    assert retail_claims(tmp_path, answer) == [("amount", said, None)]


def test_an_amount_a_calculation_returned_passes(tmp_path):
    more = calls(call("calculate", {"expression": "207.75 + 2996.03 - 100"}))
    assert retail_claims(tmp_path, "Your refund would be $3,103.78.", more) == []
    assert retail_claims(tmp_path / "b", "Your refund would be $3,103.00.", more) == [("amount", "$3,103.00", None)]


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ("订单 ORD-1001 包含西湖龙井 250g 和玻璃茶杯。", []),
        ("订单 ORD-1001 包含西湖龙井 250g 和紫砂壶。", [("items", "紫砂壶", "西湖龙井 250g ×1, 玻璃茶杯 ×2")]),
        ("Order ORD-1001 contains a teapot.", []),  # English for Chinese names: not read
        ("订单 ORD-1001 于 2026-11-20 下单。", []),
        ("Order ORD-1001 was placed on 2026-11-21.", [("date", "2026-11-21", None)]),
        ("订单 ORD-1001 于 2026年11月2日下单。", [("date", "2026年11月2日", None)]),
    ],
)
def test_the_sample_shops_items_and_dates(toolbox, answer, found):
    claims = sample_claims(toolbox, answer)
    assert [(k, s) for k, s, _ in claims] == [(k, s) for k, s, _ in found]
    assert all(k != "items" or o == found[0][2] for k, _, o in claims)


def test_a_price_another_lookup_returned_passes(tmp_path):
    """A variant's price from get_product_details is the tools' too (the Sneakers' 2509076505)."""
    more = calls(call("get_product_details", {"product_id": "7471004230"}))
    assert retail_claims(tmp_path, "The gray leather pair costs $189.50.", more) == []
    assert retail_claims(tmp_path / "b", "The gray leather pair costs $179.50.", more) == [("amount", "$179.50", None)]
