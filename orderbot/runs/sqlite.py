"""The SQLite run store (the standard library's sqlite3): --runs sqlite:///runs.db.

One database file for the runs of everyone who can write it, in WAL mode so that listings
never wait for a writer. Every save is one `BEGIN IMMEDIATE` transaction: SQLite lets one
writer in at a time, which also keeps the audit log's numbers and links in order. SQLite
has no roles: the operator is the login name, and anyone who can write the file can change
anything in it (the integrity tags and the audit chain still show it).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from orderbot.errors import ConfigError, RecordError
from orderbot.i18n import t
from orderbot.runs.base import operator_name
from orderbot.runs.sql import SqlRunStore

BUSY_SECONDS = 30.0  # how long a save waits for other writers (20 operators at once)


class SqliteRunStore(SqlRunStore):
    def __init__(self, path: Path, *, where: str, prune_after_days: float | None = None) -> None:
        super().__init__(where, prune_after_days=prune_after_days)
        self.path = path
        self.connection = _connect(path, where)

    @classmethod
    def open(cls, path: Path, *, where: str, prune_after_days: float | None = None) -> SqliteRunStore:
        return cls(path, where=where, prune_after_days=prune_after_days).with_schema()

    def close(self) -> None:
        self.connection.close()

    def _session_operator(self) -> str:
        return operator_name()

    def _error(self, exc: sqlite3.Error) -> RecordError:
        if "locked" in str(exc) or "busy" in str(exc):
            return RecordError(t("runs.store_busy", where=self.where))
        return RecordError(t("runs.store_failed", where=self.where, why=exc))

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        try:
            return self.connection.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            self.connection.execute("BEGIN IMMEDIATE")  # the write lock now, not at the first write
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            yield
            self.connection.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                self.connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from None
            raise

    def _tx_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.connection.execute(sql, params).fetchall()

    def _tx_change(self, sql: str, params: tuple = ()) -> int:
        return self.connection.execute(sql, params).rowcount

    def _lock_log(self) -> None:
        """BEGIN IMMEDIATE already holds the database's one write lock."""

    def _schema_version(self) -> int | None:
        try:
            return self._version(self.connection.execute("SELECT version FROM run_schema").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise self._error(exc) from None

    def _schema_version_in_tx(self) -> int | None:
        return self._schema_version()


def _connect(path: Path, where: str) -> sqlite3.Connection:
    """The database, made (0600: it holds customers' orders) when it does not exist yet."""
    if not path.parent.is_dir():
        raise ConfigError(t("runs.no_folder", where=where, folder=path.parent))
    try:
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        uri = f"file:{quote(str(path.absolute()))}?mode=rw"
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(t("runs.cannot_open", where=where, why=getattr(exc, "strerror", None) or exc)) from None
    return connection
