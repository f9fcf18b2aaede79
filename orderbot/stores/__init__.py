"""Where orders are kept: one interface, three stores, chosen by the --orders value.

    orders.json, path/to/file.json      JsonStore       the file, parsed and validated once per command
    sqlite:///shop.db, sqlite:////abs   SqliteStore     the standard library's sqlite3
    postgresql://user@host:5432/shop    PostgresStore   psycopg 3: pip install 'orderbot[postgres]'
    (also postgres://)

Every store answers the same four questions, and the order tools (orderbot/orders.py) ask
nothing else, so permissions, approval and resume behave the same on all three:

    get(order_id)                       one order, or None
    list_orders(customer_id, ...)       newest first, with paging (None: every customer's)
    cancel(order_id, reason, call_id)   compare-and-set: only the owner's, only while it is
                                        cancellable, at most once per approved call
    count()                             how many orders (doctor, import)

`timeout` (seconds) is what is left of the run; a database store bounds its statements by it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from orderbot.errors import ConfigError

if TYPE_CHECKING:
    from orderbot.orders import Order

Kind = Literal["json", "sqlite", "postgres"]


class Store(Protocol):
    source: str  # where the orders are, safe to show and to record: never a password
    writable: bool
    now: Callable[[], datetime]  # the time a cancellation is stamped with (replay pins it)

    def get(self, order_id: str, *, timeout: float | None = None) -> Order | None: ...

    def list_orders(
        self,
        customer_id: str | None,
        *,
        status: str | None = None,
        limit: int,
        offset: int = 0,
        timeout: float | None = None,
    ) -> list[Order]: ...

    def cancel(
        self, order_id: str, reason: str, call_id: str, *, user: str | None, timeout: float | None = None
    ) -> dict: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Source:
    """A parsed --orders value. `url` is what connects (it may hold a password); `shown`
    is the same place with the password removed: the only form printed or recorded."""

    kind: Kind
    url: str
    path: Path | None = None  # json and sqlite

    @property
    def shown(self) -> str:
        return {"json": str(self.path), "sqlite": self.url}.get(self.kind) or public_source(self.url)

    @property
    def identity(self) -> str:
        """The same place however it was spelled, as run records keep it: a resolved path
        (sqlite:////abs/shop.db for SQLite), or the URL without its password."""
        if self.kind == "json":
            return str(self.path.resolve())
        if self.kind == "sqlite":
            return f"sqlite:///{self.path.resolve()}"
        return public_source(self.url)

    @property
    def fingerprint(self) -> str | None:
        """Which source this is beyond its name, so a resume can tell the same file at the
        same path from another one (orderbot.resume.recorded_orders); None when a file is gone.

        For a file: the device and inode of the directory holding it, with its name. That
        survives orderbot's own atomic rewrites (each gives the file a new inode, and any
        run's cancellation rewrites it) but not another tree at the same path (a new
        checkout, a copied, moved or remounted directory). A directory deleted and made
        again may get its old inode back, and then passes. For a database: its identity
        (a server cannot be fingerprinted from here)."""
        if self.path is None:
            text = self.identity
        else:
            path = self.path.resolve()
            try:
                directory = os.stat(path.parent)
            except OSError:
                return None
            if not path.is_file():
                return None
            text = f"{self.kind}:{directory.st_dev}:{directory.st_ino}:{path.name}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def parse_source(value: str | Path) -> Source:
    """`--orders` as given: a path, sqlite:///path or postgresql://... (postgres://)."""
    text = str(value)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if not scheme:
        return Source("json", text, Path(text))
    if scheme == "sqlite":
        # As SQLAlchemy spells it: sqlite:///shop.db is relative, sqlite:////srv/shop.db absolute.
        rest = text.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(f"{public_source(text)}: write a SQLite database as sqlite:///path/to/shop.db")
        path = Path(rest[1:])
        return Source("sqlite", f"sqlite:///{rest[1:]}", path)
    if scheme in ("postgresql", "postgres"):
        return Source("postgres", text)
    raise ConfigError(
        f"{public_source(text)}: unknown kind of orders source {scheme!r}; "
        "use a JSON file path, sqlite:///path/to/shop.db or postgresql://user@host/db"
    )


def source_identity(value: str | Path) -> str:
    """What a run record keeps to say which orders it acted on (see Source.identity)."""
    return parse_source(value).identity


def source_fingerprint(value: str | Path) -> str | None:
    """What a run record keeps to tell the same orders from others at the same place (see Source.fingerprint)."""
    return parse_source(value).fingerprint


def public_source(url: str) -> str:
    """The URL without its password (and without any query, which may carry one too)."""
    if "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, "", ""))


def open_store(source: Source, *, writable: bool = True) -> Store:
    """The store behind a parsed source; ConfigError (exit 6) when it cannot be used."""
    if source.kind == "json":
        from orderbot.stores.jsonfile import JsonStore

        return JsonStore.load(source.path, writable=writable)
    if source.kind == "sqlite":
        from orderbot.stores.sqlite import SqliteStore

        return SqliteStore.open(source)
    from orderbot.stores.postgres import PostgresStore

    return PostgresStore.open(source)
