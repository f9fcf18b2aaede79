"""Which run store a command uses: `--runs URL` / ORDERBOT_RUNS, else the state directory's.

    (not set)                  runs.db in the state directory (orderbot.runs.sqlite), made
                               when missing; an earlier orderbot's JSON records there are
                               taken over on its first use (orderbot.runs.takeover)
    sqlite:///runs.db          a SQLite database of a team's (orderbot.runs.sqlite), made when missing
    postgresql://role@host/db  a PostgreSQL database (orderbot.runs.postgres), psycopg needed

psycopg is imported only for its URL.
"""

from __future__ import annotations

import os
from pathlib import Path

from orderbot.errors import ConfigError
from orderbot.runs.base import BaseRunStore
from orderbot.runs.sqlite import SqliteRunStore
from orderbot.shops.source import public_source
from orderbot.text import POSTGRES_SCHEMES, url_scheme

MAKE_AUDIT_KEY = 'python -c "import secrets; print(secrets.token_hex(32))"'  # prints a key of 32 bytes
MIN_AUDIT_KEY = 32  # bytes: the log is public to its readers, so a short key could be guessed from it


def open_run_store(settings) -> BaseRunStore:
    """The run store the settings name (orderbot.settings.Settings: runs, state_dir,
    keep_runs, prune_after_days), keyed with the audit key they give (`audit_key`);
    ConfigError in one sentence when it cannot be used."""
    key = audit_key(settings)
    store = _open(settings, key)
    store.audit_key = key
    return store


def audit_key(settings) -> bytes | None:
    """The audit key, from ORDERBOT_AUDIT_KEY or the file ORDERBOT_AUDIT_KEY_FILE names (not
    both); None when neither is set. A sentence about it names the setting or the file,
    never the key."""
    if settings.audit_key is not None and settings.audit_key_file is not None:
        raise ConfigError("settings.audit_key_twice")
    if settings.audit_key is not None:
        key = settings.audit_key.get_secret_value().strip().encode()
        where = "ORDERBOT_AUDIT_KEY"
    elif settings.audit_key_file is not None:
        path = Path(settings.audit_key_file).expanduser()
        try:
            with open(path, "rb") as handle:
                if os.name == "posix" and os.fstat(handle.fileno()).st_mode & 0o077:
                    raise ConfigError("settings.audit_key_file_open", path=path)
                key = handle.read(4096).strip()
        except OSError as exc:
            raise ConfigError("settings.audit_key_file_unreadable", path=path, why=exc.strerror or str(exc)) from None
        where = str(path)
    else:
        return None
    if len(key) < MIN_AUDIT_KEY:
        raise ConfigError("settings.audit_key_short", where=where, least=MIN_AUDIT_KEY, command=MAKE_AUDIT_KEY)
    return key


def _open(settings, key: bytes | None) -> BaseRunStore:
    url = settings.runs
    days = settings.prune_after_days
    if url is None:
        return SqliteRunStore.in_state_dir(
            settings.resolved_state_dir(), keep=settings.keep_runs, prune_after_days=days
        )
    scheme = url_scheme(url)
    if scheme == "sqlite":
        rest = url.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise settings.error_for("runs")("runs.bad_sqlite_url", url=public_source(url))
        return SqliteRunStore.open(Path(rest[1:]), where=f"sqlite:///{rest[1:]}", prune_after_days=days)
    if scheme in POSTGRES_SCHEMES:
        from orderbot.runs.postgres import PostgresRunStore  # psycopg: the postgres extra

        return PostgresRunStore.open(url, prune_after_days=days, audit_key=key)  # its owner's key: a keyed log
    raise settings.error_for("runs")("runs.bad_url", url=public_source(url))
