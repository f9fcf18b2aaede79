"""The sample shop as a session sees it (orderbot.shops.shop.Shop): what the model is told, how
its orders are said, its offline planner, its eval suite and the orders it ships with."""

from __future__ import annotations

from pathlib import Path

from orderbot.loop.model import Model
from orderbot.shops.sample.model import CANCELLED, NOT_FOUND, SAMPLE_PATH, STATUS_WORDS_EN, format_money
from orderbot.shops.sample.tools import INSTRUCTIONS
from orderbot.shops.shop import Shop, Vocabulary

VOCABULARY = Vocabulary(
    statuses=STATUS_WORDS_EN,
    cancelled=CANCELLED,
    not_found=NOT_FOUND,
    once={
        "shipped": frozenset({"已发货", "已签收"}),
        "delivered": frozenset({"已签收"}),
        "cancelled": frozenset({"已取消"}),
        "paid": frozenset({"处理中", "已发货", "已签收", "退款中", "已退款"}),
    },
    money=format_money,
    actions={"cancel_order": "cancel"},
)


def offline() -> Model:
    from orderbot.shops.sample.offline import OfflineModel  # its patterns are compiled only for offline runs

    return OfflineModel()


SHOP = Shop(
    name="sample",
    instructions=INSTRUCTIONS,
    vocabulary=VOCABULARY,
    offline=offline,
    eval_suite=Path(__file__).with_name("eval_suite.json"),
    sample=SAMPLE_PATH,
)
