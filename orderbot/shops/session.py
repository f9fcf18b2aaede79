"""What a command needs before a run: settings turned into a shop (its store, its tools and the
shop itself: orderbot.shops.shop.Shop) and a model.

Which shop a source holds is decided from the data (orderbot.shops.choice); here each shop
brings its tools and its `Shop`. Nothing after this point asks which shop it is: the engine
gets tools, instructions and limits, the facts and views the shop's vocabulary, the offline
provider the shop's planner."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orderbot.errors import ConfigError
from orderbot.loop.budget import Limits
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.limits import LIMIT_SPECS
from orderbot.shops.choice import open_shop_store
from orderbot.shops.sample.shop import SHOP as SAMPLE
from orderbot.shops.sample.tools import order_tools
from orderbot.shops.shop import Shop
from orderbot.shops.source import Source, parse_source
from orderbot.shops.store import ShopStore

if TYPE_CHECKING:
    from orderbot.settings import Settings


# The shop of a fresh machine: its orders are what runs when no orders are named, its suite
# what `orderbot eval` runs without --suite, and replay copies its orders without --orders.
DEFAULT_SHOP = SAMPLE


def orders_source(settings: Settings) -> tuple[Source, bool]:
    """Where the orders are and whether they may be written: --orders / ORDERBOT_ORDERS (a
    path, sqlite:///... or postgresql://...), else ./orders.json, else the sample packaged
    with orderbot (never written)."""
    if settings.orders is not None:
        try:
            return parse_source(settings.orders), True
        except ConfigError as exc:  # not a kind of orders orderbot knows: as typed, a usage error
            raise settings.error_for("orders")(exc.phrase) from None
    local = Path("orders.json")
    if local.is_file():
        return parse_source(local), True
    return parse_source(DEFAULT_SHOP.sample), False


@dataclass
class Session:
    """The orders a run works on, the tools over them, what the model is told, and who is asking."""

    source: Source
    store: ShopStore  # the sample shop's Store, or the retail shop's RetailStore
    toolbox: Toolbox
    shop: Shop
    user: str | None = None

    def orders_digest(self) -> str | None:
        """The SHA-256 of the orders file's bytes as they are now; None for a database (or a
        file that cannot be read): what a run record keeps so replay can tell whether the data
        it is given is the data the run saw."""
        if self.source.kind != "json" or self.source.path is None:
            return None
        try:
            return hashlib.sha256(self.source.path.read_bytes()).hexdigest()
        except OSError:
            return None

    def limits(self, settings: Settings) -> Limits:
        """The run's limits: each one set by a flag, ORDERBOT_* or .env as set, else the shop's
        default, else the table's (orderbot.loop.limits)."""
        chosen = {
            limit.name: getattr(settings, limit.name)
            if limit.name in settings.model_fields_set
            else self.shop.limit_defaults.get(limit.name, getattr(settings, limit.name))
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
    return Session(source=source, store=store, toolbox=Toolbox(order_tools(store)), shop=SAMPLE, user=user)


def retail_session(source: Source, store, *, user: str | None) -> Session:
    # Here, as the retail stores are in choice.py: only a run on the retail shop loads its models.
    from orderbot.shops.retail import shop
    from orderbot.shops.retail.tools import retail_tools

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
        shop=shop.SHOP,
    )


def shop_named(name: str | None) -> Shop:
    """The shop a stored run names (RunRecord.shop); a record older than that field is read
    as the default shop's, as every record was before it."""
    if name is None or name == DEFAULT_SHOP.name:
        return DEFAULT_SHOP
    from orderbot.shops.retail.shop import SHOP as RETAIL  # as in retail_session: only when asked for

    if name != RETAIL.name:
        raise ConfigError("runs.unknown_shop", shop=name)
    return RETAIL
