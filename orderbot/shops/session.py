"""What a command needs before a run: settings turned into orders, tools and a model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orderbot.loop.tools import Toolbox
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores import open_store
from orderbot.shops.sample.stores.base import Store
from orderbot.shops.sample.tools import INSTRUCTIONS, order_tools
from orderbot.shops.source import Source, parse_source

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
    store: Store
    toolbox: Toolbox
    user: str | None = None
    instructions: str = INSTRUCTIONS


def open_session(settings: Settings) -> Session:
    source, writable = orders_source(settings)
    return session_over(source, writable=writable, user=settings.user)


def session_over(source: Source | Path, *, writable: bool, user: str | None = None) -> Session:
    """A session over one orders source, with no settings read (replay uses a scratch copy)."""
    source = source if isinstance(source, Source) else parse_source(source)
    store = open_store(source, writable=writable)
    return Session(source=source, store=store, toolbox=Toolbox(order_tools(store)), user=user)
