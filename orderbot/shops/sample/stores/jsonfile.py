"""The JSON file store: orders.json parsed and validated once per command.

A cancellation does not parse the file again unless another writer changed it since it
was loaded (its size, inode and modification time tell), and it rewrites only the fields
that change, in the file's own style (orderbot/shops/sample/stores/jsonedit.py): a compact file stays
compact, an indented one indented, and the file grows by the changed fields alone.
"""

from __future__ import annotations

import dataclasses
import gc
import heapq
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from pydantic_core import to_json

from orderbot.atomic import atomic_write, target
from orderbot.errors import OrdersFileError, Phrase, ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.sample.model import (
    CANCELLED,
    EXPECTED,
    NO_ACCESS,
    ORDER,
    ORDERS_FILE,
    READ_ONLY,
    SAMPLE_PATH,
    Order,
    cancel_result,
    ensure_cancellable,
    local_now,
    newest_first,
)
from orderbot.text import invalid_json, more_problems, validation_phrase

if TYPE_CHECKING:
    from orderbot.shops.source import Source

log = logging.getLogger("orderbot")

FREEZE_AT = 10_000  # orders; see parse_orders
LOCK_TIMEOUT = 10.0  # seconds to wait for another orderbot writing the same file


class JsonStore:
    """Orders by id, loaded and validated in one pass from a JSON file."""

    def __init__(
        self,
        path: Path,
        orders: dict[str, Order],
        *,
        writable: bool = True,
        now: Callable[[], datetime] = local_now,
        lock_timeout: float = LOCK_TIMEOUT,
        signature: tuple | None = None,
    ) -> None:
        self.path = path
        self.source = str(path)
        self.orders = orders
        # The sample packaged with orderbot is never written, whatever the caller says.
        self.writable = writable and path.resolve() != SAMPLE_PATH.resolve()
        self.now = now
        self.lock_timeout = lock_timeout
        self._signature = signature  # the file as it was loaded; see cancel

    @classmethod
    def load(cls, path: Path, *, writable: bool = True) -> JsonStore:
        raw, signature = read_file(path)
        return cls(path, parse_orders(path, raw), writable=writable, signature=signature)

    @classmethod
    def open(cls, source: Source, connection: object = None, *, writable: bool = True) -> JsonStore:
        """The store at a source of kind json (a file has no connection)."""
        return cls.load(source.path, writable=writable)

    def __len__(self) -> int:
        return len(self.orders)

    def count(self) -> int:
        return len(self.orders)

    def close(self) -> None:
        pass

    def refresh(self) -> None:
        """Read the file again if another process wrote it since it was loaded: a store kept
        open across many calls (`orderbot mcp`) must not answer from what it read hours ago."""
        if changed_since(self.path, self._signature):
            raw, signature = read_file(self.path)
            self.orders, self._signature = parse_orders(self.path, raw), signature

    def get(self, order_id: str, *, timeout: float | None = None) -> Order | None:
        return self.orders.get(order_id)

    def list_orders(
        self,
        customer_id: str | None,
        *,
        status: str | None = None,
        limit: int,
        offset: int = 0,
        timeout: float | None = None,
    ) -> list[Order]:
        chosen = (
            order
            for order in self.orders.values()
            if (customer_id is None or order.customer_id == customer_id) and (status is None or order.status == status)
        )
        return heapq.nlargest(offset + limit, chosen, key=newest_first)[offset:]

    def cancel(
        self, order_id: str, reason: str, call_id: str, *, user: str | None, timeout: float | None = None
    ) -> dict:
        """Cancel one order in the file, at most once per call id.

        Under the file lock the owner and status are checked on the file as it is now (read
        again only if another process wrote it since we loaded it), the changed fields are
        written in place and the whole file replaced atomically. A repeat of the call that
        already cancelled the order returns the same result and writes nothing.
        """
        from orderbot.shops.sample.stores.jsonedit import set_fields  # only a cancellation edits the file

        if not self.writable:
            raise ToolError(READ_ONLY, "read_only")
        with locked_write(
            self.path,
            lock_timeout=self.lock_timeout,
            doing=f"cancel {order_id}",
            busy=to_model("orders_file_busy"),
            unreadable=to_model("orders_file_unreadable"),
        ) as (raw, signature):
            orders = self.orders if signature == self._signature else parse_orders(self.path, raw)
            order = orders.get(order_id)
            if order is None or order.customer_id != user:
                raise ToolError(NO_ACCESS, "no_access")
            if order.cancelled_by == call_id:
                self.orders, self._signature = orders, signature
                return cancel_result(order)
            ensure_cancellable(order)
            now = self.now()
            changes = {
                "status": CANCELLED,
                "updated_at": now,
                "cancelled_at": now,
                "cancel_reason": reason,
                "cancelled_by": call_id,
            }
            updated = dataclasses.replace(order, **changes)
            fields = ORDER.dump_python(updated, mode="json", include=set(changes))
            edited = set_fields(raw, order, fields)
            atomic_write(self.path, edited if edited is not None else rewrite(raw, order_id, fields))
            orders[order_id] = updated
            self.orders, self._signature = orders, signature_of(os.stat(self.path))
            return cancel_result(updated)


@contextmanager
def locked_write(
    path: Path, *, lock_timeout: float, doing: str, busy: str, unreadable: str
) -> Iterator[tuple[bytes, tuple]]:
    """The file as it is now (its bytes and their signature), read under its lock, for a
    write that replaces it within the block: the write of both shops' JSON files (this
    cancel and orderbot.shops.retail.jsonstore's apply). Temporary files a killed writer
    left are removed first. Not getting the lock in time, a file that cannot be read or
    parsed and a replace that fails become a ToolError saying nothing was changed; `busy`
    and `unreadable` are the sentences naming the file, `doing` names the write in the log."""
    from filelock import FileLock, Timeout  # only a change takes the lock: a read-only run skips the import

    try:
        with FileLock(lock_path(path), timeout=lock_timeout):
            remove_stale_temporaries(path)
            yield read_file(path)
    except Timeout:  # before OSError: filelock's Timeout is a TimeoutError
        raise ToolError(busy, "busy") from None
    except OrdersFileError as exc:
        log.error("%s: %s", doing, exc)
        raise ToolError(unreadable, "store_unavailable") from None
    except OSError:
        log.exception("%s: writing %s failed", doing, path)
        raise ToolError(to_model("write_failed"), "write_failed") from None


def read_file(path: Path) -> tuple[bytes, tuple]:
    """The file's bytes and the signature of exactly the file they came from."""
    try:
        with path.open("rb") as handle:
            return handle.read(), signature_of(os.fstat(handle.fileno()))
    except FileNotFoundError:
        raise OrdersFileError("orders.no_such_file", path=path) from None
    except OSError as exc:
        raise OrdersFileError("orders.unreadable", path=path, reason=exc.strerror or exc) from None


def signature_of(stat: os.stat_result) -> tuple:
    # An atomic replace gives a new inode, so even two writes within one clock tick differ.
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def changed_since(path: Path, signature: tuple | None) -> bool:
    """Whether the file is no longer the one `signature` was taken of: another process wrote it."""
    try:
        return signature_of(os.stat(path)) != signature
    except OSError:
        return False  # the next read or write says what is wrong with the file


def rewrite(raw: bytes, order_id: str, fields: dict) -> bytes:
    """The whole document again, for a file whose order could not be edited in place (its
    key is spelled with escapes, say): indented if the file was, compact if not."""
    document = json.loads(raw)
    for entry in document["orders"]:
        if entry.get("order_id") == order_id:
            entry.update(fields)
    indented = b"\n" in raw.lstrip()[:64]
    return to_json(document, indent=2 if indented else None) + (b"\n" if raw.endswith(b"\n") else b"")


def lock_path(path: Path) -> str:
    return str(path.with_name(path.name + ".lock"))


def remove_stale_temporaries(path: Path) -> None:
    """Temporary files a writer killed mid-write left behind. Only a writer holding the
    lock creates them, so under the lock every one that exists is stale."""
    path = target(path)  # they are made next to the file a link points to
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)


def parse_orders(path: Path | str, raw: bytes) -> dict[str, Order]:
    """Orders by id from the file's bytes; OrdersFileError naming the place if invalid.

    The cyclic collector is off while they are built: validation makes several objects
    per order, none of which can be in a cycle, and the collector would rescan the growing
    heap again and again (about 3x the load time at 100k orders). A large store is then
    frozen before the collector comes back on: a million long-lived objects that every
    later full collection would otherwise traverse (about 1 s per 100k orders); reference
    counting still frees them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            parsed = ORDERS_FILE.validate_json(raw)
        except ValidationError as exc:
            raise OrdersFileError(describe_load_error(path, raw, exc)) from None
        orders = {order.order_id: order for order in parsed.orders}
        if len(orders) != len(parsed.orders):
            seen: set[str] = set()
            for index, order in enumerate(parsed.orders):
                if order.order_id in seen:
                    raise OrdersFileError("orders.repeated_id", path=path, number=index + 1, order_id=order.order_id)
                seen.add(order.order_id)
        del parsed
        if len(orders) >= FREEZE_AT:
            gc.freeze()
        return orders
    finally:
        if enabled:
            gc.enable()


def describe_load_error(path: Path | str, raw: bytes, exc: ValidationError) -> Phrase:
    """One line naming the file, the place and what was expected."""
    first = exc.errors(include_url=False)[0]
    more = more_problems(exc)
    not_json = invalid_json(exc)
    if not_json is not None:
        return Phrase("error.not_json", {"path": path, "error": not_json})
    loc = first["loc"]
    if not loc:
        return Phrase("orders.not_an_object", {"path": path, "error": validation_phrase(first), "more": more})
    if loc[0] != "orders" or len(loc) == 1:
        where = ".".join(map(str, loc))
        return Phrase(
            "orders.not_a_list",
            {"path": path, "where": where, "error": validation_phrase(first), "more": more},
        )
    index = loc[1]
    where = "orders"  # the key itself: no order to name
    if isinstance(index, int):
        where = Phrase("orders.where_order", {"number": index + 1})
        # Only on this error path do we parse again, to name the order by its id.
        try:
            order_id = json.loads(raw)["orders"][index].get("order_id")
        except Exception:  # noqa: BLE001 - naming the order is a courtesy
            order_id = None
        if isinstance(order_id, str):
            where = Phrase("orders.where_order_id", {"number": index + 1, "order_id": order_id[:32]})
    field = ".".join(map(str, loc[2:])) or Phrase("orders.the_order_itself")
    return Phrase(
        "orders.bad_field", {"path": path, "where": where, "field": field, "error": _expected(first), "more": more}
    )


def _expected(error: dict) -> Phrase:
    """pydantic's message, or what the field expects in words where pydantic would quote a regex."""
    if error["type"] == "string_pattern_mismatch":
        expected = EXPECTED.get(error.get("ctx", {}).get("pattern"))
        if expected is not None:
            return Phrase(expected)
    return validation_phrase(error)
