"""The sample shop's data: one order, its statuses, and what the owner may see of it. The
stores (orderbot.shops.sample.stores) keep orders; the tools (orderbot.shops.sample.tools) ask them."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass

from orderbot.errors import ToolError
from orderbot.loop.model_text import to_model

Status = Literal["待付款", "处理中", "已发货", "已签收", "已取消", "退款中", "已退款"]
STATUSES: frozenset[str] = frozenset(get_args(Status))


# While an order is in one of these states it has not left the warehouse: it may be cancelled.
CANCELLABLE: frozenset[str] = frozenset({"待付款", "处理中"})


NOT_FOUND = "不存在"  # the status an unknown id gets: a lookup by id answers, never fails


# The store's status vocabulary in English: the offline model answers with the first word,
# and the claim check (orderbot.answers.claims) recognises every one of them in an answer.
STATUS_WORDS_EN: dict[str, tuple[str, ...]] = {
    "待付款": ("awaiting payment", "pending payment", "unpaid"),
    "处理中": ("processing",),
    "已发货": ("shipped",),
    "已签收": ("delivered",),
    "已取消": ("cancelled", "canceled"),
    "退款中": ("refund in progress", "refunding"),
    "已退款": ("refunded",),
}


CANCELLED: Status = "已取消"


MAX_LISTED = 20


MAX_REASON_CHARS = 200


# One message for "someone else's order" and "no such order": a refusal must not tell a
# stranger whether an order id exists.
NO_ACCESS = to_model("no_access")


READ_ONLY = to_model("sample_read_only")


CURRENCY_SYMBOLS = {"CNY": "¥"}


SAMPLE_PATH = Path(__file__).with_name("sample_orders.json")


# What an order may hold, the same for every store (a JSON file, SQLite, PostgreSQL), so
# an order one store takes the others take too and a hostile id is answered alike by all.
# Ids are plain ASCII: no control characters and no look-alikes (a Cyrillic О, a fullwidth
# １) that would show as another order's id. Text may hold any character but NUL, which
# PostgreSQL cannot store; the other controls are kept and shown escaped. An amount is a
# finite number of at most a trillion, which a double holds to the cent.
ORDER_ID_PATTERN = r"^ORD-[A-Za-z0-9][A-Za-z0-9_-]{0,27}$"
CUSTOMER_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,31}$"
TEXT_PATTERN = r"^[^\x00]*$"
MAX_AMOUNT = 1e12
MAX_QUANTITY = 1_000_000
_ORDER_ID = re.compile(ORDER_ID_PATTERN)
_CUSTOMER_ID = re.compile(CUSTOMER_ID_PATTERN)

OrderId = Annotated[str, Field(pattern=ORDER_ID_PATTERN)]
CustomerId = Annotated[str, Field(pattern=CUSTOMER_ID_PATTERN)]
Text = Annotated[str, Field(pattern=TEXT_PATTERN)]
Amount = Annotated[float, Field(ge=0, le=MAX_AMOUNT, allow_inf_nan=False)]

# What a refused field was expected to be: the catalogue entry an error message says it with
# (describe_load_error), where pydantic would quote the pattern.
EXPECTED = {
    ORDER_ID_PATTERN: "orders.expected_order_id",
    CUSTOMER_ID_PATTERN: "orders.expected_customer_id",
    TEXT_PATTERN: "orders.expected_text",
}


def is_order_id(value: object) -> bool:
    """Whether `value` could be an order's id: a store answers any other id "no such order"
    without asking its database, so every store answers a hostile id alike."""
    return isinstance(value, str) and _ORDER_ID.fullmatch(value) is not None


def is_customer_id(value: object) -> bool:
    return isinstance(value, str) and _CUSTOMER_ID.fullmatch(value) is not None


# Orders are slotted pydantic dataclasses, not BaseModels: a BaseModel instance carries a
# __dict__ and a set of the fields that were set, which doubled the memory of a loaded file
# and added a third to its load time (benchmarks/README.md). Validation is the same.
_ORDER_CONFIG = ConfigDict(extra="forbid")


_record = dataclass(config=_ORDER_CONFIG, frozen=True, slots=True)


@_record
class LineItem:
    sku: Text
    name: Text
    quantity: Annotated[int, Field(gt=0, le=MAX_QUANTITY)]
    unit_price: Amount


@_record
class Shipping:
    carrier: Text | None = None
    tracking_number: Text | None = None
    city: Text | None = None


@_record
class Order:
    order_id: OrderId
    customer_id: CustomerId
    status: Status
    items: Annotated[list[LineItem], Field(min_length=1)]
    total: Amount
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    created_at: datetime
    updated_at: datetime
    shipping: Shipping | None = None
    note: Text | None = None
    # Written when orderbot cancels the order. cancelled_by names the approved call that did
    # it ("run_id/call_id"), so a resumed run repeating that call finds it already done.
    cancelled_at: datetime | None = None
    cancel_reason: Text | None = None
    cancelled_by: Text | None = None


@_record
class OrdersFile:
    orders: list[Order]


ORDERS_FILE = TypeAdapter(OrdersFile)


ORDER = TypeAdapter(Order)


def local_now() -> datetime:
    """The time a cancellation is stamped with: local, to the second."""
    return datetime.now().astimezone().replace(microsecond=0)


def newest_first(order: Order) -> tuple[float, str]:
    """The sort key of every listing, the same in every store: newest, then highest id."""
    return (order.created_at.timestamp(), order.order_id)


def ensure_cancellable(order: Order) -> None:
    if order.status not in CANCELLABLE:
        allowed = " or ".join(sorted(CANCELLABLE))
        raise ToolError(
            to_model("not_cancellable", order_id=order.order_id, status=order.status, allowed=allowed),
            "not_cancellable",
        )


def format_money(amount: float, currency: str) -> str:
    symbol = CURRENCY_SYMBOLS.get(currency)
    return f"{symbol}{amount:.2f}" if symbol else f"{currency} {amount:.2f}"


def order_details(order: Order) -> dict:
    """Everything the owner may see. The note stays a field inside this data: the model is
    told that tool results are data, and the offline model never reads it as a request."""
    return ORDER.dump_python(order, mode="json", exclude={"customer_id", "cancelled_by"}, exclude_none=True)


def order_summary(order: Order) -> dict:
    return {
        "order_id": order.order_id,
        "status": order.status,
        "total": order.total,
        "currency": order.currency,
        "created_at": order.created_at.isoformat(),
    }


def cancel_result(order: Order) -> dict:
    """Built only from what is stored, so a repeated call gets exactly the first answer."""
    data = ORDER.dump_python(order, mode="json", include={"order_id", "status", "cancelled_at", "cancel_reason"})
    return {
        "order_id": data["order_id"],
        "status": data["status"],
        "cancelled_at": data["cancelled_at"],
        "reason": data["cancel_reason"],
    }
