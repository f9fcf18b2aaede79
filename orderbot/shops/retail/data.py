"""The retail shop's records, in exactly tau2-bench's shape: products with variants, users
with addresses and payment methods, orders with items, fulfilments and payment history.

Field names and their order are tau2's (its `data_model.py`), so a record dumped here is
the JSON tau2 holds: `dump` leaves out every field whose value is None and writes amounts at
two decimals. Validation is strict, because a shop file comes from outside: no extra field,
no string where a number belongs, an id or a text without control characters and within a
bounded length, every amount finite and within `MAX_AMOUNT`, a dictionary's key equal to
the id of the record it holds, every order's user in the shop. A broken file is one
`OrdersFileError` naming the file, the record and the field.

Amounts are rounded to cents when a record is made, whatever made it (a file, an action),
so a record written and read back is equal to the one that was written: the stores compare
records to detect a concurrent change.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from orderbot.errors import OrdersFileError

MAX_AMOUNT = 1_000_000.0  # dollars: a price, balance or payment above this is not a shop's data
MAX_ID_CHARS = 64
MAX_TEXT_CHARS = 256
MAX_LIST = 1_000  # items, fulfilments, payments, orders of one user, variants of one product

# Characters that are not text: controls, format characters (bidi overrides, zero-width),
# surrogates, private use, line and paragraph separators.
_NOT_TEXT = frozenset(("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))


_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # the only characters above that ASCII holds


def _plain(value: str) -> str:
    # Nearly every text of a shop is ASCII: one regular-expression scan instead of a
    # category lookup per character (every record read from a file or a database passes here).
    if value.isascii():
        if _ASCII_CONTROL.search(value):
            raise ValueError("must be plain text: no control or format characters")
    elif any(unicodedata.category(ch) in _NOT_TEXT for ch in value):
        raise ValueError("must be plain text: no control or format characters")
    return value


def _identifier(value: str) -> str:
    _plain(value)
    if value != value.strip() or not value:
        raise ValueError("an id must not be empty or start or end with a space")
    return value


def cents(amount: float) -> float:
    """An amount as the shop keeps it: rounded to cents (tau2 rounds with round(x, 2) too)."""
    return round(amount, 2)


def _money(value: float) -> float:
    if not math.isfinite(value) or abs(value) > MAX_AMOUNT:
        raise ValueError(f"an amount must be a finite number of at most {MAX_AMOUNT:,.0f}")
    return cents(value)


def _not_negative(value: float) -> float:
    if value < 0:
        raise ValueError("must not be negative")
    return value


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_identifier)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_plain)]
Amount = Annotated[float, AfterValidator(_money), AfterValidator(_not_negative)]
SignedAmount = Annotated[float, AfterValidator(_money)]  # a price difference: either way
Options = Annotated[dict[Text, Text], Field(max_length=32)]
IdList = Annotated[list[Id], Field(max_length=MAX_LIST)]

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CancelReason = Literal["no longer needed", "ordered by mistake"]


class Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


# ---- products --------------------------------------------------------------------------


class Variant(Record):
    item_id: Id
    options: Options
    available: bool
    price: Amount


class Product(Record):
    name: Text
    product_id: Id
    variants: Annotated[dict[Id, Variant], Field(max_length=MAX_LIST)]


# ---- users -----------------------------------------------------------------------------


class UserName(Record):
    first_name: Text
    last_name: Text


class Address(Record):
    address1: Text
    address2: Text
    city: Text
    country: Text
    state: Text
    zip: Text


class CreditCard(Record):
    source: Literal["credit_card"]
    id: Id
    brand: Text
    last_four: Annotated[str, Field(pattern=r"^[0-9]{4}$")]


class Paypal(Record):
    source: Literal["paypal"]
    id: Id


class GiftCard(Record):
    source: Literal["gift_card"]
    id: Id
    balance: Amount


PaymentMethod = Annotated[CreditCard | GiftCard | Paypal, Field(discriminator="source")]


class User(Record):
    user_id: Id
    name: UserName
    address: Address
    email: Text
    payment_methods: Annotated[dict[Id, PaymentMethod], Field(max_length=MAX_LIST)]
    orders: IdList


# ---- orders ----------------------------------------------------------------------------


class Fulfillment(Record):
    tracking_id: IdList
    item_ids: IdList


class OrderItem(Record):
    name: Text
    product_id: Id
    item_id: Id
    price: Amount
    options: Options


class Payment(Record):
    transaction_type: Literal["payment", "refund"]
    amount: Amount
    payment_method_id: Id


class Order(Record):
    order_id: Id
    user_id: Id
    address: Address
    items: Annotated[list[OrderItem], Field(max_length=MAX_LIST)]
    status: OrderStatus
    fulfillments: Annotated[list[Fulfillment], Field(max_length=MAX_LIST)]
    payment_history: Annotated[list[Payment], Field(max_length=MAX_LIST)]
    cancel_reason: CancelReason | None = None
    exchange_items: IdList | None = None
    exchange_new_items: IdList | None = None
    exchange_payment_method_id: Id | None = None
    exchange_price_difference: SignedAmount | None = None
    return_items: IdList | None = None
    return_payment_method_id: Id | None = None


class Shop(BaseModel):
    """A whole shop as tau2 keeps it, each section a dictionary by id in the shop's order."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    products: dict[Id, Product]
    users: dict[Id, User]
    orders: dict[Id, Order]


SECTIONS = ("products", "users", "orders")
KEY_FIELD = {Product: "product_id", User: "user_id", Order: "order_id"}
SECTION_OF = {Product: "products", User: "users", Order: "orders"}
_SHOP = TypeAdapter(Shop)


def key_of(record: Product | User | Order) -> str:
    """The id a record is kept under."""
    return getattr(record, KEY_FIELD[type(record)])


def dump(record: Record) -> dict:
    """A record as tau2's JSON: its fields in tau2's order, no field whose value is None,
    amounts at two decimals (they are kept so, see `cents`)."""
    return record.model_dump(mode="json", exclude_none=True)


# ---- whole shops ----------------------------------------------------------------------


def parse_shop(path: Path | str, raw: bytes | str, *, extra_keys: Iterable[str] = ()) -> tuple[Shop, dict]:
    """The shop in `raw` (tau2's JSON), checked, and the top-level members named in
    `extra_keys` that the file holds besides its three sections (a store's own bookkeeping,
    never part of the shop). OrdersFileError naming the file, record and field if invalid."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise OrdersFileError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise OrdersFileError(f'{path}: expected an object like {{"products": ..., "users": ..., "orders": ...}}')
    kept = {key: document.pop(key) for key in list(extra_keys) if key in document}
    return shop_from(path, document), kept


def shop_from(path: Path | str, document: Any) -> Shop:
    try:
        shop = _SHOP.validate_python(document)
    except ValidationError as exc:
        raise OrdersFileError(describe_error(path, exc)) from None
    check_references(path, shop)
    return shop


def check_references(path: Path | str, shop: Shop) -> None:
    """What a field validator cannot see: each record under its own id, each order's user
    in the shop, each payment method and variant under its own id."""
    for section in SECTIONS:
        for key, record in getattr(shop, section).items():
            if key_of(record) != key:
                raise OrdersFileError(f"{path}: {section}.{key}: the record's id is {key_of(record)!r}, not {key!r}")
    for product in shop.products.values():
        for key, variant in product.variants.items():
            if variant.item_id != key:
                where = f"products.{product.product_id}.variants.{key}"
                raise OrdersFileError(f"{path}: {where}: item_id differs from the key")
    for user in shop.users.values():
        for key, method in user.payment_methods.items():
            if method.id != key:
                raise OrdersFileError(f"{path}: users.{user.user_id}.payment_methods.{key}: id differs from the key")
    for order in shop.orders.values():
        if order.user_id not in shop.users:
            raise OrdersFileError(f"{path}: orders.{order.order_id}: user {order.user_id!r} is not in the shop")


def describe_error(path: Path | str, exc: ValidationError) -> str:
    """One line naming the file, the place and what was expected, never the value."""
    first = exc.errors(include_url=False, include_input=False)[0]
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
    where = ".".join(str(part) for part in first["loc"][:8]) or "the shop"
    return f"{path}: {where}: {first['msg']}{tail}"


def load_shop(path: Path) -> Shop:
    """A tau2-shaped shop file, read and checked (OrdersFileError if it cannot be)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise OrdersFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise OrdersFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return parse_shop(path, raw)[0]


def records(shop: Shop) -> Iterator[Product | User | Order]:
    """Every record of a shop in export order: products, users, orders, each in the shop's order."""
    for section in SECTIONS:
        yield from getattr(shop, section).values()


def document(exported: Iterable[Product | User | Order]) -> dict:
    """The tau2 document (`{"products": {...}, "users": {...}, "orders": {...}}`) of exported records."""
    sections: dict[str, dict] = {section: {} for section in SECTIONS}
    for record in exported:
        sections[SECTION_OF[type(record)]][key_of(record)] = dump(record)
    return sections


def write_document(
    exported: Iterable[Product | User | Order],
    out: IO[str],
    *,
    indent: int | None = 4,
    after: Mapping[str, Any] | None = None,
) -> None:
    """The tau2 document of exported records written to `out` one record at a time, so a
    million orders never sit in memory as one document. Records must come in export order
    (a store's `export` promises it). Indented by 4 it is byte for byte how tau2's own
    db.json is written (json.dump with indent=4), so an unchanged shop exports as that file.
    `after`: members to write after the three sections (a store's own bookkeeping)."""
    newline, pad = ("\n", " " * indent) if indent else ("", "")
    groups = itertools.groupby(exported, key=lambda record: SECTION_OF[type(record)])
    pending = next(groups, None)
    out.write("{")
    for number, section in enumerate(SECTIONS):
        out.write(("," if number else "") + newline + pad + json.dumps(section) + ": {")
        wrote = False
        if pending is not None and pending[0] == section:
            for record in pending[1]:
                body = json.dumps(dump(record), indent=indent, ensure_ascii=True)
                if indent:
                    body = body.replace("\n", "\n" + pad * 2)
                key = json.dumps(key_of(record), ensure_ascii=True)
                out.write(("," if wrote else "") + newline + pad * 2 + key + ": " + body)
                wrote = True
            pending = next(groups, None)
        out.write((newline + pad if wrote else "") + "}")
    if pending is not None:
        raise ValueError(f"{pending[0]} after the later sections: records must come in export order")
    for key, value in (after or {}).items():
        body = json.dumps(value, indent=indent, ensure_ascii=True)
        out.write("," + newline + pad + json.dumps(key) + ": " + (body.replace("\n", "\n" + pad) if indent else body))
    out.write(newline + "}")
