"""The interface every sample-shop store implements; it imports only the order model and the
protocol every store of every shop implements (orderbot.shops.store)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from orderbot.shops.store import ShopStore, StoreType

if TYPE_CHECKING:
    from orderbot.shops.sample.model import Order
    from orderbot.shops.source import Source


class Store(ShopStore, Protocol):
    now: Callable[[], datetime]  # the time a cancellation is stamped with (replay pins it)

    def get(self, order_id: str, *, timeout: float | None = None) -> Order | None: ...

    def list_orders(
        self,
        customer_id: str | None,
        *,
        status: str | None = None,
        limit: int,
        offset: int = 0,
        timeout: float | None = None,
    ) -> list[Order]: ...

    def cancel(
        self, order_id: str, reason: str, call_id: str, *, user: str | None, timeout: float | None = None
    ) -> dict: ...


class DatabaseType(StoreType[Store], Protocol):
    """A class of the sample shop's database stores (SQLite, PostgreSQL)."""

    def import_records(
        self,
        source: Source,
        orders: Sequence[Order],
        *,
        replace: bool,
        progress: Callable[[int], None] | None = None,
        other_tables: Sequence[str] = (),
    ) -> int:
        """Write `orders` into the database in one transaction: all of them or none."""
        ...
