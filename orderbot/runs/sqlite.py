"""The SQLite run store (the standard library's sqlite3): the default, `runs.db` in the state
directory, and a team's `--runs sqlite:///runs.db`. One code path for both
(orderbot.runs.sql); the state directory's differs only in what its place asks:

- it keeps the newest ORDERBOT_KEEP_RUNS runs (a team's store keeps every run);
- its records' key is a file of its own beside it (`record.key`, 0600), as it always was,
  so that a copy of the database alone vouches for nothing;
- the database and its journal are never opened through a link, nor waited on as a FIFO
  (orderbot.runs.statedir), and an earlier orderbot's JSON records are taken over on its
  first use (orderbot.runs.takeover).

One database file in WAL mode, so that listings never wait for a writer. Every save is one
`BEGIN IMMEDIATE` transaction: SQLite lets one writer in at a time, which also keeps the
audit log's numbers and links in order, and makes two orderbots started at once take turns.
SQLite has no roles: the operator is the login name, and anyone who can write the file can
change anything in it (the integrity tags and the audit chain still show it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from orderbot.errors import ConfigError, Phrase, RecordError
from orderbot.runs import statedir
from orderbot.runs.base import operator_name
from orderbot.runs.record import KEY_FILE
from orderbot.runs.sql import SqlRunStore
from orderbot.runs.tagged import read_or_create_key

BUSY_SECONDS = 30.0  # how long a save waits for other writers (20 operators at once)
DB_FILE = statedir.DATABASE  # the state directory's run store


class SqliteRunStore(SqlRunStore):
    def __init__(
        self,
        path: Path,
        *,
        where: str,
        prune_after_days: float | None = None,
        keep: int | None = None,
        key_file: Path | None = None,
    ) -> None:
        super().__init__(where, prune_after_days=prune_after_days, keep=keep, shared=key_file is None)
        self.path = path
        self.key_file = key_file
        self.keeps_its_key = key_file is None
        if key_file is not None:
            self.elsewhere = "runs.elsewhere_state_dir"
        self.connection = _connect(path, where, own=key_file is not None)

    @classmethod
    def open(cls, path: Path, *, where: str, prune_after_days: float | None = None) -> SqliteRunStore:
        """A team's SQLite store (`--runs sqlite:///...`), made when missing."""
        return cls(path, where=where, prune_after_days=prune_after_days).with_schema()

    @classmethod
    def in_state_dir(cls, state_dir: Path, *, keep: int = 200, prune_after_days: float | None = None) -> SqliteRunStore:
        """The state directory's store, the directory made private when missing; what an
        earlier orderbot kept there is taken over first (`took_over` says what came over,
        in the process that did it)."""
        statedir.make(state_dir)
        path = state_dir / DB_FILE
        store = cls(path, where=str(path), keep=keep, prune_after_days=prune_after_days, key_file=state_dir / KEY_FILE)
        store.with_schema()
        if not statedir.holds_old_files(state_dir):
            return store
        from orderbot.runs.takeover import take_over  # once per state directory: its code is not loaded after

        try:
            store.took_over = take_over(store, state_dir)
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        self.connection.close()

    def verify_limit(self) -> Phrase | None:
        """A team's file: every desk writes it (and, in a keyed log, holds the key), so the
        chain and the queue find an edit by someone without those, never a desk's rewrite."""
        if not self.shared:
            return None
        return Phrase("audit.file_limit_keyed" if self.audit_key else "audit.file_limit", {"where": self.where})

    def _own_key(self, *, create: bool) -> bytes | None:
        assert self.key_file is not None
        return read_or_create_key(self.key_file, create=create)

    def _session_operator(self) -> str:
        return operator_name()

    def _error(self, exc: sqlite3.Error) -> RecordError:
        if "locked" in str(exc) or "busy" in str(exc):
            return RecordError("runs.store_busy", where=self.where)
        return RecordError("runs.store_failed", where=self.where, why=_why(exc))

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


def _connect(path: Path, where: str, *, own: bool) -> sqlite3.Connection:
    """The database, made (0600: it holds customers' orders) when it does not exist yet.
    `own`: the state directory's, where nothing planted in the database's place (a link, a
    FIFO, a folder) is opened, and the file is made private again if it was not."""
    error: type[ConfigError] | type[RecordError] = RecordError if own else ConfigError
    if not path.parent.is_dir():
        raise error("runs.no_folder", where=where, folder=path.parent)
    if own:
        statedir.refuse_unusable(path.parent)  # nothing planted in the database's place, nor its journal's
    try:
        if own:
            _private(path)
        else:
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        uri = f"file:{quote(str(path.absolute()))}?mode=rw"
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
    except (OSError, sqlite3.Error) as exc:
        why = statedir.reason(exc) if isinstance(exc, OSError) else _why(exc)
        raise error("runs.cannot_open", where=where, why=why) from None
    return connection


def _private(path: Path) -> None:
    """The state directory's database made (0600), or one made readable by hand made private
    again. An existing file is never opened here: closing a descriptor of it would drop the
    locks every other SQLite connection of this process holds on it (POSIX locks belong to
    the process), and a writer elsewhere could then checkpoint the log away under them (a
    server's token connection read a revoked token as valid)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600))
        return  # new: nobody else had it open
    except FileExistsError:
        pass
    found = os.lstat(path)
    if not stat.S_ISREG(found.st_mode):  # refuse_unusable said so already, unless it was planted since
        raise OSError(errno.ELOOP if stat.S_ISLNK(found.st_mode) else errno.EINVAL, statedir.NOT_REGULAR)
    if found.st_mode & 0o077:
        os.chmod(path, 0o600)


def _why(exc: sqlite3.Error) -> str:
    """SQLite's words for what failed; a full file system in the system's own words, as for
    every other file orderbot writes."""
    if getattr(exc, "sqlite_errorname", None) == "SQLITE_FULL":
        return os.strerror(errno.ENOSPC)
    return str(exc)
