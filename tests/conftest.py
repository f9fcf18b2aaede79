"""Shared fixtures: a private copy of the sample orders, a temporary state directory,
no API key from the developer's environment, and a way to plug a scripted model into
the real command line."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import bytecode
import pytest
import warm_orderbot

from orderbot import models
from orderbot.loop.dispatch import Toolbox
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore
from orderbot.shops.sample.tools import order_tools

ENV_TO_CLEAR = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MODEL_NAME")


HOME_VARIABLES = ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
SUITE_HOME = "ORDERBOT_TESTS_HOME"  # set once the suite has a home of its own (workers inherit it)


def pytest_configure(config: pytest.Config) -> None:
    """Two things for the whole session, set by the controller before pytest-xdist's workers
    start (they inherit its environment):
    - a home of its own (HOME and the XDG directories in a temporary folder), so that nothing
      a test or a process it starts does (a default state directory, a config file) lands in
      the home of whoever runs the suite; each test then gets its own (`isolated`);
    - bytecode, written as Python writes it by default (`__pycache__` beside each source,
      ignored by git) even where the environment sets PYTHONDONTWRITEBYTECODE: else each
      worker and each of the orderbot processes the tests start compiles orderbot's sources
      and rewrites every test module afresh (an editable install has no bytecode of its own),
      ~8 s of the quick loop's 66. A cache private to the session (PYTHONPYCACHEPREFIX) was
      worse: Python then looks for the libraries' bytecode there too, and compiles them all.
    And the warm orderbot a worker may start (tests/warm_orderbot.py) stops with it."""
    config.add_cleanup(warm_orderbot.stop)
    if SUITE_HOME not in os.environ:
        home = tempfile.mkdtemp(prefix="orderbot-tests-home-")
        os.environ[SUITE_HOME] = home
        for name in HOME_VARIABLES:
            os.environ[name] = home if name == "HOME" else os.path.join(home, name.lower())
        config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False  # this process too (`-n 0`): its test modules, rewritten once
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None) not in (None, 0):
        bytecode.make_once(config, Path(__file__).resolve().parent.parent)  # tests/bytecode.py: why


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use. A good part of the
    suite waits rather than computes (a terminal session, a loopback server holding a reply,
    a deadline running out), and the extra worker computes meanwhile: on 2 cores, 3 workers
    take ~157 s where 2 take ~185 s (benchmarks/README.md)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs the PostgreSQL server is slow: the server is a cluster of processes
    started for the session (seconds), so the quick loop (`-m "not slow"`) leaves every such
    test, and the cluster's start, to the full suite. Told by the fixture it asks for, or by
    a store parameter named "postgres" (a fixture that asks for the server on that value)."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "postgres_server" in getattr(item, "fixturenames", ()) or any(v == "postgres" for v in params.values()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every test runs in its own folder, with its own state dir and no real settings."""
    for name in list(os.environ):
        if name.startswith("ORDERBOT_") or name in ENV_TO_CLEAR:
            monkeypatch.delenv(name)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    home = tmp_path / "home"
    home.mkdir()
    for name in HOME_VARIABLES:
        monkeypatch.setenv(name, str(home if name == "HOME" else home / name.lower()))
    monkeypatch.setenv("ORDERBOT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("NO_COLOR", "1")
    # The width comes from the test, not from the shell or the test runner (pytest-xdist's
    # workers have COLUMNS=80 in their environment): piped output is then PIPED_WIDTH wide.
    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    # English unless a test asks for Chinese, whatever the developer's locale is.
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    from orderbot import i18n

    i18n.set_language(None)
    return work


@pytest.fixture
def orders_file(tmp_path: Path) -> Path:
    path = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, path)
    return path


@pytest.fixture
def store(orders_file: Path) -> JsonStore:
    return JsonStore.load(orders_file)


@pytest.fixture
def toolbox(store: JsonStore) -> Toolbox:
    return Toolbox(order_tools(store))


@pytest.fixture
def use_model(monkeypatch: pytest.MonkeyPatch):
    """Make `--provider scripted` hand this model to the real CLI."""

    def install(model) -> None:
        monkeypatch.setitem(models.FACTORIES, "scripted", lambda settings, shop: model)

    return install


class FakeClock:
    """A clock tests move by hand: no sleeping."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# ---- the three stores (tests/shopkit.py) ------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL cluster for the whole test session, removed at the end."""
    from shopkit import start_postgres

    server, stop = start_postgres()
    try:
        yield server
    finally:
        stop()


@pytest.fixture(scope="session")
def postgres_template(postgres_server) -> str:
    """A database holding the sample orders; each test gets its own copy of it."""
    from shopkit import sample_orders

    from orderbot.shops.sample.stores.postgres import import_orders
    from orderbot.shops.source import parse_source

    name = postgres_server.new_database()
    import_orders(parse_source(postgres_server.url(name)), sample_orders(), replace=False)
    return name


@pytest.fixture(params=["json", "sqlite", "postgres"])
def shop(request, tmp_path):
    """The sample orders in each kind of store in turn, private to the test."""
    from shopkit import make_shop

    server = template = None
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        template = request.getfixturevalue("postgres_template")
    made = make_shop(request.param, tmp_path, server, template)
    yield made
    made.remove()
