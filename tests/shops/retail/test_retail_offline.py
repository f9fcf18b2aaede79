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
