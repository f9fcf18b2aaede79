"""What a command needs before a run: settings turned into orders, tools and a model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orderbot.orders import INSTRUCTIONS, SAMPLE_PATH, OrderStore, order_tools
from orderbot.tools import Toolbox

if TYPE_CHECKING:
    from orderbot.settings import Settings


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
    """The orders a run works on, the tools over them, what the model is told, and who is asking."""

    store: OrderStore
    toolbox: Toolbox
    user: str | None = None
    instructions: str = INSTRUCTIONS


def open_session(settings: Settings) -> Session:
    path, writable = orders_path(settings)
    return session_over(path, writable=writable, user=settings.user)


def session_over(path: Path, *, writable: bool, user: str | None = None) -> Session:
    """A session over one orders file, with no settings read (replay uses a scratch copy)."""
    store = OrderStore.load(path, writable=writable)
    return Session(store=store, toolbox=Toolbox(order_tools(store)), user=user)
