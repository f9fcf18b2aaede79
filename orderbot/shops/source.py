"""Where a shop's data is: a parsed --orders value (a JSON file, sqlite:///path or
postgresql://...), shown and recorded without its password."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal, NamedTuple

from orderbot.errors import ConfigError
from orderbot.text import POSTGRES_SCHEMES, url_scheme, without_credentials

Kind = Literal["json", "sqlite", "postgres"]


class Source(NamedTuple):
    """A parsed --orders value. `url` is what connects (it may hold a password); `shown`
    is the same place with the password removed: the only form printed or recorded."""

    kind: Kind
    url: str
    path: Path | None = None  # json and sqlite

    @property
    def shown(self) -> str:
        return {"json": str(self.path), "sqlite": self.url}.get(self.kind) or public_source(self.url)

    @property
    def unencoded_credentials(self) -> bool:
        """Whether a database URL's user name or password holds a `/`, `?`, `#` or `@`
        that is not percent-encoded: libpq then reads part of the password as the host,
        port or database, and connects somewhere else."""
        if self.kind != "postgres":
            return False
        rest = self.url.partition("://")[2]
        credentials = rest.rpartition("@")[0]
        return any(mark in credentials for mark in "/?#@")

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
        same path from another one (orderbot.runs.resume.recorded_orders); None when a file is gone.

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
    scheme = url_scheme(text)
    if not scheme:
        return Source("json", text, Path(text))
    if scheme == "sqlite":
        # As SQLAlchemy spells it: sqlite:///shop.db is relative, sqlite:////srv/shop.db absolute.
        rest = text.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError("orders.bad_sqlite_url", source=public_source(text))
        path = Path(rest[1:])
        return Source("sqlite", f"sqlite:///{rest[1:]}", path)
    if scheme in POSTGRES_SCHEMES:
        return Source("postgres", text)
    raise ConfigError("orders.unknown_source", source=public_source(text))


def source_identity(value: str | Path) -> str:
    """What a run record keeps to say which orders it acted on (see Source.identity)."""
    return parse_source(value).identity


def source_fingerprint(value: str | Path) -> str | None:
    """What a run record keeps to tell the same orders from others at the same place (see Source.fingerprint)."""
    return parse_source(value).fingerprint


def public_source(url: str) -> str:
    """The URL without its password (and without any query, which may carry one too),
    whatever the password holds (orderbot.text.without_credentials)."""
    return without_credentials(url, keep_user=True)
