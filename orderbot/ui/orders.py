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
    if not rows:
        console.print(t("orders.none"), markup=False)
        return
    table = Table(box=None, pad_edge=False)
    for heading in ("order", *(["customer"] if with_customer else []), "status", "total", "created"):
        table.add_column(t(f"orders.heading.{heading}"), no_wrap=True)
    for row in rows:
        cells = [row["order_id"], *([row["customer_id"]] if with_customer else []), row["status"]]
        cells += [money(row["total"], row["currency"]), row["created_at"]]
        table.add_row(*(Text(visible(cell, one_line=True)) for cell in cells))  # data: never Rich markup
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
