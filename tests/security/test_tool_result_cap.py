"""A tool result has a cap. An order with a 5 MB note reaches the model as
at most MAX_TOOL_RESULT_CHARS characters of valid JSON that says it was cut, and --json,
the run record and `runs show --json` stay small."""

from __future__ import annotations

import json

from clikit import cli
from runkit import only_run, record_bytes

from orderbot.loop.items import FunctionCallOutput
from orderbot.loop.limits import MAX_TOOL_RESULT_CHARS
from orderbot.models.scripted import ScriptedModel, call, calls, text

NOTE = "请尽快发货。" * 900_000  # 5.4 MB of note on one order
SMALL = 100_000  # bytes: generous for one run, far below the note


def huge_note(orders_file):
    doc = json.loads(orders_file.read_text("utf-8"))
    doc["orders"][0]["note"] = NOTE  # ORD-1001, customer C001's
    orders_file.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


def run(use_model, orders_file, *extra: str):
    model = ScriptedModel([calls(call("get_order_details", {"order_id": "ORD-1001"})), text("订单已发货。")])
    use_model(model)
    result = cli("ask", "--provider", "scripted", "--user", "C001", "--orders", str(orders_file), *extra, "ORD-1001")
    assert result.exit_code == 0, result.output[-2000:]
    return model, result


def test_the_model_gets_at_most_the_cap_and_is_told(use_model, orders_file):
    huge_note(orders_file)
    model, _ = run(use_model, orders_file)
    outputs = [i for i in model.requests[1].items if isinstance(i, FunctionCallOutput)]
    assert len(outputs) == 1
    sent = outputs[0].output
    assert len(sent) <= MAX_TOOL_RESULT_CHARS
    envelope = json.loads(sent)  # still valid JSON the model can read
    assert envelope["ok"] is True and envelope["truncated"] is True
    assert "cut" in envelope["note"] and envelope["data"]["order_id"] == "ORD-1001"
    assert envelope["data"]["note"].startswith("请尽快发货。") and envelope["data"]["note"].endswith("…[cut]")
    assert sum(len(str(i)) for i in model.requests[1].items) < MAX_TOOL_RESULT_CHARS + 2_000


def test_json_output_and_the_record_are_bounded(use_model, orders_file):
    huge_note(orders_file)
    _, result = run(use_model, orders_file, "--json")
    assert len(result.output.encode()) < SMALL
    doc = json.loads(result.output)
    assert doc["calls"][0]["result"]["truncated"] is True
    run_id = only_run()
    assert len(record_bytes(run_id)) < SMALL
    shown = cli("runs", "show", run_id, "--json")
    assert shown.exit_code == 0 and len(shown.output.encode()) < SMALL


def test_a_small_result_is_sent_whole(use_model, orders_file):
    model, _ = run(use_model, orders_file)
    sent = json.loads(next(i.output for i in model.requests[1].items if isinstance(i, FunctionCallOutput)))
    assert "truncated" not in sent and sent["data"]["order_id"] == "ORD-1001"
