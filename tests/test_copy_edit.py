"""A copy edit of what people read changes nothing else.

Every sentence of the UI's catalogue is edited (each gets " ~" in both languages) in a
process of its own, which then runs orderbot against a loopback model server (the real
openai SDK talks to it) in Chinese; an unedited process runs the same in English. For a
refused call, bad arguments, an unknown tool and a step-limit stop, what the model was sent,
`--json` and the run's record are byte for byte the same, ids and times aside: the words
live at the screen, and the model reads orderbot/loop/model_text.py's English."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakeapi import WIRES, FakeAPI

pytestmark = pytest.mark.slow  # processes of their own

WIRE = WIRES["chat"]
KEY = "sk-test-copy-edit-0123456789"
# A process that edits every sentence of the catalogue before orderbot runs, or none.
PROGRAM = """
import sys
from orderbot.i18n.catalogue import MESSAGES
if sys.argv[1] == "edited":
    for texts in MESSAGES.values():
        for lang in texts:
            texts[lang] += " ~"
from orderbot.cli import main
sys.argv = ["orderbot", *sys.argv[2:]]
main()
"""
SCENARIOS = {
    "a refused call": ((("get_order_details", {"order_id": "ORD-1003"}),), ()),
    "bad arguments": ((("get_order_status", {"order_id": 1001}),), ()),
    "an unknown tool": ((("delete_all_orders", {}),), ()),
    "a step-limit stop": ((("get_order_status", {"order_id": "ORD-1001"}),), ("--max-steps", "1")),
}
# What differs between two runs of the same thing: ids, times, durations, the server's port.
RUN_ID = re.compile(r"\b\d{6}-\d{6}-[0-9a-f]{4}\b")
MADE_ID = re.compile(r"\b(?:msg|fc|call|rs|resp|chatcmpl)_[0-9a-f]{8}\b")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
SERVER = re.compile(r"127\.0\.0\.1:\d+")  # each run's loopback server has a port of its own
TIMED = ("elapsed", "elapsed_ms", "request_ms", "ms", "seconds", "utc_offset", "requested_at", "integrity")


def orderbot(edited: bool, state: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, "edited" if edited else "plain", *args],
        env=env | {"ORDERBOT_STATE_DIR": str(state), "ORDERBOT_LANG": "zh" if edited else "en"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def without_ids_and_times(value: object) -> object:
    if isinstance(value, dict):
        return {k: "#" if k in TIMED else without_ids_and_times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_ids_and_times(v) for v in value]
    if isinstance(value, str):
        return SERVER.sub("SERVER", TIME.sub("TIME", MADE_ID.sub("ID", RUN_ID.sub("RUN", value))))
    return value


def text(value: object) -> str:
    return json.dumps(without_ids_and_times(value), ensure_ascii=False, sort_keys=True)


def one_run(edited: bool, scenario: str, tmp_path: Path, orders: Path) -> dict[str, str]:
    """The model's requests, --json and the record of one run of `scenario`."""
    calls, flags = SCENARIOS[scenario]
    state = tmp_path / ("edited" if edited else "plain") / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORDERBOT_", "OPENAI_", "LC_", "LANG"))}
    env |= {"OPENAI_API_KEY": KEY}
    with FakeAPI() as api:
        api.enqueue(WIRE.route, WIRE.calls(*calls), WIRE.text("done"))
        args = ["ask", "--provider", WIRE.provider, "--base-url", api.url, "--orders", str(orders), "--user", "C001"]
        asked = orderbot(edited, state, env, *args, *flags, "--json", "查询订单")
        requests = [request.body for request in api.requests_for(WIRE.route)]
    assert asked.returncode in (0, 3), asked.stderr
    document = json.loads(asked.stdout)
    shown = orderbot(False, state, env, "runs", "show", document["run_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    return {"requests": text(requests), "json": text(document), "record": text(json.loads(shown.stdout))}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_copy_edit_of_every_sentence_changes_nothing_but_what_people_read(scenario, tmp_path, orders_file):
    plain = one_run(False, scenario, tmp_path, orders_file)
    edited = one_run(True, scenario, tmp_path, orders_file)
    assert "~" not in plain["json"] + plain["record"] + plain["requests"]
    for part in ("requests", "json", "record"):
        assert edited[part] == plain[part], part
    # What each run did is in them, as values: what the test compares is there to compare.
    document = json.loads(plain["json"])
    decisions = [call["decision"] for call in document["calls"]]
    expected = {
        "a refused call": ["no_access"],
        "bad arguments": ["invalid_arguments"],
        "an unknown tool": ["unknown_tool"],
        "a step-limit stop": ["not_executed"],
    }[scenario]
    assert decisions == expected, document["calls"]


def test_the_edit_reaches_what_people_read(tmp_path, orders_file):
    """The same edit does change the screen: the comparison above is not of two untouched runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORDERBOT_", "LC_", "LANG"))}
    shown = orderbot(
        True, tmp_path / "state", env, "ask", "--orders", str(orders_file), "--max-steps", "1", "查询 ORD-1001"
    )
    assert shown.returncode == 3 and "已停止：达到了步数上限。 ~" in shown.stdout, shown.stdout + shown.stderr
