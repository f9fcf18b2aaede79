"""Every --json document has the shape docs/json.md gives it, key for key: the shapes are
read from the page, so a document and its description cannot drift apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from clikit import cli

PAGE = Path(__file__).resolve().parent.parent / "docs" / "json.md"
SECTION = re.compile(r"^## (orderbot [^\n]+)\n(.*?)(?=^## |\Z)", re.M | re.S)
BLOCK = re.compile(r"^```json\n(.*?)^```", re.M | re.S)
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z")
TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "time": lambda v: isinstance(v, str) and TIME.fullmatch(v) is not None,
}


def shapes() -> dict[str, object]:
    found = {}
    for title, body in SECTION.findall(PAGE.read_text(encoding="utf-8")):
        [block] = BLOCK.findall(body)
        found[title.strip()] = json.loads(block)
    return found


def mismatches(value: object, shape: object, where: str = "$") -> list[str]:
    """Where `value` departs from `shape`: a type name (`a|b`), an object of shapes (keys
    ending in `?` may be missing, no other key may be added) or a one-item list."""
    if isinstance(shape, str):
        names = shape.split("|")
        return [] if any(TYPES[name](value) for name in names) else [f"{where}: {value!r} is not {shape}"]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [m for i, item in enumerate(value) for m in mismatches(item, shape[0], f"{where}[{i}]")]
    if not isinstance(value, dict):
        return [f"{where}: not an object"]
    keys = {key.rstrip("?"): key.endswith("?") for key in shape}
    found = [f"{where}.{key}: not in docs/json.md" for key in value if key not in keys]
    found += [f"{where}.{key}: missing" for key, optional in keys.items() if not optional and key not in value]
    for key, sub in shape.items():
        if key.rstrip("?") in value:
            found += mismatches(value[key.rstrip("?")], sub, f"{where}.{key.rstrip('?')}")
    return found


def document(*args: str, code: int = 0) -> object:
    result = cli(*args, "--json")
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def test_the_page_describes_every_time_as_iso_and_is_well_formed():
    found = shapes()
    assert set(found) == set(RUNS), "a section of docs/json.md without a test, or a test without its section"

    def times(shape, where=""):
        if isinstance(shape, dict):
            for key, sub in shape.items():
                name = key.rstrip("?")
                if name == "at" or name.endswith("_at"):
                    assert sub == "time", f"{where}.{name} is a time: ISO 8601 UTC in every document"
                times(sub, f"{where}.{name}")
        elif isinstance(shape, list):
            times(shape[0], where)

    times(found)


def test_the_shape_check_catches_what_it_should():
    shape = {"at": "time", "n?": "integer", "args": "object", "list": [{"x": "string|null"}]}
    assert mismatches({"at": "2026-12-01T10:04:05Z", "args": {}, "list": [{"x": None}]}, shape) == []
    assert mismatches({"at": 1796161912.4, "args": {}, "list": []}, shape) == ["$.at: 1796161912.4 is not time"]
    assert mismatches({"at": "2026-12-01T10:04:05Z", "args": "{}", "list": [], "more": 1}, shape) == [
        "$.more: not in docs/json.md",
        "$.args: '{}' is not object",
    ]
    assert mismatches({"args": {}, "list": [{}]}, shape) == ["$.at: missing", "$.list[0].x: missing"]


@pytest.fixture
def team(tmp_path, orders_file) -> dict[str, object]:
    """One of each document, from a team's store where one run was approved and one rejected."""
    runs = f"sqlite:///{tmp_path / 'runs.db'}"
    where = ("--runs", runs, "--orders", str(orders_file))
    docs: dict[str, list] = {title: [] for title in RUNS}
    first = document("ask", "--trace", "--user", "C001", *where, "取消订单 ORD-1002", code=4)
    second = document("ask", "--no-facts", "--user", "C001", *where, "取消订单 ORD-1013", code=4)
    docs["orderbot ask"] += [first, second, document("ask", "--user", "C001", *where, "查询 ORD-1001")]
    docs["orderbot approvals"].append(document("approvals", "--runs", runs))
    docs["orderbot ask"].append(document("approvals", "approve", first["run_id"], *where))
    reject = ("approvals", "reject", second["run_id"], "--reason", "客户已改主意", *where)
    docs["orderbot ask"].append(document(*reject))
    docs["orderbot audit"].append(document("audit", "--runs", runs))
    docs["orderbot audit --verify"].append(document("audit", "--verify", "--runs", runs))
    docs["orderbot runs"].append(document("runs", "--runs", runs))
    docs["orderbot runs prune"].append(document("runs", "prune", "--older-than", "30", "--runs", runs))
    docs["orderbot replay"].append(document("replay", first["run_id"], "--runs", runs))
    docs["orderbot doctor"] += [document("doctor", "--orders", str(orders_file)), document("doctor", "--ping")]
    return docs


RUNS = (
    "orderbot ask",
    "orderbot approvals",
    "orderbot audit",
    "orderbot audit --verify",
    "orderbot runs",
    "orderbot runs prune",
    "orderbot replay",
    "orderbot doctor",
)


@pytest.mark.slow  # eleven commands
def test_every_json_document_has_the_shape_docs_json_md_gives_it(team):
    found = shapes()
    for title, outputs in team.items():
        for output in outputs:
            assert mismatches(output, found[title]) == [], title
    [queue] = team["orderbot approvals"]
    assert queue and queue[0]["arguments"]["order_id"] in ("ORD-1002", "ORD-1013")
    paused = team["orderbot ask"][0]
    assert paused["pending"] and "trace" in paused and "facts" not in team["orderbot ask"][1]
    [log] = team["orderbot audit"]
    assert {"proposed", "approved", "executed", "rejected"} <= {entry["event"] for entry in log}
