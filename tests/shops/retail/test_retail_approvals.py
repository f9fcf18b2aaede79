"""What a person is asked to approve for each retail write, in the UI language: the order, each
item old → new with prices, the price difference and who pays it, where a refund goes, an
address before → after. Each write pauses (nobody to ask, as when piped) and the waiting
call's description is what the prompt and the stop line show."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from runkit import open_store

from orderbot import i18n
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls
from orderbot.runner import Runner
from orderbot.shops.retail.jsonstore import JsonShopStore
from orderbot.shops.retail.tools import retail_tools
from orderbot.ui.describe import action_words

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "73301"}
OLD_ADDRESS = "570 Elm Avenue, Suite 175, Denver, CO, 80218, USA"


def described(tmp_path: Path, name: str, arguments: dict, *, lang: str = "en") -> str:
    """What a reader of `lang` is shown for the write, asked for by someone whose terminal
    speaks the other language: the reader's words, never the requester's."""
    tmp_path.mkdir(exist_ok=True)
    shop = tmp_path / "db.json"
    shutil.copyfile(DB, shop)
    i18n.set_language("zh" if lang == "en" else "en")
    try:
        store = JsonShopStore.load(shop)
        state = RunState.start("please", user="olivia_ito_3591")
        model = ScriptedModel([calls(call(name, arguments))])
        Runner(Toolbox(retail_tools(store)), model, open_store(tmp_path / "state"), provider="scripted").start(
            state, Limits(max_steps=5, max_calls_per_step=1)
        )
    finally:
        i18n.set_language(None)
    assert state.stop_reason is StopReason.AWAITING_APPROVAL, state.calls
    assert shop.read_bytes() == DB.read_bytes()  # asking changed nothing
    return action_words(state.pending[0].description, lang)


CASES = [
    (
        "cancel_pending_order",
        {"order_id": "#W3657213", "reason": "no longer needed"},
        "Cancel order #W3657213 (paid $3,570.34), reason: no longer needed; refund $3,570.34 back to gift card "
        "gift_card_7794233 (balance $56.00)",
        "取消订单 #W3657213（已付 $3,570.34），原因：no longer needed；退款 $3,570.34 退回 礼品卡 gift_card_7794233"
        "（余额 $56.00）",
    ),
    (
        "modify_pending_order_address",
        {"order_id": "#W5442520", **ADDRESS},
        f"Change the shipping address of order #W5442520: {OLD_ADDRESS} → 1 Main St, Austin, TX, 73301, USA",
        f"修改订单 #W5442520 的收货地址：{OLD_ADDRESS} → 1 Main St, Austin, TX, 73301, USA",
    ),
    (
        "modify_user_address",
        ADDRESS,
        f"Change the default address of customer olivia_ito_3591: {OLD_ADDRESS} → 1 Main St, Austin, TX, 73301, USA",
        f"修改客户 olivia_ito_3591 的默认地址：{OLD_ADDRESS} → 1 Main St, Austin, TX, 73301, USA",
    ),
    (
        "modify_pending_order_items",
        {"order_id": "#W5442520", "item_ids": ["3330317167"], "new_item_ids": ["8896479688"],
         "payment_method_id": "credit_card_9753331"},
        "Change items of pending order #W5442520: Gaming Mouse 3330317167 (color black, sensor type optical, "
        "connectivity wired, $137.32) → 8896479688 (color white, sensor type optical, connectivity wireless, $143.15); "
        "the price difference $5.83 is paid with visa card ending 9182 (credit_card_9753331); after this the order "
        "can be neither modified nor cancelled",
        "修改待处理订单 #W5442520 的商品：Gaming Mouse 3330317167（color black, sensor type optical, connectivity "
        "wired，$137.32）→ 8896479688（color white, sensor type optical, connectivity wireless，$143.15）；差价 $5.83 "
        "由 尾号 9182 的 visa 卡（credit_card_9753331） 支付；此后这个订单不能再修改或取消",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"},
        "Pay order #W5442520 ($663.85) with PayPal (paypal_8049766) instead of visa card ending 9182 "
        "(credit_card_9753331); visa card ending 9182 (credit_card_9753331) gets $663.85 back",
        "订单 #W5442520（$663.85）改用 PayPal（paypal_8049766） 支付，"
        "不再用 尾号 9182 的 visa 卡（credit_card_9753331）；$663.85 退回 尾号 9182 的 visa 卡（credit_card_9753331）",
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W5866402", "item_ids": ["9727387530"], "payment_method_id": "gift_card_7794233"},
        "Return from delivered order #W5866402: Sneakers 9727387530 (size 11, color black, material synthetic, "
        "$207.75); the refund of $207.75 goes to gift card gift_card_7794233 (balance $56.00)",
        "退货（已送达订单 #W5866402）：Sneakers 9727387530（size 11, color black, material synthetic，$207.75）；"
        "退款 $207.75 退到 礼品卡 gift_card_7794233（余额 $56.00）",
    ),
    (
        "exchange_delivered_order_items",
        {"order_id": "#W5866402", "item_ids": ["9727387530"], "new_item_ids": ["2509076505"],
         "payment_method_id": "paypal_8049766"},
        "Exchange items of delivered order #W5866402: Sneakers 9727387530 (size 11, color black, material synthetic, "
        "$207.75) → 2509076505 (size 10, color gray, material leather, $189.50); the price difference $18.25 goes "
        "back to PayPal (paypal_8049766)",
        "换货（已送达订单 #W5866402）：Sneakers 9727387530（size 11, color black, material synthetic，$207.75）→ "
        "2509076505（size 10, color gray, material leather，$189.50）；差价 $18.25 退回 PayPal（paypal_8049766）",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "arguments", "english", "chinese"), CASES, ids=[c[0] for c in CASES])
def test_each_write_shows_what_it_will_do_in_the_readers_language(tmp_path, name, arguments, english, chinese) -> None:
    assert described(tmp_path, name, arguments) == english
    assert described(tmp_path / "zh", name, arguments, lang="zh") == chinese
