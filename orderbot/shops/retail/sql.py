"""What the retail shop's SQLite and PostgreSQL stores share: the schema, records <-> rows,
and the store's questions and its one write, written once in SQL. Each database module
supplies the connection, runs the statements within the run's time and turns its driver's
errors into orderbot's (orderbot/shops/retail/sqlite.py, postgres.py).

Tables (retail_schema version 1):

    retail_products  product_id, seq, name, body
    retail_items     item_id, product_seq, product_id     which product holds a variant
    retail_users     user_id, seq, email_key, first_key, last_key, zip, body
    retail_orders    order_id, seq, user_id, status, body
    retail_ledger    call_key -> the result of the write it applied (at most once per key)
    retail_schema    one row: the version of this layout; another version is refused

Each record is one row: its body is the record's JSON (tau2's shape, exactly what `export`
writes) in a text column, beside the columns a lookup needs, which are indexed. That keeps
every question one indexed read of one row and every write one row per record changed:
the retail tools read and replace whole records (a cancellation rewrites an order's
status and payment history and a gift card's balance together), so splitting them into
items, payments and payment-method tables would turn each read into joins and each write
into deletes and inserts, and a million orders into four million rows, for no question
anyone asks of the parts. Bodies are plain text rather than PostgreSQL's jsonb: SQL never
looks inside them, jsonb would reorder their keys (an export must give tau2's file back
byte for byte) and cost a parse per write. `seq` is the record's place in the file it was
imported from (tau2's "first match" and the export follow it). Keys compared ignoring case
are kept folded by Python (`str.lower`, as tau2 compares) so no database's own case rules
or collation decide a match.

Of the indexes, (email_key, seq, user_id) and (zip, last_key, first_key, seq, user_id)
answer the two customer lookups from the index alone (the first match in the shop's order,
without reading the row), (user_id, seq) serves a customer's orders, and `seq` the export,
in the shop's order; at a million orders and half a million customers each lookup is one
B-tree descent (benchmarks/retail.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, NoReturn

from pydantic import ValidationError

from orderbot.errors import ToolError
from orderbot.loop.model_text import to_model
from orderbot.shops.retail.data import MAX_ID_CHARS, MAX_TEXT_CHARS, Order, Product, User, Variant, key_of
from orderbot.shops.retail.data import plain as plain_text  # the check every stored text passed
from orderbot.shops.retail.store import ShopRecord, Write

log = logging.getLogger("orderbot")

SCHEMA_VERSION = 1
SCHEMA_TABLE = "retail_schema"
# The order to drop them in; a database holding the first is a retail shop.
TABLES = ("retail_schema", "retail_ledger", "retail_items", "retail_orders", "retail_users", "retail_products")
PRODUCT_COLUMNS = ("product_id", "seq", "name", "body")
ITEM_COLUMNS = ("item_id", "product_seq", "product_id")
USER_COLUMNS = ("user_id", "seq", "email_key", "first_key", "last_key", "zip", "body")
ORDER_COLUMNS = ("order_id", "seq", "user_id", "status", "body")
TABLE_OF = {Product: "retail_products", User: "retail_users", Order: "retail_orders"}
KEY_COLUMN = {Product: "product_id", User: "user_id", Order: "order_id"}
CHANGED = "changed_meanwhile"
CHANGED_MESSAGE = to_model("changed_meanwhile")
UNAVAILABLE = to_model("shop_db_unavailable")
TIMED_OUT = to_model("shop_db_timed_out")
BUSY = to_model("shop_db_busy")


def tables(key: str) -> list[str]:
    """CREATE TABLE statements; `key` is the text type of ids and folded keys (PostgreSQL's
    needs COLLATE "C": bytewise, as every other store compares)."""
    return [
        f"CREATE TABLE {SCHEMA_TABLE} (version INTEGER NOT NULL)",
        f"CREATE TABLE retail_products (product_id {key} PRIMARY KEY, seq INTEGER NOT NULL, "
        "name TEXT NOT NULL, body TEXT NOT NULL)",
        f"CREATE TABLE retail_items (item_id {key} NOT NULL, product_seq INTEGER NOT NULL, "
        f"product_id {key} NOT NULL, PRIMARY KEY (item_id, product_seq))",
        f"CREATE TABLE retail_users (user_id {key} PRIMARY KEY, seq INTEGER NOT NULL, email_key {key} NOT NULL, "
        f"first_key {key} NOT NULL, last_key {key} NOT NULL, zip {key} NOT NULL, body TEXT NOT NULL)",
        f"CREATE TABLE retail_orders (order_id {key} PRIMARY KEY, seq INTEGER NOT NULL, user_id {key} NOT NULL, "
        "status TEXT NOT NULL, body TEXT NOT NULL)",
        f"CREATE TABLE retail_ledger (call_key {key} PRIMARY KEY, result TEXT NOT NULL)",
    ]


# Built after the rows are in: one sort per index instead of a million insertions into it.
INDEXES = [
    "CREATE UNIQUE INDEX retail_products_in_order ON retail_products (seq)",
    "CREATE UNIQUE INDEX retail_users_in_order ON retail_users (seq)",
    "CREATE UNIQUE INDEX retail_orders_in_order ON retail_orders (seq)",
    "CREATE INDEX retail_users_by_email ON retail_users (email_key, seq, user_id)",
    "CREATE INDEX retail_users_by_name_zip ON retail_users (zip, last_key, first_key, seq, user_id)",
    "CREATE INDEX retail_orders_by_user ON retail_orders (user_id, seq)",
]


def body_of(record: ShopRecord) -> str:
    """The record as tau2's JSON (no field whose value is None), as the row keeps it."""
    return record.model_dump_json(exclude_none=True)


def key_columns(record: ShopRecord) -> tuple:
    """The columns beside the body that a lookup uses, in table order after (id, seq)."""
    if isinstance(record, User):
        name = record.name
        return (name_key(record.email), name_key(name.first_name), name_key(name.last_name), record.address.zip)
    if isinstance(record, Order):
        return (record.user_id, record.status)
    return (record.name,)


def row_of(record: ShopRecord, seq: int) -> tuple:
    return (key_of(record), seq, *key_columns(record), body_of(record))


def item_rows(product: Product, seq: int) -> list[tuple]:
    return [(item_id, seq, product.product_id) for item_id in product.variants]


def name_key(text: str) -> str:
    """How tau2 compares emails and names: Python's str.lower on both sides."""
    return text.lower()


def storable(*texts: str) -> bool:
    """Whether every text could be a stored key: a text holding a control or format
    character, or longer than any stored text, matches no record (data.py refuses them
    in every record), so it is not sent to the database, which might refuse it in its own
    words (PostgreSQL cannot hold NUL)."""
    try:
        return all(isinstance(text, str) and len(text) <= MAX_TEXT_CHARS and plain_text(text) for text in texts)
    except ValueError:
        return False


def record_from(kind: type[ShopRecord], body: str) -> ShopRecord:
    try:
        return kind.model_validate_json(body)
    except ValidationError as exc:  # a row written by hand, not by orderbot
        log.error("a %s row is not a valid record: %s", kind.__name__, exc.errors(include_input=False)[0])
        raise ToolError(UNAVAILABLE, "store_unavailable") from None


Run = Callable[[str, tuple], Any]  # runs one statement inside a transaction; returns its cursor


class SqlRetailStore:
    """The retail store's questions in SQL. A subclass provides `_rows`, which runs one
    statement (with `?` placeholders) within `timeout` seconds, `_transaction`, a context
    in which `Run` executes statements of one transaction that commits at its end (and
    rolls back on any exception), and `LOCK`, the clause that locks a row read for change."""

    writable = True
    LOCK = ""

    def __init__(self, source: str, *, writable: bool = True) -> None:
        self.source = source
        self.writable = writable

    def _rows(self, sql: str, params: tuple = (), *, timeout: float | None = None) -> list[tuple]:
        raise NotImplementedError

    def _transaction(self, timeout: float | None) -> AbstractContextManager[Run]:
        raise NotImplementedError

    # ---- reads ------------------------------------------------------------------------

    def _one(self, kind: type[ShopRecord], sql: str, params: tuple, timeout: float | None):
        rows = self._rows(sql, params, timeout=timeout)
        return record_from(kind, rows[0][0]) if rows else None

    def user(self, user_id: str, *, timeout: float | None = None) -> User | None:
        if not storable(user_id) or len(user_id) > MAX_ID_CHARS:
            return None
        return self._one(User, "SELECT body FROM retail_users WHERE user_id = ?", (user_id,), timeout)

    def order(self, order_id: str, *, timeout: float | None = None) -> Order | None:
        if not storable(order_id) or len(order_id) > MAX_ID_CHARS:
            return None
        return self._one(Order, "SELECT body FROM retail_orders WHERE order_id = ?", (order_id,), timeout)

    def product(self, product_id: str, *, timeout: float | None = None) -> Product | None:
        if not storable(product_id) or len(product_id) > MAX_ID_CHARS:
            return None
        return self._one(Product, "SELECT body FROM retail_products WHERE product_id = ?", (product_id,), timeout)

    def item(self, item_id: str, *, timeout: float | None = None) -> Variant | None:
        """The variant from the first product, in the shop's order, that holds it (tau2's scan)."""
        if not storable(item_id) or len(item_id) > MAX_ID_CHARS:
            return None
        sql = (
            "SELECT p.body FROM retail_items i JOIN retail_products p ON p.product_id = i.product_id "
            "WHERE i.item_id = ? ORDER BY i.product_seq LIMIT 1"
        )
        product = self._one(Product, sql, (item_id,), timeout)
        return product.variants.get(item_id) if product else None

    def product_types(self, *, timeout: float | None = None) -> dict[str, str]:
        """{name: product_id}, a later product of the same name winning, sorted by name as
        Python sorts (tau2 builds the dict in the shop's order, then sorts its keys)."""
        rows = self._rows("SELECT name, product_id FROM retail_products ORDER BY seq", timeout=timeout)
        return dict(sorted(dict(rows).items()))

    def find_user_by_email(self, email: str, *, timeout: float | None = None) -> str | None:
        if not storable(email):
            return None
        sql = "SELECT user_id FROM retail_users WHERE email_key = ? ORDER BY seq LIMIT 1"
        rows = self._rows(sql, (name_key(email),), timeout=timeout)
        return rows[0][0] if rows else None

    def find_user_by_name_zip(
        self, first_name: str, last_name: str, zip: str, *, timeout: float | None = None
    ) -> str | None:
        if not storable(first_name, last_name, zip):
            return None
        sql = "SELECT user_id FROM retail_users WHERE zip = ? AND last_key = ? AND first_key = ? ORDER BY seq LIMIT 1"
        rows = self._rows(sql, (zip, name_key(last_name), name_key(first_name)), timeout=timeout)
        return rows[0][0] if rows else None

    def count(self) -> int:
        return self._rows("SELECT count(*) FROM retail_orders")[0][0]

    def refresh(self) -> None:
        """Nothing to do: every query reads the database as it is now."""

    def export(self) -> Iterator[ShopRecord]:
        """Every record in export order, read a batch at a time (never the whole shop)."""
        for kind in (Product, User, Order):
            yield from self._in_order(kind)

    def _in_order(self, kind: type[ShopRecord], batch: int = 2_000) -> Iterator[ShopRecord]:
        table, after = TABLE_OF[kind], -1
        while rows := self._rows(f"SELECT seq, body FROM {table} WHERE seq > ? ORDER BY seq LIMIT ?", (after, batch)):
            after = rows[-1][0]
            for _, body in rows:
                yield record_from(kind, body)

    # ---- the one write ----------------------------------------------------------------

    def apply(self, write: Write, call_key: str, *, timeout: float | None = None) -> Any:
        """Compare-and-set of every changed record and the ledger entry, in one transaction.

        The ledger row goes in first: a second writer with the same key waits on it (the
        primary key) until the first commits, then finds it and returns the stored result;
        if the first rolled back, it goes on as if it were first. The rows are then read
        under a write lock, in one order (table, id) so two writers never wait on each
        other in a circle, compared with what the write was computed from, and replaced."""
        if not self.writable:
            raise ToolError(to_model("shop_read_only"), "read_only")
        result = json.dumps(write.result, ensure_ascii=False, allow_nan=False)
        changes = sorted(write.changes, key=lambda change: (TABLE_OF[type(change.new)], key_of(change.new)))
        with self._transaction(timeout) as run:
            inserted = run(
                "INSERT INTO retail_ledger (call_key, result) VALUES (?, ?) ON CONFLICT (call_key) DO NOTHING",
                (call_key, result),
            ).rowcount
            if inserted != 1:
                stored = run("SELECT result FROM retail_ledger WHERE call_key = ?", (call_key,)).fetchone()
                return json.loads(stored[0])
            for change in changes:
                self._replace(run, change.old, change.new)
        return write.result

    def _replace(self, run: Run, old: ShopRecord, new: ShopRecord) -> None:
        kind = type(new)
        table, column = TABLE_OF[kind], KEY_COLUMN[kind]
        if key_of(old) != key_of(new):
            raise ValueError("a change keeps the record's id")
        row = run(f"SELECT body FROM {table} WHERE {column} = ?{self.LOCK}", (key_of(old),)).fetchone()
        if row is None or record_from(kind, row[0]) != old:
            raise ToolError(CHANGED_MESSAGE, CHANGED)
        names = {Product: PRODUCT_COLUMNS, User: USER_COLUMNS, Order: ORDER_COLUMNS}[kind]
        values = row_of(new, 0)
        assignments = ", ".join(f"{name} = ?" for name in names[2:])
        run(f"UPDATE {table} SET {assignments} WHERE {column} = ?", (*values[2:], key_of(new)))
        if kind is Product:
            run("DELETE FROM retail_items WHERE product_id = ?", (new.product_id,))
            seq = run("SELECT seq FROM retail_products WHERE product_id = ?", (new.product_id,)).fetchone()[0]
            for item in item_rows(new, seq):
                run("INSERT INTO retail_items VALUES (?, ?, ?)", item)


LEDGER_ROWS = "ledger"  # the key of a batch's ledger rows, beside the record kinds


def batches(records: Iterable[ShopRecord], size: int) -> Iterator[dict[type, list[tuple]]]:
    """Rows of up to `size` records at a time, by table (items beside their products),
    numbered in the order they come: the shop's order."""
    seq = {Product: 0, User: 0, Order: 0}
    batch: dict[type, list[tuple]] = {Product: [], Variant: [], User: [], Order: []}
    held = 0
    for record in records:
        kind = type(record)
        seq[kind] += 1
        batch[kind].append(row_of(record, seq[kind]))
        if kind is Product:
            batch[Variant].extend(item_rows(record, seq[kind]))
        held += 1
        if held == size:
            yield batch
            batch, held = {Product: [], Variant: [], User: [], Order: []}, 0
    if held:
        yield batch


Insert = Callable[[Any, list[tuple]], None]  # writes rows into the table of a record kind (or LEDGER_ROWS)


def fill(
    execute: Run,
    insert: Insert,
    records: Iterable[ShopRecord],
    *,
    key_type: str,
    orphan: Callable[[str], NoReturn],
    ledger: dict[str, Any] | None,
    progress: Callable[[int], None] | None,
    chunk: int = 10_000,
) -> dict[str, int]:
    """Inside the import's open transaction: create the tables, write the records `chunk`
    at a time (and the ledger carried over from a JSON store), build the indexes, refuse an
    order whose user is not in the shop (`orphan` raises), and stamp the schema version.
    How many products, users and orders were written."""
    for statement in tables(key_type):
        execute(statement, ())
    counts = {"products": 0, "users": 0, "orders": 0}
    for batch in batches(records, chunk):
        for kind, rows in batch.items():
            if rows:
                insert(kind, rows)
        counts["products"] += len(batch[Product])
        counts["users"] += len(batch[User])
        counts["orders"] += len(batch[Order])
        if progress:
            progress(counts["orders"])
    if ledger:
        insert(LEDGER_ROWS, [(key, json.dumps(value, ensure_ascii=False)) for key, value in ledger.items()])
    for statement in INDEXES:
        execute(statement, ())
    lost = execute(ORPHAN_ORDER, ()).fetchone()
    if lost is not None:
        orphan(lost[0])
    execute(f"INSERT INTO {SCHEMA_TABLE} VALUES (?)", (SCHEMA_VERSION,))
    return counts


# An order whose user is not in the shop (data.check_references says so of a file; in a
# stream the users may come after the orders, so it is asked once everything is in).
ORPHAN_ORDER = (
    "SELECT o.order_id FROM retail_orders o LEFT JOIN retail_users u ON u.user_id = o.user_id "
    "WHERE u.user_id IS NULL ORDER BY o.seq LIMIT 1"
)
