"""What a command needs before a run: settings turned into orders, tools and a model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orderbot.orders import SAMPLE_PATH, OrderStore, order_tools
from orderbot.settings import Settings
from orderbot.tools import Toolbox


def orders_path(settings: Settings) -> tuple[Path, bool]:
    """The orders file and whether it may be written: --orders / ORDERBOT_ORDERS, else
    ./orders.json, else the sample packaged with orderbot (never written)."""
    if settings.orders is not None:
        return settings.orders, True
    local = Path("orders.json")
    if local.is_file():
        return local, True
    return SAMPLE_PATH, False


@dataclass
class Session:
    settings: Settings
    store: OrderStore
    toolbox: Toolbox

    @property
    def user(self) -> str | None:
        return self.settings.user


def open_session(settings: Settings) -> Session:
    path, writable = orders_path(settings)
    store = OrderStore.load(path, writable=writable)
    return Session(settings=settings, store=store, toolbox=Toolbox(order_tools(store)))
