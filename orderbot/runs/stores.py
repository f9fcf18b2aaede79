"""Which run store a command uses: `--runs URL` / ORDERBOT_RUNS, else the file store in the
state directory (what orderbot has always done).

    (not set)                  the state directory's runs/ (orderbot.runs.store)
    sqlite:///runs.db          a SQLite database (orderbot.runs.sqlite), made when missing
    postgresql://role@host/db  a PostgreSQL database (orderbot.runs.postgres), psycopg needed

The SQL modules are imported only for their URL: the default never imports sqlite3's run
store nor psycopg.
"""

from __future__ import annotations

from pathlib import Path

from orderbot.errors import ConfigError
from orderbot.i18n import t
from orderbot.runs.base import BaseRunStore
from orderbot.runs.store import RunStore
from orderbot.shops.source import public_source


def open_run_store(settings) -> BaseRunStore:
    """The run store the settings name (orderbot.settings.Settings: runs, state_dir,
    keep_runs, prune_after_days); ConfigError in one sentence when it cannot be used."""
    url = settings.runs
    days = settings.prune_after_days
    if url is None:
        return RunStore(settings.resolved_state_dir(), keep=settings.keep_runs, prune_after_days=days)
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "sqlite":
        rest = url.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(t("runs.bad_sqlite_url", url=public_source(url)))
        from orderbot.runs.sqlite import SqliteRunStore  # a store when chosen: the file store loads no sqlite3

        return SqliteRunStore.open(Path(rest[1:]), where=f"sqlite:///{rest[1:]}", prune_after_days=days)
    if scheme in ("postgresql", "postgres"):
        from orderbot.runs.postgres import PostgresRunStore  # psycopg: the postgres extra

        return PostgresRunStore.open(url, prune_after_days=days)
    raise ConfigError(t("runs.bad_url", url=public_source(url)))
