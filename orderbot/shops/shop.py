"""What a shop brings to a session beside its store and tools: the one face of a shop that the
floors above see (orderbot.shops.session hands it on as `Session.shop`).

    name            "sample", "retail": for doctor and the docs; nothing decides on it
    instructions    what the model is told
    vocabulary      how its orders are said: statuses, the words an answer may use for each,
                    money, the action each acting tool is (the facts, the claim check and
                    the order views read it)
    offline         its offline planner, made on demand (the `offline` provider)
    eval_suite      the suite `orderbot eval` runs without --suite, if the shop has one
    sample          the orders it ships with, read-only, if any
    limit_defaults  the limits a conversation in it needs, where they differ from the table's

Each shop makes one (orderbot.shops.sample.shop, orderbot.shops.retail.shop); no module
outside orderbot/shops/ and orderbot/commands/ imports a particular shop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orderbot.loop.model import Model

# What an answer may say has not happened yet ("not shipped", "未付款"), each the key of the
# statuses that contradict it (Vocabulary.once); the claim check reads the words.
MILESTONES = ("shipped", "delivered", "cancelled", "paid")
# The actions a shop's tools carry out, each named by the catalogue's `facts.action.<key>`.
ACTIONS = (
    "cancel",
    "modify_items",
    "modify_address",
    "modify_payment",
    "return",
    "exchange",
    "user_address",
    "transfer",
)


@dataclass(frozen=True, eq=False)  # compared (and cached by) identity: each shop has one
class Vocabulary:
    """How a shop's orders are said."""

    # Each status as the store writes it, with the other words an answer may use for it (the
    # sample shop writes Chinese, so English; the retail shop English, so Chinese).
    statuses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cancelled: str = ""  # the status of a cancelled order
    not_found: str = ""  # the status a lookup of an unknown id answers with ("" when it has none)
    # For each of MILESTONES, the statuses an order has once it happened.
    once: Mapping[str, frozenset[str]] = field(default_factory=dict)
    money: Callable[[float, str], str] = lambda amount, currency: f"{currency} {amount:.2f}"
    # Each tool that acts (a write, a hand-off) to the action it is, a key of ACTIONS: the
    # facts name what was proposed, rejected, done or failed as that action.
    actions: Mapping[str, str] = field(default_factory=dict)


PLAIN = Vocabulary()  # a run on no shop (a bare toolbox): no status words to check an answer by


@dataclass(frozen=True)
class Shop:
    name: str
    instructions: str
    vocabulary: Vocabulary
    offline: Callable[[], Model]
    eval_suite: Path | None = None
    sample: Path | None = None
    limit_defaults: Mapping[str, int | float] = field(default_factory=dict)
