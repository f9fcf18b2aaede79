"""An import validates every order before it writes anything, with the rules every store
applies (orderbot.shops.sample.model): a refused import is one sentence naming the order and
the field, exit 6, and leaves nothing behind (no SQLite file, no PostgreSQL table). The
same file is taken or refused alike as JSON orders, by SQLite and by PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clikit import cli

from orderbot.shops.sample.model import SAMPLE_PATH

FIRST = json.loads(SAMPLE_PATH.read_text("utf-8"))["orders"][0]  # ORD-1001


def item(**changes) -> list[dict]:
    return [dict(FIRST["items"][0], **changes)]


# (what is wrong, the changed fields, the field the refusal names); "1e400" is written as a bare number.
BAD = [
    ("infinite total", {"total": "1e400"}, "total"),
    ("negative infinity", {"total": "-1e400"}, "total"),
    ("absurd total", {"total": "1e300"}, "total"),
    ("absurd unit price", {"items": item(unit_price="1e400")}, "items.0.unit_price"),
    ("absurd quantity", {"items": item(quantity=10**30)}, "items.0.quantity"),
    ("NUL in the note", {"note": "a\x00b"}, "note"),
    ("NUL in an item's name", {"items": item(name="茶\x00")}, "items.0.name"),
    ("NUL in the city", {"shipping": {"carrier": "顺丰", "city": "杭\x00州"}}, "shipping.city"),
    ("NUL in the id", {"order_id": "ORD-1001\x00"}, "order_id"),
    ("look-alike id", {"order_id": "ORD-1\u041e01"}, "order_id"),
    ("control in the customer", {"customer_id": "C0\x1b01"}, "customer_id"),
    ("look-alike customer", {"customer_id": "С001"}, "customer_id"),
    ("lower-case currency", {"currency": "cny"}, "currency"),
]


def write_orders(path: Path, **changes) -> Path:
    order = dict(FIRST, **changes)
    text = json.dumps({"orders": [order]}, ensure_ascii=False)
    for bare in ("1e400", "-1e400", "1e300"):  # numbers JSON can spell and Python's json would not write
        text = text.replace(f'"{bare}"', bare)
    path.write_text(text, encoding="utf-8")
    return path


def one_refusal(result, field: str) -> None:
    assert result.exit_code == 6, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "ORD-1" in lines[0] and f"field {field}:" in lines[0], lines[0]
    assert "\x00" not in result.output and "\x1b" not in result.output


@pytest.mark.parametrize("what, changes, field", BAD, ids=[b[0] for b in BAD])
def test_a_bad_order_is_refused_by_every_store_and_nothing_is_written(what, changes, field, tmp_path):
    bad = write_orders(tmp_path / "bad.json", **changes)
    one_refusal(cli("ask", "--orders", str(bad), "查询 ORD-1001"), field)  # the JSON store
    database = tmp_path / "shop.db"
    one_refusal(cli("orders", "import", str(bad), "--to", f"sqlite:///{database}"), field)
    assert not any(tmp_path.glob("shop.db*")), "a refused import left a file behind"


@pytest.mark.parametrize("what, changes, field", BAD[:7], ids=[b[0] for b in BAD[:7]])
def test_postgres_refuses_the_same_orders_and_keeps_what_it_held(what, changes, field, tmp_path, postgres_server):
    bad = write_orders(tmp_path / "bad.json", **changes)
    database = postgres_server.new_database()
    try:
        url = postgres_server.url(database)
        assert cli("orders", "import", str(SAMPLE_PATH), "--to", url).exit_code == 0
        one_refusal(cli("orders", "import", str(bad), "--to", url, "--replace"), field)
        import psycopg

        with psycopg.connect(url) as connection:
            assert connection.execute("SELECT count(*) FROM orders").fetchone()[0] == 14  # untouched
    finally:
        postgres_server.drop_database(database)


def test_text_with_controls_is_kept_alike_by_every_store(shop, tmp_path):
    """Controls other than NUL are data: every store keeps them (and every view escapes them)."""
    note = "line one\n\x1b[31mred\u202e \x9b"
    other = shop.another([dict(FIRST, note=note)])
    assert other.open().get("ORD-1001").note == note
