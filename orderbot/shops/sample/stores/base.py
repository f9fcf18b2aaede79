"""The interface every sample-shop store implements; it imports only the order model."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from orderbot.shops.sample.model import Order


class Store(Protocol):
    source: str  # where the orders are, safe to show and to record: never a password
    writable: bool
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

    def count(self) -> int: ...

    def close(self) -> None: ...
