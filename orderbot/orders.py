"""Orders: the model of one order, the store that loads orders.json, and the order tools."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from orderbot.errors import OrdersFileError
from orderbot.tools import Tool, ToolContext

Status = Literal["待付款", "处理中", "已发货", "已签收", "已取消", "退款中", "已退款"]
# While an order is in one of these states it has not left the warehouse: it may be cancelled.
CANCELLABLE: frozenset[str] = frozenset({"待付款", "处理中"})
NOT_FOUND = "不存在"  # the article's answer for an unknown id

SAMPLE_PATH = Path(__file__).with_name("sample_orders.json")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LineItem(_Strict):
    sku: str
    name: str
    quantity: int = Field(gt=0)
    unit_price: float = Field(ge=0)


class Shipping(_Strict):
    carrier: str | None = None
    tracking_number: str | None = None
    city: str | None = None


class Order(_Strict):
    order_id: str = Field(pattern=r"^ORD-", max_length=32)
    customer_id: str = Field(min_length=1, max_length=32)
    status: Status
    items: list[LineItem] = Field(min_length=1)
    total: float = Field(ge=0)
    currency: str = Field(min_length=3, max_length=3)
    created_at: datetime
    updated_at: datetime
    shipping: Shipping | None = None
    note: str | None = None


class OrdersFile(_Strict):
    orders: list[Order]


def _check_order_id(value: str) -> str:
    # The article's contract, kept by the tool itself: the request came from a model.
    if not value.startswith("ORD-"):
        raise ValueError("order id must start with 'ORD-'")
    return value


OrderId = Annotated[str, Field(max_length=32, description="The order id, e.g. ORD-1001."), AfterValidator(_check_order_id)]


class OrderIdArgs(_Strict):
    order_id: OrderId


class OrderStore:
    """Orders by id, loaded and validated in one pass from a JSON file."""

    def __init__(self, path: Path, orders: dict[str, Order], *, writable: bool = True) -> None:
        self.path = path
        self.orders = orders
        self.writable = writable

    @classmethod
    def load(cls, path: Path, *, writable: bool = True) -> "OrderStore":
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise OrdersFileError(f"{path}: no such file (pass --orders or set ORDERBOT_ORDERS)") from None
        except OSError as exc:
            raise OrdersFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        try:
            parsed = OrdersFile.model_validate_json(raw)
        except ValidationError as exc:
            raise OrdersFileError(describe_load_error(path, raw, exc)) from None
        orders = {order.order_id: order for order in parsed.orders}
        if len(orders) != len(parsed.orders):
            seen: set[str] = set()
            for index, order in enumerate(parsed.orders):
                if order.order_id in seen:
                    raise OrdersFileError(f"{path}: order #{index + 1} repeats the id {order.order_id}")
                seen.add(order.order_id)
        return cls(path, orders, writable=writable)

    def __len__(self) -> int:
        return len(self.orders)

    def get(self, order_id: str) -> Order | None:
        return self.orders.get(order_id)


def describe_load_error(path: Path, raw: bytes, exc: ValidationError) -> str:
    """One line naming the file, the place and what was expected."""
    first = exc.errors(include_url=False)[0]
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
    if first["type"] == "json_invalid":
        detail = first.get("ctx", {}).get("error", "invalid JSON")
        return f"{path}: not valid JSON: {detail}"
    loc = first["loc"]
    if not loc:
        return f"{path}: expected an object like {{\"orders\": [...]}}, {first['msg'].lower()}{tail}"
    if loc[0] != "orders" or len(loc) == 1:
        return f"{path}: expected {{\"orders\": [...]}}: {'.'.join(map(str, loc))}: {first['msg']}{tail}"
    index = loc[1]
    where = f"order #{index + 1}" if isinstance(index, int) else "orders"
    if isinstance(index, int):
        # Only on this error path do we parse again, to name the order by its id.
        try:
            order_id = json.loads(raw)["orders"][index].get("order_id")
        except Exception:  # noqa: BLE001 - naming the order is a courtesy
            order_id = None
        if isinstance(order_id, str):
            where += f" ({order_id[:32]})"
    field = ".".join(map(str, loc[2:])) or "the order itself"
    return f"{path}: {where}, field {field}: {first['msg']}{tail}"


# ---- tools --------------------------------------------------------------------------


def order_tools(store: OrderStore) -> list[Tool]:
    """The order tools, bound to one store."""

    def get_order_status(args: OrderIdArgs, ctx: ToolContext) -> dict:
        order = store.get(args.order_id)
        return {"order_id": args.order_id, "status": order.status if order else NOT_FOUND}

    return [
        Tool(
            name="get_order_status",
            description="查询订单状态，只能用于用户明确提供订单号的只读查询。Look up an order's status by its exact id.",
            args=OrderIdArgs,
            run=get_order_status,
        ),
    ]
