"""The retail shop in one JSON file of tau2's shape (`{"products", "users", "orders"}`),
implementing orderbot/shops/retail/store.py.

The file is read and checked once per command; reads answer from that copy. A shop's bytes
are parsed once per process: the parsed shop is kept by a digest of the bytes (records are
frozen, so every store may share them), and a write keeps what it wrote the same way, so a
later command in the same process (a resume after an ask, in a test or a long-lived host)
reads it back without validating 3 MB again. A write
takes the file's lock, reads the file again only if another writer changed it since (its
size, inode and modification time tell), compares the records it replaces with the file's,
and rewrites the whole file atomically (orderbot/atomic.py) in its own indentation. The
ledger of applied call keys is a member of the same file after the three sections
(`LEDGER`), written in the same atomic replace as the records it accounts for, so a
process killed at any moment leaves both or neither; tau2's loader ignores it and
`export` never writes it.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from orderbot.atomic import atomic_write
from orderbot.errors import ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.retail import data
from orderbot.shops.retail.data import Order, Product, Shop, User, Variant
from orderbot.shops.retail.store import ShopRecord, Write
from orderbot.shops.sample.stores.jsonfile import changed_since, locked_write, read_file, signature_of

if TYPE_CHECKING:
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

LEDGER = data.LEDGER
LOCK_TIMEOUT = 10.0  # seconds to wait for another orderbot writing the same file
READ_ONLY = to_model("shop_read_only")


class JsonShopStore:
    """A tau2-shaped shop file, its records by id, and the ledger of applied calls."""

    def __init__(
        self,
        path: Path,
        shop: Shop,
        ledger: dict[str, Any],
        *,
        writable: bool = True,
        signature: tuple | None = None,
        indent: int | None = 4,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        self.path = path
        self.source = str(path)
        self.writable = writable
        self.lock_timeout = lock_timeout
        self._indent = indent
        self._use(shop, ledger, signature)

    @classmethod
    def load(cls, path: Path, *, writable: bool = True) -> JsonShopStore:
        raw, signature = read_file(path)
        shop, ledger = parse(path, raw)
        return cls(path, shop, ledger, writable=writable, signature=signature, indent=indentation(raw))

    @classmethod
    def open(cls, source: Source, connection: object = None, *, writable: bool = True) -> JsonShopStore:
        """The store at a source of kind json (a file has no connection)."""
        return cls.load(source.path, writable=writable)

    def _use(self, shop: Shop, ledger: dict[str, Any], signature: tuple | None) -> None:
        self._sections: dict[str, dict[str, ShopRecord]] = {
            section: dict(getattr(shop, section)) for section in data.SECTIONS
        }
        self._ledger = ledger
        self._signature = signature
        self._emails: dict[str, str] | None = None  # built on the first lookup
        self._names: dict[tuple[str, str, str], str] | None = None
        self._items: dict[str, Variant] | None = None

    def refresh(self) -> None:
        """Read the file again if another process wrote it since it was loaded (a store kept
        open across many calls, as `orderbot mcp` keeps it)."""
        if changed_since(self.path, self._signature):
            raw, signature = read_file(self.path)
            shop, ledger = parse(self.path, raw)
            self._use(shop, ledger, signature)
            self._indent = indentation(raw)

    # ---- reads ---------------------------------------------------------------------------

    def user(self, user_id: str, *, timeout: float | None = None) -> User | None:
        return self._sections["users"].get(user_id)

    def order(self, order_id: str, *, timeout: float | None = None) -> Order | None:
        return self._sections["orders"].get(order_id)

    def product(self, product_id: str, *, timeout: float | None = None) -> Product | None:
        return self._sections["products"].get(product_id)

    def item(self, item_id: str, *, timeout: float | None = None) -> Variant | None:
        if self._items is None:
            self._items = {}
            for product in self._sections["products"].values():
                for key, variant in product.variants.items():
                    self._items.setdefault(key, variant)
        return self._items.get(item_id)

    def product_types(self, *, timeout: float | None = None) -> dict[str, str]:
        return dict(sorted((product.name, product.product_id) for product in self._sections["products"].values()))

    def find_user_by_email(self, email: str, *, timeout: float | None = None) -> str | None:
        if self._emails is None:
            self._emails = {}
            for user in self._sections["users"].values():
                self._emails.setdefault(user.email.lower(), user.user_id)
        return self._emails.get(email.lower())

    def find_user_by_name_zip(
        self, first_name: str, last_name: str, zip: str, *, timeout: float | None = None
    ) -> str | None:
        if self._names is None:
            self._names = {}
            for user in self._sections["users"].values():
                key = (user.name.first_name.lower(), user.name.last_name.lower(), user.address.zip)
                self._names.setdefault(key, user.user_id)
        return self._names.get((first_name.lower(), last_name.lower(), zip))

    def export(self) -> Iterator[ShopRecord]:
        for section in data.SECTIONS:
            yield from self._sections[section].values()

    def count(self) -> int:
        return len(self._sections["orders"])

    def close(self) -> None:
        pass

    # ---- the write ---------------------------------------------------------------------

    def apply(self, write: Write, call_key: str, *, timeout: float | None = None) -> Any:
        """Compare-and-set of the write's records, at most once per call key (store.py)."""
        if not self.writable:
            raise ToolError(READ_ONLY, "read_only")
        with locked_write(
            self.path,
            lock_timeout=self.lock_timeout,
            doing=f"apply {call_key}",
            busy=to_model("shop_file_busy"),
            unreadable=to_model("shop_file_unreadable"),
        ) as (raw, signature):
            if signature != self._signature:
                shop, ledger = parse(self.path, raw)
                self._use(shop, ledger, signature)
                self._indent = indentation(raw)
            if call_key in self._ledger:
                return self._ledger[call_key]
            sections = {section: dict(records) for section, records in self._sections.items()}
            for change in write.changes:
                records = sections[data.SECTION_OF[type(change.old)]]
                if records.get(data.key_of(change.old)) != change.old:
                    raise ToolError(
                        to_model("record_changed", key=data.key_of(change.old)),
                        "changed_meanwhile",
                    )
                records[data.key_of(change.new)] = change.new
            ledger = {**self._ledger, call_key: write.result}
            out = io.StringIO()
            exported = (record for section in data.SECTIONS for record in sections[section].values())
            data.write_document(exported, out, indent=self._indent, after={LEDGER: ledger})
            written = out.getvalue().encode("utf-8")
            atomic_write(self.path, written)
            self._sections, self._ledger = sections, ledger
            # What a later parse of these bytes would give: the records as they are (they were
            # checked when made), the ledger as JSON reads it back.
            _remember(written, data.Shop.model_construct(**sections), json.loads(to_json(ledger)))
            self._signature = signature_of(os.stat(self.path))
            self._emails = self._names = self._items = None
            return write.result


PARSED_KEPT = 4  # shops kept parsed: a process works on one or two shop files at a time
_parsed: OrderedDict[bytes, tuple[Shop, dict[str, Any]]] = OrderedDict()


def parse(path: Path, raw: bytes) -> tuple[Shop, dict[str, Any]]:
    """The shop in `raw`, parsed and checked once per process for the same bytes (a file
    that fails to parse is not kept, so it is refused again with its own path)."""
    key = _digest(raw)
    kept = _parsed.get(key)
    if kept is None:
        shop, ledger = data.parse_shop(path, raw)
        kept = _remember(raw, shop, ledger, key=key)
    else:
        _parsed.move_to_end(key)
    shop, ledger = kept
    return shop, dict(ledger)


def _remember(raw: bytes, shop: Shop, ledger: dict[str, Any], *, key: bytes | None = None) -> tuple[Shop, dict]:
    kept = (shop, dict(ledger))
    _parsed[key or _digest(raw)] = kept
    while len(_parsed) > PARSED_KEPT:
        _parsed.popitem(last=False)
    return kept


def _digest(raw: bytes) -> bytes:
    # Keyed by content, not by path or inode: the same bytes are the same shop wherever they lie.
    return hashlib.blake2b(raw, digest_size=32).digest()


def indentation(raw: bytes) -> int | None:
    """How the file is indented (tau2 writes 4), so a rewrite keeps its style; None: compact."""
    head = raw.lstrip()[:256]
    if not head.startswith(b"{") or b"\n" not in head:
        return None
    line = head.split(b"\n", 2)[1]
    return len(line) - len(line.lstrip(b" ")) or None
