"""`orderbot orders show` prints order data a person may not have written (a note, an item's
name, a carrier from an imported file): never raw control characters, never Rich markup, and
one line per field whatever the data holds."""

from __future__ import annotations

import json

from clikit import cli

HOSTILE = "\x1b[2J[bold red]x[/bold red]\u202e\r\nfake: line\x07"


def test_order_data_is_shown_escaped_one_field_a_line(orders_file):
    orders = json.loads(orders_file.read_text("utf-8"))
    order = next(o for o in orders["orders"] if o["order_id"] == "ORD-1001")
    order["note"] = HOSTILE
    order["items"][0]["name"] = HOSTILE
    order["shipping"]["carrier"] = HOSTILE
    orders_file.write_text(json.dumps(orders, ensure_ascii=False), "utf-8")
    for lang in ("en", "zh"):
        shown = cli("--lang", lang, "orders", "show", "ORD-1001", "--user", "C001", "--orders", str(orders_file))
        assert shown.exit_code == 0, shown.output
        assert not any(ch in shown.output for ch in "\x1b\x07\u202e\r"), repr(shown.output)
        assert shown.output.count("[bold red]x[/bold red]") == 3  # as written, not as Rich would style it
        assert not [line for line in shown.output.splitlines() if line.startswith("fake")], shown.output
