"""What a command needs before a run: settings turned into a shop (its store, tools,
instructions and limits) and a model.

Which shop a source holds is decided from the data (orderbot.shops.choice); here each shop
brings its tools, instructions and limits. Nothing after this point asks which shop it is:
the engine gets tools, instructions and limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orderbot.loop.budget import Limits
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.limits import LIMIT_SPECS
from orderbot.shops.choice import open_shop_store
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.tools import INSTRUCTIONS, order_tools
from orderbot.shops.source import Source, parse_source
from orderbot.shops.store import ShopStore

if TYPE_CHECKING:
    from orderbot.settings import Settings


def orders_source(settings: Settings) -> tuple[Source, bool]:
    """Where the orders are and whether they may be written: --orders / ORDERBOT_ORDERS (a
    path, sqlite:///... or postgresql://...), else ./orders.json, else the sample packaged
    with orderbot (never written)."""
    if settings.orders is not None:
        return parse_source(settings.orders), True
    local = Path("orders.json")
    if local.is_file():
        return parse_source(local), True
    return parse_source(SAMPLE_PATH), False


@dataclass
class Session:
    """The orders a run works on, the tools over them, what the model is told, and who is asking."""

    source: Source
    store: ShopStore  # the sample shop's Store, or the retail shop's RetailStore
    toolbox: Toolbox
    user: str | None = None
    instructions: str = INSTRUCTIONS
    shop: str = "sample"  # which shop, for doctor and the docs; nothing decides on it
    limit_defaults: Mapping[str, int | float] = field(default_factory=dict)  # the shop's own defaults

    def limits(self, settings: Settings) -> Limits:
        """The run's limits: each one set by a flag, ORDERBOT_* or .env as set, else the shop's
        default, else the table's (orderbot.loop.limits)."""
        chosen = {
            limit.name: getattr(settings, limit.name)
            if limit.name in settings.model_fields_set
            else self.limit_defaults.get(limit.name, getattr(settings, limit.name))
            for limit in LIMIT_SPECS
        }
        return Limits(**chosen)


def open_session(settings: Settings) -> Session:
    source, writable = orders_source(settings)
    return session_over(source, writable=writable, user=settings.user)


def session_over(source: Source | Path, *, writable: bool, user: str | None = None) -> Session:
    """A session over one orders source, with no settings read (replay uses a scratch copy)."""
    source = source if isinstance(source, Source) else parse_source(source)
    shop, store = open_shop_store(source, writable=writable)
    if shop == "retail":
        return retail_session(source, store, user=user)
    return Session(source=source, store=store, toolbox=Toolbox(order_tools(store)), user=user)


def retail_session(source: Source, store, *, user: str | None) -> Session:
    # Here, as the retail stores are in choice.py: only a run on the retail shop loads its models.
    from orderbot.shops.retail import shop
    from orderbot.shops.retail.tools import instructions, retail_tools

    try:
        shop.check_customer(store, user)
    except Exception:
        store.close()
        raise
    return Session(
        source=source,
        store=store,
        toolbox=Toolbox(retail_tools(store)),
        user=user,
        instructions=instructions(),
        shop=shop.NAME,
        limit_defaults=shop.LIMIT_DEFAULTS,
    )
