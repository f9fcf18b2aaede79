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
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import to_json

from orderbot.errors import OrdersFileError, Phrase
from orderbot.loop.model_text import to_model
from orderbot.text import invalid_json, more_problems, validation_phrase

MAX_AMOUNT = 1_000_000.0  # dollars: a price, balance or payment above this is not a shop's data
MAX_ID_CHARS = 64
MAX_TEXT_CHARS = 256
MAX_LIST = 1_000  # items, fulfilments, payments, orders of one user, variants of one product

# Characters that are not text: controls, format characters (bidi overrides, zero-width),
# private use, line and paragraph separators (a surrogate cannot pass validation at all).
# Records are checked by pydantic's own (Rust) regex, which is what loads a shop quickly:
# a Python validator per string was a third of the load. Tool arguments, a few per call,
# use the Python twins below, whose messages a model can act on (tests check both agree).
_NOT_TEXT_CLASS = r"\p{Cc}\p{Cf}\p{Co}\p{Zl}\p{Zp}"
PLAIN_PATTERN = f"^[^{_NOT_TEXT_CLASS}]*$"
ID_PATTERN = f"^[^\\s{_NOT_TEXT_CLASS}](?:[^{_NOT_TEXT_CLASS}]*[^\\s{_NOT_TEXT_CLASS}])?$"
# Said to the model when a tool's argument is refused (so its own English); a person reads
# the same in the UI language as retail.bad_text and retail.bad_id.
PLAIN_MESSAGE = to_model("plain_text")
ID_MESSAGE = to_model("plain_id")
_NOT_TEXT = frozenset(("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))


def plain(value: str) -> str:
    """The Python twin of PLAIN_PATTERN."""
    # isprintable (C speed) is False for every character refused here, and for a few that are
    # not (other spaces, unassigned code points): only those strings are looked at closely.
    if not value.isprintable() and any(unicodedata.category(ch) in _NOT_TEXT for ch in value):
        raise ValueError(PLAIN_MESSAGE)
    return value


def identifier(value: str) -> str:
    """The Python twin of ID_PATTERN."""
    plain(value)
    if value != value.strip() or not value:
        raise ValueError(ID_MESSAGE)
    return value


def cents(amount: float) -> float:
    """An amount as the shop keeps it: rounded to cents (tau2 rounds with round(x, 2) too)."""
    return round(amount, 2)


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=ID_PATTERN)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS, pattern=PLAIN_PATTERN)]
# Finite (the records' allow_inf_nan=False), within MAX_AMOUNT, kept at cents.
Amount = Annotated[float, Field(ge=0, le=MAX_AMOUNT), AfterValidator(cents)]
SignedAmount = Annotated[float, Field(ge=-MAX_AMOUNT, le=MAX_AMOUNT), AfterValidator(cents)]  # a price difference
Options = Annotated[dict[Text, Text], Field(max_length=32)]
IdList = Annotated[list[Id], Field(max_length=MAX_LIST)]

# For tool arguments: the same rules, with messages a model can act on.
PlainId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(identifier)]
PlainText = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(plain)]

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


class ShopFile(Shop):
    """A shop as a JSON file keeps it: the three sections and, after them, the JSON store's
    ledger of applied calls (orderbot/shops/retail/jsonstore.py), which is never part of
    the shop: an export leaves it out."""

    orderbot_applied_calls: dict[str, Any] = Field(default_factory=dict)


LEDGER = "orderbot_applied_calls"
_FILE = TypeAdapter(ShopFile)


def parse_shop(path: Path | str, raw: bytes | str) -> tuple[Shop, dict[str, Any]]:
    """The shop in `raw` (tau2's JSON), checked, and the ledger of applied calls the file
    holds besides (empty for tau2's own files). OrdersFileError naming the file, record and
    field if invalid. Parsed and validated in one pass by pydantic (about twice as fast as
    json.loads and then validating the objects)."""
    try:
        shop = _FILE.validate_json(raw)
    except ValidationError as exc:
        raise OrdersFileError(describe_error(path, exc)) from None
    check_references(path, shop)
    return shop, shop.orderbot_applied_calls


def shop_from(path: Path | str, document: Any) -> Shop:
    """A shop from a document already parsed (tests, imports)."""
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
                found, expected = repr(key_of(record)), repr(key)
                raise OrdersFileError(
                    "retail.record_id_differs", path=path, section=section, key=key, found=found, expected=expected
                )
    for product in shop.products.values():
        for key, variant in product.variants.items():
            if variant.item_id != key:
                where = f"products.{product.product_id}.variants.{key}"
                raise OrdersFileError("retail.item_id_differs", path=path, where=where)
    for user in shop.users.values():
        for key, method in user.payment_methods.items():
            if method.id != key:
                raise OrdersFileError("retail.payment_id_differs", path=path, user=user.user_id, key=key)
    for order in shop.orders.values():
        if order.user_id not in shop.users:
            raise OrdersFileError("retail.unknown_user", path=path, order=order.order_id, user=repr(order.user_id))


def describe_error(path: Path | str, exc: ValidationError) -> Phrase:
    """One line naming the file, the place and what was expected, never the value."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"][:8]) or Phrase("retail.the_shop")
    not_json = invalid_json(exc)
    if not_json is not None:
        return Phrase("error.not_json", {"path": path, "error": not_json})
    if not first["loc"] and first["type"] in ("model_type", "model_attributes_type", "dict_type"):
        return Phrase("retail.not_a_shop", {"path": path})
    if first["type"] == "string_pattern_mismatch":  # the pattern itself says nothing to a person
        message = Phrase("retail.bad_id" if first.get("ctx", {}).get("pattern") == ID_PATTERN else "retail.bad_text")
    elif first["type"] == "string_unicode":
        message = Phrase("retail.bad_text")
    else:
        message = validation_phrase(first)
    return Phrase("retail.bad_field", {"path": path, "where": where, "error": message, "more": more_problems(exc)})


def load_shop(path: Path) -> Shop:
    """A tau2-shaped shop file, read and checked (OrdersFileError if it cannot be)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise OrdersFileError("orders.no_such_file", path=path) from None
    except OSError as exc:
        raise OrdersFileError("orders.unreadable", path=path, reason=exc.strerror or exc) from None
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
    db.json is written (json.dump with indent=4; non-ASCII text is written as UTF-8, not
    escaped), so an unchanged shop exports as that file. Each record is encoded by
    pydantic's serializer: the standard library's indenting encoder is pure Python, several
    times slower. `after`: members to write after the three sections (a store's bookkeeping)."""
    newline, pad = ("\n", " " * indent) if indent else ("", "")
    groups = itertools.groupby(exported, key=lambda record: SECTION_OF[type(record)])
    pending = next(groups, None)
    out.write("{")
    for number, section in enumerate(SECTIONS):
        out.write(("," if number else "") + newline + pad + json.dumps(section) + ": {")
        wrote = False
        if pending is not None and pending[0] == section:
            for record in pending[1]:
                body = record.model_dump_json(indent=indent, exclude_none=True)
                if indent:
                    body = body.replace("\n", "\n" + pad * 2)
                key = to_json(key_of(record)).decode()
                out.write(("," if wrote else "") + newline + pad * 2 + key + ": " + body)
                wrote = True
            pending = next(groups, None)
        out.write((newline + pad if wrote else "") + "}")
    if pending is not None:
        raise ValueError(f"{pending[0]} after the later sections: records must come in export order")
    for key, value in (after or {}).items():
        body = to_json(value, indent=indent).decode()
        out.write("," + newline + pad + json.dumps(key) + ": " + (body.replace("\n", "\n" + pad) if indent else body))
    out.write(newline + "}")
