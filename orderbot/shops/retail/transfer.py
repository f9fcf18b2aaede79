"""Moving a retail shop between tau2's JSON and the database stores: `orderbot orders import`
of a tau2-shaped file into SQLite or PostgreSQL, and `orderbot orders export` of any retail
store back to tau2's JSON.

An import reads the file one record at a time (stream.py) straight into one transaction,
so a million orders are never in memory at once and a refused file writes nothing: every
record is checked before its rows are sent, and the first problem rolls everything back
(SQLite: a file the import created is removed). An export writes the records as the store
yields them, in tau2's layout (data.write_document: 4-space indent, no null field, amounts
at two decimals), into a temporary file that replaces FILE only once it is complete.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from orderbot.atomic import atomic_writer
from orderbot.errors import ConfigError
from orderbot.shops.choice import database_type
from orderbot.shops.retail.data import SECTION_OF, write_document
from orderbot.shops.retail.store import RetailStore, ShopRecord
from orderbot.shops.retail.stream import missing_user, shop_records
from orderbot.shops.source import Source


def import_file(
    path: Path, target: Source, *, replace: bool, progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Load a tau2-shaped file into SQLite or PostgreSQL: how many products, users and orders."""
    ledger: dict[str, Any] = {}
    return database_type("retail", target).import_records(
        target,
        shop_records(path, ledger),
        replace=replace,
        orphan=lambda order_id: missing_user(path, order_id),
        ledger=ledger,
        progress=progress,
    )


def export_shop(store: RetailStore, path: Path, *, source: str) -> dict[str, int]:
    """Write the whole shop to `path` in tau2's shape, atomically: how many of each record."""
    if path.exists() and _same_file(path, source):
        raise ConfigError("retail.export_onto_source", path=path)
    counted: Counter[str] = Counter()
    try:
        with atomic_writer(path) as handle:
            out = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            write_document(_counting(store.export(), counted), out)
            out.flush()
            out.detach()  # the atomic writer closes the file itself, after its fsync
    except OSError as exc:
        raise ConfigError("retail.export_unwritable", path=path, reason=exc.strerror or exc) from None
    return {section: counted[section] for section in ("products", "users", "orders")}


def _counting(records: Iterable[ShopRecord], counted: Counter[str]) -> Iterator[ShopRecord]:
    for record in records:
        counted[SECTION_OF[type(record)]] += 1
        yield record


def _same_file(path: Path, source: str) -> bool:
    try:
        return Path(source).exists() and path.samefile(source)
    except OSError:
        return False
