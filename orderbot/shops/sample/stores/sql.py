"""What the SQLite and PostgreSQL stores share: the schema, rows <-> orders, and the four
store questions written once in SQL. Each database module supplies the connection, runs
the statements and turns its driver's errors into orderbot's.

Tables (schema_version 1):

    orders        one row per order; timestamps kept as the text the order was given with
                  (so every store answers with the same strings) plus created_epoch to sort
    line_items    (order_id, position) -> sku, name, quantity, unit_price
    shipping      order_id -> carrier, tracking_number, city (no row: no shipping)
    schema_version  one row: the version of this layout, so a later one can migrate
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import groupby, islice

from pydantic import TypeAdapter, ValidationError

from orderbot.errors import ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.sample.model import (
    CANCELLABLE,
    CANCELLED,
    NO_ACCESS,
    ORDER,
    READ_ONLY,
    STATUSES,
    Order,
    cancel_result,
    ensure_cancellable,
    is_customer_id,
    is_order_id,
    local_now,
)

log = logging.getLogger("orderbot")

SCHEMA_VERSION = 1
UNAVAILABLE = to_model("orders_db_unavailable")
TIMESTAMP = TypeAdapter(datetime)
TABLES = ("line_items", "shipping", "orders", "schema_version")  # the order to drop them in
ORDER_COLUMNS = (
    "order_id",
    "customer_id",
    "status",
    "total",
    "currency",
    "created_at",
    "created_epoch",
    "updated_at",
    "note",
    "cancelled_at",
    "cancel_reason",
    "cancelled_by",
)
ITEM_COLUMNS = ("order_id", "position", "sku", "name", "quantity", "unit_price")
SHIPPING_COLUMNS = ("order_id", "carrier", "tracking_number", "city")
_SELECT = (
    "SELECT o.order_id, o.customer_id, o.status, o.total, o.currency, o.created_at, o.updated_at, o.note, "
    "o.cancelled_at, o.cancel_reason, o.cancelled_by, s.order_id, s.carrier, s.tracking_number, s.city "
    "FROM orders o LEFT JOIN shipping s ON s.order_id = o.order_id"
)
_NEWEST = "ORDER BY o.created_epoch DESC, o.order_id DESC"
CANCEL_SQL = (
    "UPDATE orders SET status = ?, updated_at = ?, cancelled_at = ?, cancel_reason = ?, cancelled_by = ? "
    f"WHERE order_id = ? AND customer_id = ? AND status IN ({', '.join('?' for _ in CANCELLABLE)})"
)


def tables(real: str, key: str) -> list[str]:
    """CREATE TABLE statements; `real` is the floating type, `key` the text type of ids
    (PostgreSQL's needs COLLATE "C" to sort ids as every other store does)."""
    return [
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        f"CREATE TABLE orders (order_id {key} PRIMARY KEY, customer_id {key} NOT NULL, status TEXT NOT NULL, "
        f"total {real} NOT NULL, currency TEXT NOT NULL, created_at TEXT NOT NULL, created_epoch {real} NOT NULL, "
        "updated_at TEXT NOT NULL, note TEXT, cancelled_at TEXT, cancel_reason TEXT, cancelled_by TEXT)",
        f"CREATE TABLE line_items (order_id {key} NOT NULL REFERENCES orders (order_id) ON DELETE CASCADE, "
        f"position INTEGER NOT NULL, sku TEXT NOT NULL, name TEXT NOT NULL, quantity INTEGER NOT NULL, "
        f"unit_price {real} NOT NULL, PRIMARY KEY (order_id, position))",
        f"CREATE TABLE shipping (order_id {key} PRIMARY KEY REFERENCES orders (order_id) ON DELETE CASCADE, "
        "carrier TEXT, tracking_number TEXT, city TEXT)",
    ]


# Built after the rows are in: one sort per index instead of a million insertions into it.
INDEXES = [
    "CREATE INDEX orders_by_customer ON orders (customer_id, created_epoch DESC, order_id DESC)",
    "CREATE INDEX orders_by_time ON orders (created_epoch DESC, order_id DESC)",
]


def rows_of(orders: Iterable[Order]) -> Iterator[tuple[tuple, list[tuple], tuple | None]]:
    """(order row, line item rows, shipping row or None) for each order."""
    for order in orders:
        data = ORDER.dump_python(order, mode="json")
        row = (
            data["order_id"],
            data["customer_id"],
            data["status"],
            data["total"],
            data["currency"],
            data["created_at"],
            order.created_at.timestamp(),
            data["updated_at"],
            data["note"],
            data["cancelled_at"],
            data["cancel_reason"],
            data["cancelled_by"],
        )
        items = [
            (order.order_id, position, item.sku, item.name, item.quantity, item.unit_price)
            for position, item in enumerate(order.items)
        ]
        shipping = order.shipping
        ship = (order.order_id, shipping.carrier, shipping.tracking_number, shipping.city) if shipping else None
        yield row, items, ship


def chunks(orders: Iterable[Order], size: int) -> Iterator[tuple[list[tuple], list[tuple], list[tuple]]]:
    """The rows of `size` orders at a time: (order rows, line item rows, shipping rows)."""
    rows = rows_of(orders)
    while chunk := list(islice(rows, size)):
        yield [c[0] for c in chunk], [item for c in chunk for item in c[1]], [c[2] for c in chunk if c[2]]


def order_from(row: tuple, items: list[tuple]) -> Order:
    (oid, customer, status, total, currency, created, updated, note, c_at, c_reason, c_by, ship_id, *ship) = row
    data = {
        "order_id": oid,
        "customer_id": customer,
        "status": status,
        "items": [{"sku": s, "name": n, "quantity": q, "unit_price": p} for s, n, q, p in items],
        "total": total,
        "currency": currency,
        "created_at": created,
        "updated_at": updated,
        "shipping": dict(zip(("carrier", "tracking_number", "city"), ship, strict=True)) if ship_id else None,
        "note": note,
        "cancelled_at": c_at,
        "cancel_reason": c_reason,
        "cancelled_by": c_by,
    }
    try:
        return ORDER.validate_python(data)
    except ValidationError as exc:  # a row written by hand, not by orderbot: its values stay out of the message
        log.error("order row %r is not a valid order: %s", oid, exc.errors(include_input=False)[0])
        raise ToolError(UNAVAILABLE, "store_unavailable") from None


class SqlStore:
    """The four store questions in SQL. A subclass provides `_rows` and `_change`, which run
    one statement (with `?` placeholders) within `timeout` seconds and raise ToolError for
    any failure of the database."""

    def __init__(self, source: str, *, writable: bool = True, now: Callable[[], datetime] = local_now) -> None:
        self.source = source
        self.writable = writable
        self.now = now

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        raise NotImplementedError

    def _change(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> int:
        """Run one writing statement in its own transaction; the number of rows changed."""
        raise NotImplementedError

    def get(self, order_id: str, *, timeout: float | None = None) -> Order | None:
        if not is_order_id(order_id):  # no order has it: a NUL or a look-alike never reaches the database
            return None
        found = self._with_items(self._rows(f"{_SELECT} WHERE o.order_id = ?", (order_id,), timeout=timeout), timeout)
        return found[0] if found else None

    def list_orders(
        self,
        customer_id: str | None,
        *,
        status: str | None = None,
        limit: int,
        offset: int = 0,
        timeout: float | None = None,
    ) -> list[Order]:
        if (customer_id is not None and not is_customer_id(customer_id)) or (
            status is not None and status not in STATUSES
        ):
            return []  # as a JSON store answers: nothing has that customer or status
        where, params = [], []
        if customer_id is not None:
            where.append("o.customer_id = ?")
            params.append(customer_id)
        if status is not None:
            where.append("o.status = ?")
            params.append(status)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._rows(f"{_SELECT}{clause} {_NEWEST} LIMIT ? OFFSET ?", (*params, limit, offset), timeout=timeout)
        return self._with_items(rows, timeout)

    def count(self) -> int:
        return self._rows("SELECT count(*) FROM orders")[0][0]

    def refresh(self) -> None:
        """Nothing to do: every query reads the database as it is now."""

    def _with_items(self, rows: list[tuple], timeout: float | None) -> list[Order]:
        if not rows:
            return []
        ids = [row[0] for row in rows]
        marks = ", ".join("?" for _ in ids)
        items = self._rows(
            f"SELECT order_id, sku, name, quantity, unit_price FROM line_items WHERE order_id IN ({marks}) "
            "ORDER BY order_id, position",
            tuple(ids),
            timeout=timeout,
        )
        by_order = {oid: [line[1:] for line in lines] for oid, lines in groupby(items, key=lambda line: line[0])}
        return [order_from(row, by_order.get(row[0], [])) for row in rows]

    def cancel(
        self, order_id: str, reason: str, call_id: str, *, user: str | None, timeout: float | None = None
    ) -> dict:
        """Compare-and-set in one statement: the row changes only if it is the user's and
        still cancellable, so of two approvers racing exactly one sees a row changed, and
        an order changed since the approval was requested is refused."""
        if not self.writable:
            raise ToolError(READ_ONLY, "read_only")
        if not is_order_id(order_id) or user is None or not is_customer_id(user):
            raise ToolError(NO_ACCESS, "no_access")
        stamp = TIMESTAMP.dump_python(self.now(), mode="json")  # the same text a JSON store writes
        changed = self._change(
            CANCEL_SQL,
            (CANCELLED, stamp, stamp, reason, call_id, order_id, user, *sorted(CANCELLABLE)),
            timeout=timeout,
        )
        order = self.get(order_id, timeout=timeout)
        if order is None or user is None or order.customer_id != user:
            raise ToolError(NO_ACCESS, "no_access")
        if changed == 1 or order.cancelled_by == call_id:
            return cancel_result(order)  # a repeat of the call that did it: the same answer
        ensure_cancellable(order)
        raise ToolError(to_model("order_changed", order_id=order_id), "conflict")
