"""The three stores as test fixtures: the same 14 sample orders as a JSON file, a SQLite
database and a PostgreSQL database on a throwaway server the tests start themselves.

The PostgreSQL server: `initdb` in a temporary directory, a free loopback port, password
authentication over TCP, no fsync (it is thrown away). Tests and CI run as root and
initdb refuses root, so as root the cluster belongs to the image's `postgres` system user
(runuser -u postgres). Without the binaries or psycopg the PostgreSQL cases skip with
one line saying how to enable them; under CI=true they fail instead of skipping.
"""

from __future__ import annotations

import itertools
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orderbot.shops.choice import store_type
from orderbot.shops.sample.model import ORDER, SAMPLE_PATH
from orderbot.shops.sample.stores.base import Store
from orderbot.shops.source import parse_source

KINDS = ("json", "sqlite", "postgres")
PASSWORD = "pg-Secret-7f3a"  # tests check it never shows up anywhere
ENABLE = (
    "PostgreSQL tests skipped: install the server binaries (initdb, pg_ctl on the PATH, e.g. "
    "apt-get install postgresql) and pip install -e '.[dev]'"
)


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    _numbers: Iterator[int] = field(default_factory=itertools.count)
    start_again: Callable[[], None] | None = None  # after the server was stopped (tests that stop it)
    halt: Callable[[], None] | None = None  # stop it, its data kept (fault tests on a cluster of their own)

    def url(self, database: str, *, password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{self.user}:{secret}@{self.host}:{self.port}/{database}"

    def admin(self):
        import psycopg

        return psycopg.connect(self.url("postgres"), autocommit=True)

    def new_database(self, template: str = "template0") -> str:
        name = f"shop_{os.getpid()}_{next(self._numbers)}"
        with self.admin() as connection:
            connection.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def scratch_parent() -> str | None:
    """Where the cluster goes: in memory when the machine has a tmpfs with room (each test's
    CREATE DATABASE copies ~7 MB: 0.05 s there against 0.3 s on this disk), else the
    default temporary directory. Each test drops its database, so little memory is held."""
    shm = "/dev/shm"
    try:
        room = os.statvfs(shm)
    except OSError:
        return None
    return shm if room.f_bavail * room.f_frsize >= 1 << 30 and os.access(shm, os.W_OK) else None


def require_postgres() -> None:
    """Skip the test when the server binaries or psycopg are missing (fail under CI=true)."""
    binaries = [shutil.which(name) for name in ("initdb", "pg_ctl")]
    try:
        import psycopg  # noqa: F401
    except ImportError:
        binaries.append(None)
    if None in binaries:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: " + ENABLE.replace("skipped", "must run"))
        pytest.skip(ENABLE)


def start_postgres() -> tuple[PostgresServer, callable]:
    """A fresh cluster; returns the server and a function that stops and removes it."""
    require_postgres()
    root = Path(tempfile.mkdtemp(prefix="orderbot-pg-", dir=scratch_parent()))
    as_root = os.geteuid() == 0
    prefix: list[str] = []
    if as_root:  # initdb refuses root: the cluster belongs to the postgres system user
        account = pwd.getpwnam("postgres")
        os.chown(root, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    secret = root / "password"
    secret.write_text(PASSWORD + "\n")
    if as_root:
        os.chown(secret, account.pw_uid, account.pw_gid)
    data, port = root / "data", free_port()

    def run(*command: str) -> None:
        subprocess.run([*prefix, *command], cwd=root, check=True, capture_output=True, timeout=120)

    run(
        "initdb", "-D", str(data), "-U", "orderbot", f"--pwfile={secret}", "--auth-local=trust",
        "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync",
    )  # fmt: skip
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
    )

    def stop_now() -> None:
        """Stop the server at once and wait until it is gone; nothing to do if it is not running."""
        subprocess.run([*prefix, "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "-t", "60", "stop"], cwd=root,
                       check=False, capture_output=True, timeout=120)  # fmt: skip

    def start() -> None:
        if (data / "postmaster.pid").exists():
            # A stop the server was told to make itself (pg_ctl ... -W, from a trigger) may still
            # be under way: its clients see the connection drop before the postmaster is gone,
            # and a start then finds the old one holding the port.
            stop_now()
        run("pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "-t", "60", "start")

    start()

    def halt() -> None:
        run("pg_ctl", "-D", str(data), "-m", "fast", "-w", "-t", "60", "stop")

    def stop() -> None:
        stop_now()
        shutil.rmtree(root, ignore_errors=True)

    return PostgresServer("127.0.0.1", port, "orderbot", PASSWORD, start_again=start, halt=halt), stop


def sample_orders() -> list:
    from orderbot.shops.sample.stores.jsonfile import parse_orders

    return list(parse_orders(SAMPLE_PATH, SAMPLE_PATH.read_bytes()).values())


class Shop:
    """The sample orders in one kind of store, private to one test."""

    def __init__(
        self, kind: str, source: str, work: Path, server: PostgresServer | None = None, database: str | None = None
    ) -> None:
        self.kind = kind
        self.source = source  # what --orders takes
        self.work = work
        self.server = server
        self.database = database  # PostgreSQL: dropped by close()
        self._open: list[Store] = []
        self._made: list[Shop] = []  # the stores another() made, closed with this one

    def another(self, orders: list[dict], name: str = "other") -> Shop:
        """A store of the same kind holding `orders` (JSON-shaped dicts) instead."""
        document = {"orders": orders}
        if self.kind == "json":
            path = self.work / f"{name}.json"
            path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
            return Shop(self.kind, str(path), self.work, self.server)
        from orderbot.shops.sample.stores.jsonfile import parse_orders

        parsed = list(parse_orders(name, json.dumps(document).encode()).values())
        if self.kind == "sqlite":
            from orderbot.shops.sample.stores.sqlite import import_orders

            source, database = parse_source(f"sqlite:///{self.work / (name + '.db')}"), None
        else:
            from orderbot.shops.sample.stores.postgres import import_orders

            database = self.server.new_database()
            source = parse_source(self.server.url(database))
        import_orders(source, parsed, replace=False)
        made = Shop(self.kind, source.url, self.work, self.server, database)
        self._made.append(made)
        return made

    def open(self) -> Store:
        """The store as a new process would open it."""
        source = parse_source(self.source)
        store = store_type("sample", source.kind).open(source)
        self._open.append(store)
        return store

    def status(self, order_id: str) -> str:
        return self.open().get(order_id).status

    def snapshot(self) -> dict[str, dict]:
        """Every order as data: equal snapshots mean nothing was written."""
        store = self.open()
        return {o.order_id: ORDER.dump_python(o, mode="json") for o in store.list_orders(None, limit=100_000)}

    def close(self) -> None:
        """Close the connections the test opened (it may open the store again after)."""
        for store in self._open:
            store.close()
        self._open.clear()
        for made in self._made:
            made.close()

    def remove(self) -> None:
        """At the end of the test: close, and drop the PostgreSQL databases it made."""
        self.close()
        for shop in [*self._made, self]:
            if shop.database:
                shop.server.drop_database(shop.database)
                shop.database = None
        self._made.clear()


def make_shop(kind: str, work: Path, server: PostgresServer | None, template: str | None) -> Shop:
    if kind == "json":
        path = work / "shop-orders.json"
        shutil.copyfile(SAMPLE_PATH, path)
        return Shop(kind, str(path), work)
    if kind == "sqlite":
        from orderbot.shops.sample.stores.sqlite import import_orders

        source = parse_source(f"sqlite:///{work / 'shop.db'}")
        import_orders(source, sample_orders(), replace=False)
        return Shop(kind, source.url, work)
    database = server.new_database(template)
    return Shop(kind, server.url(database), work, server, database)
