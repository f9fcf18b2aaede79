"""What a store holds reaches an MCP client escaped however the client reads a result: as
structured content, or by parsing the text content's JSON. Before, the text was escaped as
text only: an ESC in an order's field went out as the JSON escape `\\u001b`, which a client
that parses the text turned back into a raw ESC on its screen."""

from __future__ import annotations

import json
import shutil

from mcpkit import Served

from orderbot.shops.sample.model import SAMPLE_PATH

HOSTILE = "龙井\x1b]8;;http://evil\x07\u202e\r"


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def test_a_hostile_field_is_escaped_in_the_structure_and_in_the_parsed_text(tmp_path) -> None:
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    document = json.loads(orders.read_text(encoding="utf-8"))
    document["orders"][0]["items"][0]["name"] = HOSTILE
    orders.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    served = Served(orders, tmp_path / "state", user="C001")

    async def script(client):
        return await client.call_tool("get_order_details", {"order_id": "ORD-1001"})

    try:
        result = served.drive(script)
    finally:
        served.close()
    parsed = json.loads(result.content[0].text)
    assert parsed == result.structured_content
    shown = [s for s in strings(parsed) if "龙井" in s]
    assert shown and all(s.isprintable() for s in strings(parsed))
    assert "\\x1b" in shown[0] and "\\u202e" in shown[0]  # said as escapes, not dropped
