"""`orderbot orders import|list|show`, a database behind `ask`, and what a bad database
URL does: one sentence, exit 6, never the password."""

from __future__ import annotations

import builtins
import json
import logging
import os
from pathlib import Path

import pytest
from clikit import cli
from runkit import only_run, record_bytes
from shopkit import PASSWORD

from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.source import parse_source, public_source

STATUS = "请查询订单 ORD-1001 的状态。"


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str:
    """An empty database URL of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shop.db'}"
    server = request.getfixturevalue("postgres_server")
    return server.url(server.new_database())


def test_import_then_ask_answers_from_the_database(database, orders_file):
    imported = cli("orders", "import", str(orders_file), "--to", database, "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.output)["imported"] == 14
    result = cli("ask", "--orders", database, STATUS)
    assert result.exit_code == 0, result.output
    assert "订单 ORD-1001 的状态是：已发货。" in result.output
    assert PASSWORD not in imported.output + result.output


def test_the_record_keeps_the_database_without_its_password(database, orders_file):
    cli("orders", "import", str(orders_file), "--to", database)
    result = cli("ask", "--user", "C001", "--orders", database, "--json", "取消订单 ORD-1002")
    assert result.exit_code == 4, result.output
    text = record_bytes(only_run()).decode()
    assert PASSWORD not in text and PASSWORD not in result.output
    assert json.loads(text)["orders"] == parse_source(database).identity


def test_import_refuses_to_overwrite_unless_replace(database, orders_file, tmp_path):
    assert cli("orders", "import", str(orders_file), "--to", database).exit_code == 0
    again = cli("orders", "import", str(orders_file), "--to", database)
    assert again.exit_code == 6 and "already holds 14 orders; pass --replace" in again.output
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"orders": json.loads(orders_file.read_text())["orders"][:1]}, ensure_ascii=False))
    replaced = cli("orders", "import", str(one), "--to", database, "--replace")
    assert replaced.exit_code == 0, replaced.output
    listed = json.loads(cli("orders", "list", "--all", "--orders", database, "--json").output)
    assert [o["order_id"] for o in listed["orders"]] == ["ORD-1001"]


def test_an_invalid_file_imports_nothing(database, orders_file, tmp_path):
    assert cli("orders", "import", str(orders_file), "--to", database).exit_code == 0
    broken = json.loads(orders_file.read_text())
    broken["orders"][5]["total"] = "lots"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken, ensure_ascii=False))
    result = cli("orders", "import", str(bad), "--to", database, "--replace")
    assert result.exit_code == 6 and "order #6" in result.output and "field total" in result.output
    assert len(json.loads(cli("orders", "list", "--all", "--orders", database, "--json").output)["orders"]) == 14


def test_a_failed_import_into_a_new_sqlite_file_leaves_no_file(tmp_path, orders_file, monkeypatch):
    from orderbot.shops.sample.stores import sqlite

    def broken(orders, size):
        yield from []
        raise sqlite.sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite, "chunks", broken)
    result = cli("orders", "import", str(orders_file), "--to", f"sqlite:///{tmp_path / 'new.db'}")
    assert result.exit_code == 6 and "nothing was written" in result.output
    assert not list(tmp_path.glob("new.db*"))


def test_list_and_show_follow_the_tools_rules(shop):
    mine = json.loads(cli("orders", "list", "--user", "C001", "--orders", shop.source, "--json").output)
    assert mine["orders"] and all(o["order_id"] for o in mine["orders"])
    assert {"customer_id"} & set(mine["orders"][0]) == set()
    ids = [o["order_id"] for o in mine["orders"]]
    assert "ORD-1003" not in ids  # C002's
    whose = cli("orders", "list", "--orders", shop.source)
    assert whose.exit_code == 2 and "--user C001" in whose.output and "--all" in whose.output

    details = cli("orders", "show", "ORD-1001", "--user", "C001", "--orders", shop.source, "--json")
    assert json.loads(details.output)["shipping"]["tracking_number"] == "SF1234567890123"
    other = cli("orders", "show", "ORD-1001", "--user", "C002", "--orders", shop.source, "--json")
    unknown = cli("orders", "show", "ORD-9999", "--user", "C002", "--orders", shop.source, "--json")
    assert other.exit_code == unknown.exit_code == 1
    assert other.output.replace("ORD-1001", "ID") == unknown.output.replace("ORD-9999", "ID")  # nothing leaks
    assert "SF1234567890123" not in other.output
    anyone = cli("orders", "show", "ORD-1001", "--orders", shop.source, "--json")
    assert json.loads(anyone.output) == {"order_id": "ORD-1001", "status": "已发货"}


def test_list_pages_and_filters(shop):
    def page(*extra: str) -> list[str]:
        out = cli("orders", "list", "--all", "--orders", shop.source, "--json", *extra).output
        return [o["order_id"] for o in json.loads(out)["orders"]]

    everything = page("--limit", "100")
    assert page("--limit", "5") + page("--limit", "5", "--offset", "5") == everything[:10]
    assert len(page("--status", "待付款")) == sum(1 for _ in page("--status", "待付款", "--limit", "100"))


def test_order_data_never_reaches_the_terminal_raw(shop):
    orders = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))["orders"]
    orders[0]["note"] = "\x1b[31mred\x1b]0;title\x07"
    other = shop.another(orders, "escapes")
    shown = cli("orders", "show", "ORD-1001", "--user", "C001", "--orders", other.source)
    assert shown.exit_code == 0 and "\x1b" not in shown.output and "\x07" not in shown.output


# ---- what a bad PostgreSQL URL does ---------------------------------------------------------


def bad_postgres(postgres_server, caplog, *urls: str) -> list[str]:
    outputs = []
    for url in urls:
        with caplog.at_level(logging.DEBUG, logger="orderbot"):
            result = cli("ask", "--orders", url, STATUS)
        assert result.exit_code == 6, result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
        outputs.append(result.output)
    log_file = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    logged = (log_file.read_text() if log_file.exists() else "") + caplog.text
    for text in [*outputs, logged]:
        assert PASSWORD not in text and "wrong-Pw-9" not in text
    return outputs


def test_wrong_password_missing_database_and_missing_tables_are_one_sentence(postgres_server, caplog):
    empty = postgres_server.new_database()
    wrong, missing, no_tables = bad_postgres(
        postgres_server,
        caplog,
        postgres_server.url("postgres", password="wrong-Pw-9"),
        postgres_server.url("no_such_db"),
        postgres_server.url(empty),
    )
    assert "refused the user name or password" in wrong
    assert "no such database" in missing
    assert "holds no orderbot orders" in no_tables and "orderbot orders import" in no_tables
    assert f"orderbot@127.0.0.1:{postgres_server.port}" in wrong  # the place, named without the password


def test_nothing_listening_is_one_sentence(caplog):
    pytest.importorskip("psycopg")  # without it the sentence says to install it (a fresh '.[dev]' venv)
    from shopkit import free_port

    [refused] = bad_postgres(None, caplog, f"postgresql://orderbot:{PASSWORD}@127.0.0.1:{free_port()}/shop")
    assert "nothing answers" in refused


def test_without_psycopg_the_error_names_the_extra(monkeypatch):
    real = builtins.__import__

    def no_psycopg(name, *args, **kwargs):
        if name == "psycopg" or name.startswith("psycopg."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    result = cli("ask", "--orders", "postgres://shop@db.example/orders", STATUS)
    assert result.exit_code == 6
    assert result.output.strip() == "orderbot: PostgreSQL orders need psycopg, which is not installed: " \
        "pip install 'orderbot[postgres]'"  # fmt: skip


def test_the_public_form_of_a_url_drops_the_password_and_query():
    assert public_source("postgresql://shop:pw@db:5433/orders?password=x") == "postgresql://shop@db:5433/orders"
    assert public_source("postgres://db/orders") == "postgres://db/orders"


def test_a_statement_outliving_the_run_is_cut_off(postgres_server):
    from shopkit import sample_orders

    from orderbot.errors import ToolError
    from orderbot.shops.sample.stores.postgres import PostgresStore, import_orders

    source = parse_source(postgres_server.url(postgres_server.new_database()))
    import_orders(source, sample_orders(), replace=False)
    store = PostgresStore.open(source)
    store.connection.execute("CREATE FUNCTION slow(text) RETURNS text AS 'SELECT pg_sleep(1); SELECT $1' LANGUAGE sql")
    with pytest.raises(ToolError) as raised:
        store._rows("SELECT slow(?)", ("C001",), timeout=0.2)
    assert raised.value.code == "timeout"
    assert store._rows("SELECT slow(?)", ("C001",)) == [("C001",)]  # the bound was for that statement alone
    store.close()


def test_the_tools_hand_the_store_what_is_left_of_the_run(store, clock):
    from orderbot.loop.dispatch import Toolbox
    from orderbot.loop.engine import Engine, Limits
    from orderbot.loop.state import RunState
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.shops.sample.tools import order_tools

    seen = []
    real_get = store.get
    store.get = lambda order_id, timeout=None: seen.append(timeout) or real_get(order_id)
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("ok")])
    clock.advance(0)
    Engine(model, Toolbox(order_tools(store)), Limits(timeout=30), clock=clock).run(RunState.start("q"))
    assert seen == [pytest.approx(30)]
