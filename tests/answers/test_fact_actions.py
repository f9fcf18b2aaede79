"""The facts name each action of both shops as itself, and what became of it: awaiting
approval, rejected, done or failed, in English and Chinese. Real engine, real retail and
sample tools, scripted models."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orderbot.answers.facts import facts_of
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.retail.jsonstore import JsonShopStore
from orderbot.shops.retail.shop import VOCABULARY as RETAIL
from orderbot.shops.retail.tools import retail_tools
from orderbot.shops.sample.shop import VOCABULARY as SAMPLE
from orderbot.shops.shop import ACTIONS
from orderbot.ui.facts import fact_line

DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
CUSTOMER = "olivia_ito_3591"
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "73301"}
SWAP = {"item_ids": ["9727387530"], "new_item_ids": ["2509076505"], "payment_method_id": "paypal_8049766"}
LAMP = {"item_ids": ["8384507844"], "new_item_ids": ["9083642334"], "payment_method_id": "paypal_7644869"}
MOUSE = {"item_ids": ["3330317167"], "new_item_ids": ["8896479688"], "payment_method_id": "credit_card_9753331"}

# (tool, arguments, whom the fact is about, the action in English, in Chinese)
RETAIL_ACTIONS = [
    ("cancel_pending_order", {"order_id": "#W3657213", "reason": "no longer needed"}, "#W3657213", "cancel", "取消"),
    ("modify_pending_order_items", {"order_id": "#W5442520", **MOUSE}, "#W5442520", "item change", "修改商品"),
    (
        "modify_pending_order_address",
        {"order_id": "#W5442520", **ADDRESS},
        "#W5442520",
        "order address change",
        "修改订单地址",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"},
        "#W5442520",
        "payment change",
        "修改支付方式",
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W5866402", "item_ids": ["9727387530"], "payment_method_id": "gift_card_7794233"},
        "#W5866402",
        "return",
        "退货",
    ),
    ("exchange_delivered_order_items", {"order_id": "#W5866402", **SWAP}, "#W5866402", "exchange", "换货"),
    ("modify_user_address", ADDRESS, CUSTOMER, "customer address change", "修改客户地址"),
]


def retail_run(tmp_path: Path, *turns, approver=None, user: str = CUSTOMER) -> RunState:
    tmp_path.mkdir(exist_ok=True)
    shop = tmp_path / "db.json"
    shutil.copyfile(DB, shop)
    model = ScriptedModel([*turns, text("ok")])
    engine = Engine(model, Toolbox(retail_tools(JsonShopStore.load(shop))), Limits(max_steps=6), approver=approver)
    return engine.run(RunState.start("please", user=user))


def lines(state: RunState, lang: str) -> list[str]:
    return [fact_line(fact, lang) for fact in facts_of(state, RETAIL)]


def test_every_action_of_both_shops_has_a_name_in_both_languages():
    from orderbot.i18n.catalogue import MESSAGES

    named = set(RETAIL.actions.values()) | set(SAMPLE.actions.values())
    assert named == set(ACTIONS)
    assert all(MESSAGES[f"facts.action.{a}"]["en"] and MESSAGES[f"facts.action.{a}"]["zh"] for a in ACTIONS)


def test_an_exchange_the_person_refused_is_named_an_exchange(tmp_path):
    """The issue's case: after get_order_details, an exchange rejected at the prompt."""
    state = retail_run(
        tmp_path,
        calls(call("get_order_details", {"order_id": "#W6390527"})),
        calls(call("exchange_delivered_order_items", {"order_id": "#W6390527", **LAMP})),
        approver=lambda pending: False,
        user="mei_kovacs_8020",
    )
    (en,) = lines(state, "en")
    (zh,) = lines(state, "zh")
    assert en.startswith("#W6390527 · delivered · ") and en.endswith(" · exchange rejected: nothing was done")
    assert "cancel" not in en and zh.endswith(" · 换货被拒绝：未做任何操作") and "取消" not in zh
    (fact,) = facts_of(state, RETAIL)
    assert fact.as_dict()["actions"] == [{"action": "exchange", "outcome": "rejected"}]


@pytest.mark.parametrize(("tool", "arguments", "about", "en", "zh"), RETAIL_ACTIONS)
def test_each_retail_action_proposed_rejected_and_done(tmp_path, tool, arguments, about, en, zh):
    turn = calls(call(tool, arguments))
    proposed = retail_run(tmp_path / "proposed", turn)
    assert lines(proposed, "en")[-1].startswith(about) and lines(proposed, "en")[-1].endswith(f"{en} awaiting approval")
    assert lines(proposed, "zh")[-1].endswith(f"{zh}等待确认")

    rejected = retail_run(tmp_path / "rejected", turn, approver=lambda pending: False)
    assert lines(rejected, "en")[-1].endswith(f" · {en} rejected: nothing was done")
    assert lines(rejected, "zh")[-1].endswith(f" · {zh}被拒绝：未做任何操作")

    done = retail_run(tmp_path / "done", turn, approver=lambda pending: True)
    (record,) = done.calls
    assert record.result["ok"], record.result
    expected = (
        ("cancelled in this run", "已在本次运行中取消")
        if en == "cancel"
        else (
            f"{en} done in this run",
            f"{zh}已在本次运行中完成",
        )
    )
    assert lines(done, "en")[-1].endswith(f" · {expected[0]}") and lines(done, "zh")[-1].endswith(f" · {expected[1]}")


def test_an_action_the_shop_refuses_is_named_as_it_failed(tmp_path):
    """Cancelling a delivered order: the policy refuses before anyone is asked."""
    state = retail_run(
        tmp_path, calls(call("cancel_pending_order", {"order_id": "#W5866402", "reason": "no longer needed"}))
    )
    (line,) = lines(state, "en")
    assert line.startswith("#W5866402 · cancel failed: "), line
    assert lines(state, "zh")[0].startswith("#W5866402 · 取消失败：")


def test_a_transfer_is_named_a_transfer_of_the_customer(tmp_path):
    state = retail_run(tmp_path, calls(call("transfer_to_human_agents", {"summary": "wants a person"})))
    assert lines(state, "en") == [f"{CUSTOMER} · transfer to a human agent done in this run"]
    assert lines(state, "zh") == [f"{CUSTOMER} · 转人工客服已在本次运行中完成"]
