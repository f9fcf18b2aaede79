"""`orderbot orders list` and `orders show` as a person reads them: headings and field
names in the UI language, the order data as the store holds it (escaped: it is outside
text), money as the shop writes it (its Vocabulary.money: ¥227.00). --json is the command's own business."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from orderbot.i18n import t
from orderbot.i18n.catalogue import MESSAGES
from orderbot.ui.escape import visible

DEFAULT_CURRENCY = "CNY"


Money = Callable[[float, str], str]  # an amount and its currency as the shop writes them


def print_order_list(
    console: Console, rows: list[dict], *, more: bool, next_offset: int, with_customer: bool, money: Money
) -> None:
    """Order summaries (orderbot.shops.sample.model.order_summary, with `customer_id` under
    --all), one a row, and how to see the next page when there is one."""
    headings = [t(f"orders.heading.{h}") for h in ("order", *(["customer"] if with_customer else []), "status")]
    headings += [t("orders.heading.total"), t("orders.heading.created")]
    cells = [
        [row["order_id"], *([row["customer_id"]] if with_customer else []), row["status"]]
        + [money(row["total"], row["currency"]), row["created_at"]]
        for row in rows
    ]
    _print_listing(console, headings, cells, more=more, next_offset=next_offset)


def _print_listing(
    console: Console, headings: list[str], rows: list[list[str]], *, more: bool, next_offset: int
) -> None:
    """A listing of orders, one a row (the cells are data: never Rich markup), and how to
    see the next page when there is one."""
    if not rows:
        console.print(t("orders.none"), markup=False)
        return
    table = Table(box=None, pad_edge=False)
    for heading in headings:
        table.add_column(heading, no_wrap=True)
    for cells in rows:
        table.add_row(*(Text(visible(cell, one_line=True)) for cell in cells))
    console.print(table)
    if more:
        console.print(t("orders.more", offset=next_offset), markup=False)


def print_order(console: Console, doc: dict, *, money: Money) -> None:
    """One order (orderbot.shops.sample.model.order_details, or only its id and status),
    a field a line: each item on its own, the shipping fields one by one."""
    currency = doc.get("currency", DEFAULT_CURRENCY)
    lines = []
    for key, value in doc.items():
        if key == "items":
            for item in value:
                price = money(item["unit_price"], currency)
                line = t("orders.item", name=item["name"], sku=item["sku"], quantity=item["quantity"], price=price)
                lines.append(line)
        elif key == "shipping":
            lines.extend(_field(f"shipping.{k}", v) for k, v in value.items())
        elif key == "total" and isinstance(value, int | float):
            lines.append(_field(key, money(value, currency)))
        elif key == "currency":  # in the total's symbol
            continue
        else:
            lines.append(_field(key, value))
    for line in lines:
        console.print(visible(line, one_line=True), markup=False, soft_wrap=True)


def _field(key: str, value: object) -> str:
    """`label: value`, the label in the UI language; a field the catalogue does not know
    (a store with more) under its own name."""
    label = t(f"orders.field.{key}") if f"orders.field.{key}" in MESSAGES else key
    return t("orders.field", label=label, value=value)


# ---- the retail shop (tau2's shape): no dates, no currency field (its amounts are dollars) ---


def print_retail_list(
    console: Console, rows: list[dict], *, more: bool, next_offset: int, with_customer: bool, money: Money
) -> None:
    """Retail order summaries (orderbot.commands.orders.retail_summary), one a row."""
    names = ("order", *(["customer"] if with_customer else []), "status", "items", "paid")
    cells = [
        [row["order_id"], *([row["customer_id"]] if with_customer else []), row["status"]]
        + [str(row["items"]), money(row["paid"], "USD")]
        for row in rows
    ]
    headings = [t(f"retail_orders.heading.{name}") for name in names]
    _print_listing(console, headings, cells, more=more, next_offset=next_offset)


def print_retail_order(console: Console, doc: dict, *, money: Money) -> None:
    """One retail order as tau2 keeps it (orderbot.shops.retail.data.dump): its customer,
    status and address, then each item, each fulfilment and each payment on a line."""
    address = doc["address"]
    where = ", ".join(
        str(address[k]) for k in ("address1", "address2", "city", "state", "zip", "country") if address.get(k)
    )
    lines = [
        _retail_field("order_id", doc["order_id"]),
        _retail_field("customer", doc["user_id"]),
        _retail_field("status", doc["status"]),
        _retail_field("address", where),
    ]
    for item in doc["items"]:
        options = ", ".join(f"{k}: {v}" for k, v in item["options"].items())
        lines.append(
            t(
                "retail_orders.item",
                name=item["name"],
                item_id=item["item_id"],
                options=options,
                price=money(item["price"], "USD"),
            )
        )
    for fulfilment in doc["fulfillments"]:
        lines.append(
            t(
                "retail_orders.fulfilment",
                tracking=", ".join(fulfilment["tracking_id"]),
                items=", ".join(fulfilment["item_ids"]),
            )
        )
    for payment in doc["payment_history"]:
        kind = t("retail_orders.refund" if payment["transaction_type"] == "refund" else "retail_orders.payment_kind")
        lines.append(
            t(
                "retail_orders.payment",
                kind=kind,
                amount=money(payment["amount"], "USD"),
                method=payment["payment_method_id"],
            )
        )
    shown = {"order_id", "user_id", "status", "address", "items", "fulfillments", "payment_history"}
    lines += [_retail_field(key, value) for key, value in doc.items() if key not in shown]  # cancel, return, exchange
    for line in lines:
        console.print(visible(line, one_line=True), markup=False, soft_wrap=True)


def _retail_field(key: str, value: object) -> str:
    label = t(f"retail_orders.field.{key}") if f"retail_orders.field.{key}" in MESSAGES else key
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    return t("orders.field", label=label, value=value)
