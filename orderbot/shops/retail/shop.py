"""The retail shop as a session sees it (orderbot.shops.shop.Shop): what the model is told (tau2's
policy), how its orders are said, its offline planner, the limits a customer conversation
needs, and the check of a --user before a run. Which sources hold the shop is
orderbot.shops.choice's to say."""

from __future__ import annotations

from orderbot.errors import ConfigError
from orderbot.loop.model import Model
from orderbot.shops.retail.describe import money
from orderbot.shops.retail.store import RetailStore
from orderbot.shops.retail.tools import instructions
from orderbot.shops.shop import Shop, Vocabulary

NAME = "retail"
# A customer conversation needs more room than a status query: tau2's training tasks take up
# to 13 actions, one per turn, and a person's approval in between. One call per turn is the
# policy's. Flags, ORDERBOT_* and .env still override each of them.
LIMIT_DEFAULTS: dict[str, int | float] = {
    "max_steps": 30,
    "max_tool_calls": 30,
    "max_calls_per_step": 1,
    "timeout": 120.0,
}


def check_customer(store: RetailStore, user: str | None) -> None:
    """A --user that names nobody in the shop is a mistake to say before the run, not a
    conversation in which every tool refuses."""
    if user is not None and store.user(user) is None:
        raise ConfigError("retail.no_customer", source=store.source, user=repr(user))


_RETURNED = frozenset({"delivered", "return requested", "exchange requested"})
VOCABULARY = Vocabulary(
    statuses={
        "pending": ("待处理",),
        "processed": ("已处理",),
        "delivered": ("已送达", "已签收"),
        "cancelled": ("canceled", "已取消"),
        "pending (item modified)": ("待处理（商品已修改）",),
        "return requested": ("已申请退货",),
        "exchange requested": ("已申请换货",),
    },
    cancelled="cancelled",
    not_found="",  # an unknown id is a refusal here (code not_found), not a status
    once={
        "shipped": _RETURNED,
        "delivered": _RETURNED,
        "cancelled": frozenset({"cancelled"}),
        # An order is paid when it is placed: "not paid" is false of every one.
        "paid": frozenset({"pending", "processed", "pending (item modified)", "cancelled"}) | _RETURNED,
    },
    money=lambda amount, currency: money(amount),  # tau2's prices are dollars
    actions={
        "cancel_pending_order": "cancel",
        "modify_pending_order_items": "modify_items",
        "modify_pending_order_address": "modify_address",
        "modify_pending_order_payment": "modify_payment",
        "return_delivered_order_items": "return",
        "exchange_delivered_order_items": "exchange",
        "modify_user_address": "user_address",
        "transfer_to_human_agents": "transfer",
    },
)


def offline() -> Model:
    from orderbot.shops.retail.offline import RetailOfflineModel  # compiled only for offline runs

    return RetailOfflineModel()


SHOP = Shop(
    name=NAME,
    instructions=instructions(),
    vocabulary=VOCABULARY,
    offline=offline,
    limit_defaults=LIMIT_DEFAULTS,
)
