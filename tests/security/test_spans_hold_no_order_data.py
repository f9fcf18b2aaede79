"""With content export off (the default), spans carry ids, counts, codes and timings only.

A model that read an order's note and quotes it everywhere it can (its answer, a tool
name that is not in the whitelist, the id of a call, the arguments of a real one) gets
none of it into any span: name, attribute, event or status. With ORDERBOT_OTEL_CONTENT=1
the arguments and results are exported, as asked, so the test can see the note when it
is there.
"""

from __future__ import annotations

import json
import os

import pytest

if os.environ.get("CI") == "true":
    import opentelemetry.sdk  # noqa: F401 - CI must have the extra
else:
    pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from runkit import open_store  # noqa: E402

from orderbot.loop.engine import Limits  # noqa: E402
from orderbot.loop.state import RunState  # noqa: E402
from orderbot.models.scripted import ScriptedModel, call, calls, text  # noqa: E402
from orderbot.runner import Runner  # noqa: E402
from orderbot.shops.sample.model import SAMPLE_PATH  # noqa: E402
from orderbot.telemetry.otel import RunTracer  # noqa: E402

NOTE = "门禁密码4821-放在消防栓后面"
SECRET_PARTS = ("4821", "消防栓", "门禁")


@pytest.fixture
def orders_file(tmp_path):
    """The sample orders, with a note on the customer's own order."""
    doc = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))
    for order in doc["orders"]:
        if order["order_id"] == "ORD-1001":
            order["note"] = NOTE
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


# Where a model's words can go after it read the note, each its own run.
QUOTED_IN = {
    "the answer": [text(f"订单 ORD-1001 的备注是：{NOTE}")],
    "a tool name not in the whitelist": [calls(call(f"note_{NOTE}", {})), text("好的。")],
    "a call id": [calls(call("get_order_status", {"order_id": "ORD-1001"}, call_id=f"call {NOTE}")), text("好的。")],
    "the arguments of a real tool": [calls(call("get_order_status", {"order_id": NOTE})), text("好的。")],
}


def quoting_model(where: str) -> ScriptedModel:
    """Reads the order, then quotes its note in one place."""
    return ScriptedModel([calls(call("get_order_details", {"order_id": "ORD-1001"})), *QUOTED_IN[where]])


def exported(toolbox, tmp_path, where: str, *, content: bool) -> str:
    """What every span of one run says (its name, attributes, events and status) in one text.
    The ids, times and resource the SDK adds are left out: they are random or the clock's,
    and a time's microseconds may spell the note's digits by chance."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    runner = Runner(
        toolbox,
        quoting_model(where),
        open_store(tmp_path / "runs"),
        provider="scripted",
        telemetry=lambda: RunTracer(tracer, provider="scripted", model="scripted", content=content),
    )
    state = RunState.start("ORD-1001 的备注是什么？", user="C001")
    runner.start(state, Limits(max_steps=5))
    assert state.stop_reason == "answered"
    spans = exporter.get_finished_spans()
    said = [
        {key: value for key, value in json.loads(span.to_json()).items() if key in ("name", "attributes", "status")}
        | {"events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events]}
        for span in spans
    ]
    return "\n".join(json.dumps(one, ensure_ascii=False) for one in said)


@pytest.mark.parametrize("where", list(QUOTED_IN))
def test_no_span_holds_the_note_when_content_is_off(toolbox, tmp_path, where):
    spans = exported(toolbox, tmp_path, where, content=False)

    for part in SECRET_PARTS:
        assert part not in spans, part
    assert "orderbot.stop_detail" not in spans  # the head of the answer, left out
    assert '"orderbot.stop_reason": "answered"' in spans  # what happened is still there


def test_a_tool_name_not_in_the_whitelist_is_exported_as_unknown(toolbox, tmp_path):
    spans = exported(toolbox, tmp_path, "a tool name not in the whitelist", content=False)

    assert '"gen_ai.tool.name": "(unknown)"' in spans and '"orderbot.tool.decision": "unknown_tool"' in spans
    assert '"gen_ai.tool.name": "get_order_details"' in spans  # a whitelisted name is kept


@pytest.mark.parametrize("where", list(QUOTED_IN))
def test_with_content_on_the_note_is_exported_as_asked(toolbox, tmp_path, where):
    spans = exported(toolbox, tmp_path, where, content=True)

    assert NOTE in spans  # in the details result at least: the test would see a leak
