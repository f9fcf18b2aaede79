"""Reading a tau2-shaped document (`{"products": {...}, "users": {...}, "orders": {...}}`)
one record at a time, so that importing a million orders never holds the whole file.

`members(path)` yields (section, key, value) for each member of each top-level object, in
the file's order; each value is decoded by the standard JSON decoder alone. The file is
read in blocks as UTF-8 text; a value is accepted only when the text after it is in the
buffer too (a number cut at a block's end would otherwise decode short). Anything that is
not that shape raises StreamError with where it was; the caller decides how to say it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from orderbot.errors import OrdersFileError
from orderbot.shops.retail.data import MAX_ID_CHARS, SECTIONS, Order, Product, User, key_of
from orderbot.shops.retail.jsonstore import LEDGER, parse
from orderbot.shops.sample.stores.jsonfile import read_file

KINDS = {"products": Product, "users": User, "orders": Order}
BLOCK = 1 << 20  # characters read at a time
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class StreamError(ValueError):
    """The document is not JSON, or not a JSON object of objects."""


class _Reader:
    def __init__(self, handle) -> None:
        self.handle = handle
        self.text = ""
        self.at = 0
        self.done = False

    def _more(self) -> bool:
        if self.done:
            return False
        block = self.handle.read(BLOCK)
        if not block:
            self.done = True
            return False
        self.text = self.text[self.at :] + block
        self.at = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            self.at = _SPACE.match(self.text, self.at).end()
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            raise StreamError(f"expected {what}")
        self.at += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.at)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise StreamError(exc.msg.lower()) from None
            if end < len(self.text) or not self._more():
                self.at = end
                return value


def members(path: Path) -> Iterator[tuple[str, str, Any]]:
    """(section, key, value) of every member of every top-level object of the document."""
    with path.open(encoding="utf-8") as handle:
        reader = _Reader(handle)
        reader.expect("{", "a JSON object")
        for section in _keys(reader):
            reader.expect("{", f"an object for {section!r}")
            for key in _keys(reader):
                yield section, key, reader.value()
        if reader.peek() != "":
            raise StreamError("extra data after the document")


def _keys(reader: _Reader) -> Iterator[str]:
    """The keys of the object whose "{" was just read, leaving the reader at each value."""
    if reader.peek() == "}":
        reader.at += 1
        return
    while True:
        if reader.peek() != '"':
            raise StreamError("expected a key in double quotes")
        key = reader.value()
        reader.expect(":", "':' after a key")
        yield key
        following = reader.peek()
        reader.at += 1
        if following == "}":
            return
        if following != ",":
            raise StreamError("expected ',' or '}' after a value")


def shop_records(path: Path, ledger: dict[str, Any] | None = None) -> Iterator[Product | User | Order]:
    """Every record of a tau2-shaped shop file, checked, in the file's order, one at a time;
    the entries of the JSON store's ledger of applied calls, if the file has one, go into
    `ledger` (an import carries them over, so a call applied before is not applied again).

    The checks are the JSON store's (orderbot/shops/retail/data.py), made record by record;
    a key that appears twice in a section is refused too (a JSON parser would keep the
    last silently). On the first problem the file is read whole by the JSON store, so the
    refusal is the very sentence `--orders FILE` gives (file, record, field); only a
    problem the JSON store does not see (a repeated key) is said here. An order whose user
    is not in the file is found by the caller once everything is read (`missing_user`)."""
    seen: dict[str, set[str]] = {section: set() for section in SECTIONS}
    try:
        for section, key, value in members(path):
            if section == LEDGER and ledger is not None:
                ledger[key] = value
                continue
            kind = KINDS.get(section)
            if kind is None:
                raise StreamError(f"unknown section {section!r}")
            if key in seen[section]:
                raise OrdersFileError("retail.repeated_key", path=path, section=section, key=key[:MAX_ID_CHARS])
            seen[section].add(key)
            record = kind.model_validate(value)
            if key_of(record) != key or not _keys_match(record):
                raise StreamError("a key differs from its record's id")
            yield record
    except (StreamError, ValidationError, UnicodeDecodeError, RecursionError, OSError):
        refuse_as_the_json_store(path)


def refuse_as_the_json_store(path: Path) -> NoReturn:
    """Raise the JSON store's own refusal of the file (it reads the file whole to say it)."""
    parse(path, read_file(path)[0])
    raise OrdersFileError("retail.not_tau2", path=path)


def missing_user(path: Path, order_id: str) -> NoReturn:
    """Refuse a file whose order `order_id` names a user the file does not hold."""
    refuse_as_the_json_store(path)


def _keys_match(record: Product | User | Order) -> bool:
    if isinstance(record, Product):
        return all(variant.item_id == key for key, variant in record.variants.items())
    if isinstance(record, User):
        return all(method.id == key for key, method in record.payment_methods.items())
    return True
