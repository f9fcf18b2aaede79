"""`orderbot orders import` of a tau2-shaped shop into SQLite and PostgreSQL and `orderbot
orders export` back from every store: tau2's db.json comes back byte for byte; a refused
import says the JSON store's sentence and leaves nothing; a database keeps one shop."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from clikit import cli
from retailkit import DB
from saying import english
from shopkit import PASSWORD

from orderbot.errors import OrdersFileError
from orderbot.shops.choice import open_shop_store
from orderbot.shops.retail.jsonstore import JsonShopStore
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.source import parse_source


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str:
    """An empty database URL of each kind."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shop.db'}"
        return
    server = request.getfixturevalue("postgres_server")
    name = server.new_database()
    yield server.url(name)
    server.drop_database(name)


def test_import_then_export_gives_tau2s_file_back_byte_for_byte(database, tmp_path):
    imported = cli("orders", "import", str(DB), "--to", database, "--json")
    assert imported.exit_code == 0, imported.output
    assert {k: v for k, v in json.loads(imported.output).items() if k in ("products", "users", "orders")} == {
        "products": 50,
        "users": 500,
        "orders": 1000,
    }
    out = tmp_path / "out.json"
    exported = cli("orders", "export", "--orders", database, str(out))
    assert exported.exit_code == 0, exported.output
    assert "Exported 50 products, 500 customers and 1,000 orders" in exported.output
    assert out.read_bytes() == DB.read_bytes()
    assert PASSWORD not in imported.output + exported.output


def test_the_json_store_exports_too(tmp_path):
    out = tmp_path / "out.json"
    result = cli("orders", "export", "--orders", str(DB), str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["exported"] == {"products": 50, "users": 500, "orders": 1000}
    assert out.read_bytes() == DB.read_bytes()


def test_the_database_opens_as_the_shop_it_holds(database, tmp_path):
    assert cli("orders", "import", str(DB), "--to", database).exit_code == 0
    shop, store = open_shop_store(parse_source(database))
    store.close()
    assert shop == "retail"
    sample = cli("orders", "import", str(SAMPLE_PATH), "--to", database)
    assert sample.exit_code == 6 and "already holds another shop (table retail_schema); pass --replace" in sample.output
    assert cli("orders", "import", str(SAMPLE_PATH), "--to", database, "--replace").exit_code == 0
    shop, store = open_shop_store(parse_source(database))
    assert (shop, store.count()) == ("sample", 14)
    store.close()
    refused = cli("orders", "export", "--orders", database, str(tmp_path / "x.json"))
    assert refused.exit_code == 6 and "holds the sample shop's orders, not a retail shop" in refused.output
    assert not (tmp_path / "x.json").exists()
    again = cli("orders", "import", str(DB), "--to", database)
    assert again.exit_code == 6 and "already holds 14 orders of the sample shop; pass --replace" in again.output
    assert cli("orders", "import", str(DB), "--to", database, "--replace").exit_code == 0
    shop, store = open_shop_store(parse_source(database))
    assert (shop, store.count()) == ("retail", 1000)
    store.close()


def test_a_hostile_id_is_refused_as_the_json_store_refuses_it_and_nothing_is_left(tmp_path):
    document = json.loads(DB.read_text(encoding="utf-8"))
    product = next(iter(document["products"].values()))
    variant_id = next(iter(product["variants"]))
    product["variants"][variant_id]["item_id"] = variant_id + "\x00"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(OrdersFileError) as as_json_store:
        JsonShopStore.load(bad)
    imported = cli("orders", "import", str(bad), "--to", f"sqlite:///{tmp_path / 'new.db'}")
    assert imported.exit_code == 6
    line = imported.output.strip()
    assert f"products.{product['product_id']}.variants.{variant_id}.item_id" in line
    assert "\x00" not in line and len(line.splitlines()) == 1
    assert line.endswith(": " + english(as_json_store.value))  # the very sentence `--orders bad.json` gives
    assert list(tmp_path.glob("new.db*")) == []


def test_a_failed_export_leaves_the_file_that_was_there(tmp_path):
    target = f"sqlite:///{tmp_path / 'shop.db'}"
    assert cli("orders", "import", str(DB), "--to", target).exit_code == 0
    with sqlite3.connect(tmp_path / "shop.db") as connection:  # a row spoilt by hand, halfway through
        connection.execute("UPDATE retail_orders SET body = '{' WHERE seq = 500")
    out = tmp_path / "out.json"
    out.write_text("before")
    result = cli("orders", "export", "--orders", target, str(out))
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert out.read_text() == "before"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")] == []


def test_the_sample_shops_import_is_unchanged(tmp_path):
    result = cli("orders", "import", str(SAMPLE_PATH), "--to", f"sqlite:///{tmp_path / 's.db'}", "--json")
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)) == {"imported", "from", "to", "seconds"}
    assert Path(tmp_path / "s.db").is_file()


def test_an_export_never_replaces_the_database_it_reads(tmp_path):
    database = tmp_path / "shop.db"
    assert cli("orders", "import", str(DB), "--to", f"sqlite:///{database}").exit_code == 0
    before = database.read_bytes()
    result = cli("orders", "export", "--orders", f"sqlite:///{database}", str(database))
    assert result.exit_code == 6 and "is the shop being exported" in result.output
    assert database.read_bytes() == before


OLIVIA = "olivia_ito_3591"
SHOP = json.loads(DB.read_text(encoding="utf-8"))


def test_list_and_show_serve_the_retail_shop_on_each_store(database):
    """A customer's orders, and one order with its items, fulfilments and payments, the
    same from the JSON file and from a database."""
    assert cli("orders", "import", str(DB), "--to", database).exit_code == 0
    for source in (database, str(DB)):
        listed = cli("orders", "list", "--user", OLIVIA, "--orders", source, "--json")
        assert listed.exit_code == 0, listed.output
        rows = json.loads(listed.stdout)["orders"]
        assert [row["order_id"] for row in rows] == SHOP["users"][OLIVIA]["orders"]
        assert rows[0] == {"order_id": "#W5866402", "status": "delivered", "items": 2, "paid": 3203.78}
        shown = cli("orders", "show", "#W5866402", "--user", OLIVIA, "--orders", source, "--json")
        assert shown.exit_code == 0 and json.loads(shown.stdout) == SHOP["orders"]["#W5866402"]
        text = cli("orders", "show", "#W5866402", "--user", OLIVIA, "--orders", source).stdout.splitlines()
        assert "item: Sneakers (9727387530) · size: 11, color: black, material: synthetic · $207.75" in text
        assert "fulfilment: tracking 203283266934 · items 6242772310, 9727387530" in text
        assert "payment: $3,203.78 · paypal_8049766" in text


def test_show_follows_the_tools_rules_on_the_retail_shop():
    other = next(user for user in SHOP["users"] if user != OLIVIA)
    refused = cli("orders", "show", "#W5866402", "--user", other, "--orders", str(DB))
    assert refused.exit_code == 1 and refused.stdout == ""
    assert refused.stderr.strip() == f"orderbot: #W5866402: no order with this id belongs to {other}"
    anyone = cli("orders", "show", "#W5866402", "--orders", str(DB), "--json")  # a status by its exact id
    assert anyone.exit_code == 0 and json.loads(anyone.stdout) == {"order_id": "#W5866402", "status": "delivered"}
    missing = cli("orders", "show", "#W0000000", "--orders", str(DB), "--json")
    assert missing.exit_code == 1 and json.loads(missing.stdout)["status"] == "not found"
    nobody = cli("orders", "list", "--user", "nobody_0", "--orders", str(DB))
    assert nobody.exit_code == 6 and "no customer 'nobody_0' in this shop" in nobody.stderr


def test_list_all_pages_through_every_customers_orders():
    first = json.loads(cli("orders", "list", "--all", "--limit", "2", "--orders", str(DB), "--json").stdout)
    second = json.loads(
        cli("orders", "list", "--all", "--limit", "2", "--offset", "2", "--orders", str(DB), "--json").stdout
    )
    assert [r["order_id"] for r in first["orders"] + second["orders"]] == list(SHOP["orders"])[:4]
    assert (
        first["more"] and first["orders"][0]["customer_id"] == SHOP["orders"][first["orders"][0]["order_id"]]["user_id"]
    )
    pending = json.loads(cli("orders", "list", "--all", "--status", "pending", "--orders", str(DB), "--json").stdout)
    assert {r["status"] for r in pending["orders"]} == {"pending"}


def test_list_on_a_retail_database_of_another_schema_version_says_so(tmp_path):
    database = tmp_path / "shop.db"
    assert cli("orders", "import", str(DB), "--to", f"sqlite:///{database}").exit_code == 0
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE retail_schema SET version = 999")
    connection.close()
    result = cli("orders", "list", "--all", "--orders", f"sqlite:///{database}")
    assert result.exit_code == 6 and "retail shop schema version 999" in result.stderr, result.output
