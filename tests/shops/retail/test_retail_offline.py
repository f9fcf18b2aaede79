"""The offline model in tau2's retail shop, through the real command line: where an order is
and its tracking, my orders, a product's available variants, a cancellation with its reason
(approved with resume), signing in by e-mail; in English and in Chinese, with no key and no
network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clikit import cli

from orderbot.shops.retail.jsonstore import JsonShopStore

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
OLIVIA = "olivia_ito_3591"


@pytest.fixture
def shop(tmp_path) -> Path:
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    return path


def ask(shop: Path, question: str, *flags: str):
    result = cli("ask", "--orders", str(shop), "--json", *flags, question)
    return result, json.loads(result.stdout)


def names(document: dict) -> list[str]:
    return [c["name"] for c in document["calls"]]


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Where is my order #W5866402?", "Order #W5866402 is delivered. Items: Espresso Machine, Sneakers. "
         "Tracking: 203283266934 (Espresso Machine, Sneakers)."),
        ("我的订单 W5866402 到哪了？", "订单 #W5866402：已送达。商品：Espresso Machine、Sneakers。"
         "物流单号：203283266934（Espresso Machine、Sneakers）。"),
        ("Has #W5442520 shipped?", "Order #W5442520 is pending. Items: Gaming Mouse, Patio Umbrella, Hiking Boots. "
         "No tracking yet."),
    ],
)  # fmt: skip
def test_where_is_my_order_and_its_tracking(shop, question, said) -> None:
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 0, result.output
    assert document["provider"] == "offline" and names(document) == ["get_order_details"]
    assert document["answer"] == said
    assert document["claims"] == []  # the claim check reads the shop's English statuses too


@pytest.mark.parametrize(
    ("question", "head", "row"),
    [
        ("What are my orders?", "Your orders (5):", "#W5353646: processed"),
        ("我的所有订单", "你的订单（5 个）：", "#W5353646：已处理，待发货"),
    ],
)
def test_my_orders_one_call_per_turn(shop, question, head, row) -> None:
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 0, result.output
    assert names(document) == ["get_user_details"] + ["get_order_details"] * 5
    assert document["steps"] == 7  # one call per turn, then the answer
    assert document["answer"].splitlines()[0] == head and row in document["answer"].splitlines()


@pytest.mark.parametrize(
    ("question", "head"),
    [("Which T-Shirt variants are available?", "Available T-Shirt variants (10):"),
     ("T-Shirt 有哪些有货的规格？", "T-Shirt 目前有货的规格（10 个）：")],
)  # fmt: skip
def test_a_products_available_variants(shop, question, head) -> None:
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 0, result.output
    assert names(document) == ["list_all_product_types", "get_product_details"]
    lines = document["answer"].splitlines()
    assert lines[0] == head and len(lines) == 11
    assert "9612497925" in document["answer"]  # available
    assert "1234567890" not in document["answer"]


def test_variants_of_a_product_by_its_id(shop) -> None:
    result, document = ask(shop, "What options does product 9523456873 come in?", "--user", OLIVIA)
    assert names(document) == ["get_product_details"]
    assert document["answer"].startswith("Available T-Shirt variants (10):")


@pytest.mark.parametrize(
    ("question", "reason", "answer"),
    [
        ("Please cancel #W5442520, I ordered it by mistake", "ordered by mistake",
         "Order #W5442520 is cancelled (ordered by mistake); the payment goes back to the original payment method "
         "in 5 to 7 business days."),
        ("取消订单 #W3657213，不需要了", "no longer needed",
         "订单 #W3657213 已取消（原因：no longer needed），款项已退回礼品卡。"),
    ],
)  # fmt: skip
def test_cancel_with_a_stated_reason_waits_for_approval_then_says_what_happened(shop, question, reason, answer) -> None:
    order_id = question.split("#")[1][:8]
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 4, result.output
    [pending] = document["pending"]
    assert pending["arguments"] == {"order_id": f"#{order_id}", "reason": reason}
    assert JsonShopStore.load(shop).order(f"#{order_id}").status == "pending"
    resumed = cli("resume", document["run_id"], "--approve", "--user", OLIVIA, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == answer
    assert json.loads(resumed.stdout)["claims"] == []
    assert JsonShopStore.load(shop).order(f"#{order_id}").status == "cancelled"


@pytest.mark.parametrize(
    ("question", "asks"),
    [("cancel #W5442520", "I need the reason: 'no longer needed' or 'ordered by mistake'"),
     ("取消订单 #W5442520", "需要一个原因")],
)  # fmt: skip
def test_cancel_without_a_reason_asks_for_one_and_calls_nothing(shop, question, asks) -> None:
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 0 and document["calls"] == []
    assert asks in document["answer"]


def test_a_cancel_the_policy_refuses_is_explained(shop) -> None:
    result, document = ask(shop, "cancel #W5353646, no longer needed", "--user", OLIVIA)  # processed
    assert result.exit_code == 0 and document["pending"] == []
    assert document["answer"] == "Order #W5353646 is no longer pending, so it cannot be cancelled or changed."


def test_signing_in_by_e_mail_then_answering(shop) -> None:
    result, document = ask(shop, "I am olivia.ito5204@example.com, where is #W5866402?")
    assert result.exit_code == 0, result.output
    assert names(document) == ["find_user_id_by_email", "get_order_details"]
    assert document["user"] == OLIVIA and document["answer"].startswith("Order #W5866402 is delivered.")


def test_signing_in_by_name_and_zip(shop) -> None:
    result, document = ask(shop, "我是 Olivia Ito，邮编 80218，我的订单 #W5866402 到哪了？")
    assert names(document)[0] == "find_user_id_by_name_zip", document["calls"]
    assert document["user"] == OLIVIA and document["answer"].startswith("订单 #W5866402：已送达")


@pytest.mark.parametrize(
    ("question", "said"),
    [("where is #W5866402?", "Please tell me your e-mail address"), ("#W5866402 到哪了？", "请先告诉我你的邮箱")],
)
def test_without_a_customer_it_asks_who_is_asking(shop, question, said) -> None:
    result, document = ask(shop, question)
    assert result.exit_code == 0 and document["answer"].startswith(said)


def test_asked_for_a_person_it_hands_over_at_once_as_a_model_would(shop) -> None:
    """No order to name and no one signed in: the person who takes over asks what is missing."""
    result, document = ask(shop, "transfer me to a human")
    assert result.exit_code == 8 and document["stop_reason"] == "transferred", result.output
    assert names(document) == ["transfer_to_human_agents"] and document["user"] is None


def test_someone_elses_order_is_not_shown(shop) -> None:
    result, document = ask(shop, "where is #W4862767?", "--user", OLIVIA)
    assert document["answer"] == "Order #W4862767 is not among your orders."


def test_the_claim_check_still_catches_a_wrong_status_in_the_retail_shop() -> None:
    from orderbot.answers.claims import check
    from orderbot.answers.facts import Fact
    from orderbot.shops.retail.shop import VOCABULARY

    delivered = [Fact("#W5866402", status="delivered")]
    assert check("Order #W5866402 is delivered.", delivered, vocabulary=VOCABULARY) == []
    [claim] = check("Your order has been cancelled.", delivered, vocabulary=VOCABULARY)
    assert (claim.kind, claim.observed) == ("cancellation", "delivered")
    assert check("Your order is cancelled.", [Fact("#W5442520", status="cancelled")], vocabulary=VOCABULARY) == []
    [claim] = check("它还没有送达。", delivered, vocabulary=VOCABULARY)  # the shop's own statuses, in Chinese too
    assert (claim.kind, claim.observed) == ("status", "delivered")


# What the offline planner does with a request, in both shops: the call it proposes (a write
# waits for approval, a hand-off ends the run) or the one sentence it says. The sample shop's
# rows are its behaviour as it was; the retail rows are the requests its policy allows.
SNEAKERS, BOOTS = "9727387530", "2648909398"
NEW_ADDRESS = {"address1": "123 Main St", "address2": "Apt 1", "city": "Springfield", "state": "IL",
               "country": "USA", "zip": "62701"}  # fmt: skip
CANNOT = "The built-in planner cannot do that: "
CANNOT_ZH = "内置规划器做不到这一点："
REQUESTS = [
    ("retail", "I want to return the sneakers from order #W5866402", "return_delivered_order_items",
     {"order_id": "#W5866402", "item_ids": [SNEAKERS], "payment_method_id": "paypal_8049766"}),
    ("retail", "请把订单 #W5866402 的运动鞋退货", "return_delivered_order_items",
     {"order_id": "#W5866402", "item_ids": [SNEAKERS], "payment_method_id": "paypal_8049766"}),
    ("retail", "Return the sneakers from #W5866402 to my gift card", "return_delivered_order_items",
     {"order_id": "#W5866402", "item_ids": [SNEAKERS], "payment_method_id": "gift_card_7794233"}),
    ("retail", "exchange the sneakers from #W5866402 for size 10", "exchange_delivered_order_items",
     {"order_id": "#W5866402", "item_ids": [SNEAKERS], "new_item_ids": ["2509076505"],
      "payment_method_id": "paypal_8049766"}),
    ("retail", "请把订单 #W5866402 的运动鞋换成 size 6", "exchange_delivered_order_items",
     {"order_id": "#W5866402", "item_ids": [SNEAKERS], "new_item_ids": ["6477915553"],
      "payment_method_id": "paypal_8049766"}),
    ("retail", "change the hiking boots in #W5442520 to size 10", "modify_pending_order_items",
     {"order_id": "#W5442520", "item_ids": [BOOTS], "new_item_ids": ["1615379700"],
      "payment_method_id": "credit_card_9753331"}),
    ("retail", "please pay #W7941031 with my paypal", "modify_pending_order_payment",
     {"order_id": "#W7941031", "payment_method_id": "paypal_8049766"}),
    ("retail", "change my address to 123 Main St, Apt 1, Springfield, IL, USA, 62701", "modify_user_address",
     NEW_ADDRESS),
    ("retail", "把订单 #W5442520 的地址改为 123 Main St, Apt 1, Springfield, IL, USA, 62701",
     "modify_pending_order_address", {"order_id": "#W5442520", **NEW_ADDRESS}),
    ("retail", "transfer me to a human about #W5866402", "transfer_to_human_agents",
     {"summary": "The customer asks for a person about order #W5866402: transfer me to a human about #W5866402"}),
    ("retail", "exchange the sneakers from #W5866402", None,
     "Which Sneakers would you like instead? Available now: size 10, color gray, material leather $189.5 "
     "(2509076505), size 6, color black, material synthetic $186.45 (6477915553)."),
    ("retail", "我想换货：订单 #W5866402 的运动鞋", None,
     "你想换成哪一款 Sneakers？目前有货：size 10, color gray, material leather $189.5（2509076505）、"
     "size 6, color black, material synthetic $186.45（6477915553）。"),
    ("retail", "I want to return something from #W5866402", None,
     "Which items of order #W5866402 do you mean: Espresso Machine, Sneakers?"),
    ("retail", "return #W5442520", None,
     "Order #W5442520 is pending: only a delivered order can be returned or exchanged."),
    ("retail", "我要退货 #W5353646", None, "订单 #W5353646 的状态是“已处理，待发货”：只有已送达的订单才能退货或换货。"),
    ("retail", "exchange #W5353646", None,
     "Order #W5353646 is processed: only a pending order can be changed, and only a delivered one returned or "
     "exchanged."),
    ("retail", "change my address", None,
     "What is the new address? Please write it as: street, apartment (or none), city, state, country, zip code."),
    ("retail", "我想改一下我的地址", None,
     "新地址是什么？请按这个格式写：街道，门牌或公寓（没有就写 none），城市，州，国家，邮编。"),
    ("retail", "transfer me to a human", "transfer_to_human_agents",
     {"summary": "The customer asks for a person: transfer me to a human"}),
    ("retail", "转人工", "transfer_to_human_agents", {"summary": "The customer asks for a person: 转人工"}),
    ("retail", "I want to exchange my sneakers", None,
     "Which order is it about? Please give me its id (it starts with #W)."),
    ("retail", "pay #W5442520 with my gift card", None,
     "The gift card's balance does not cover it; nothing was done to order #W5442520."),
    ("retail", "订单 #W5442520 改用礼品卡支付", None, "礼品卡余额不足，订单 #W5442520 没有任何改动。"),
    ("retail", "Return the sneakers from #W5866402 to my credit card", None,
     "A refund for order #W5866402 goes to its original payment method or one of your gift cards."),
    ("retail", "can you give me a discount on #W5866402", None, CANNOT),
    ("retail", "#W5866402 能打折吗", None, CANNOT_ZH),
    ("sample", "查询 ORD-1001", "get_order_status", {"order_id": "ORD-1001"}),
    ("sample", "What is the status of ORD-1001?", None, "Order ORD-1001 is shipped (已发货)."),
    ("sample", "transfer me to a human", None,
     "Which order do you mean? Please give the order id (it starts with ORD-)."),
    ("sample", "转人工", None, "请提供要查询的订单号（以 ORD- 开头）。"),
]  # fmt: skip


@pytest.mark.parametrize(("shop_name", "question", "tool", "expected"), REQUESTS)
def test_a_request_gets_the_call_the_policy_allows_or_one_plain_sentence(shop, shop_name, question, tool, expected):
    flags = ("--orders", str(shop), "--user", OLIVIA) if shop_name == "retail" else ()
    result = cli("ask", "--json", *flags, question)
    document = json.loads(result.stdout)
    assert document["provider"] == "offline"
    if tool is None:
        assert result.exit_code == 0 and document["pending"] == [], result.output
        assert document["answer"].startswith(expected), document["answer"]
        assert not any(c["name"] in WRITES and c["decision"] == "executed" for c in document["calls"])
        assert JsonShopStore.load(shop).order("#W5866402").status == "delivered"  # nothing changed
        return
    # A pending call's arguments are an object; an executed call's, the JSON the model wrote.
    proposed = [(c["name"], c["arguments"]) for c in document["pending"]]
    proposed = proposed or [(c["name"], json.loads(c["arguments"])) for c in document["calls"][-1:]]
    assert proposed == [(tool, expected)]
    if tool in WRITES:  # through the same approval as any model's
        assert result.exit_code == 4 and document["stop_reason"] == "awaiting_approval"
    if tool == "transfer_to_human_agents":
        assert result.exit_code == 8 and document["stop_reason"] == "transferred"


WRITES = {"return_delivered_order_items", "exchange_delivered_order_items", "modify_pending_order_items",
          "modify_pending_order_payment", "modify_user_address", "modify_pending_order_address",
          "cancel_pending_order"}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "answer", "status"),
    [("I want to return the sneakers from order #W5866402",
      "The return of Sneakers from order #W5866402 is requested; the refund goes to paypal_8049766.",
      "return requested"),
     ("请把订单 #W5866402 的运动鞋换成 size 6",
      "订单 #W5866402 的换货申请已提交：Sneakers (size 11, color black, material synthetic → size 6, color black, "
      "material synthetic)；差价通过 paypal_8049766 结算。", "exchange requested")],
)  # fmt: skip
def test_an_approved_return_or_exchange_is_carried_out_and_said(shop, question, answer, status) -> None:
    result, document = ask(shop, question, "--user", OLIVIA)
    assert result.exit_code == 4, result.output
    resumed = cli("resume", document["run_id"], "--approve", "--user", OLIVIA, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == answer and json.loads(resumed.stdout)["claims"] == []
    assert JsonShopStore.load(shop).order("#W5866402").status == status
