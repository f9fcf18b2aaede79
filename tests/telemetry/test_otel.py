"""OpenTelemetry: one trace per run, in memory and over a loopback OTLP/HTTP receiver.

The otel packages are in the dev extra. Without them these tests skip locally, but under
CI=true they must run: a missing extra there is a failure, not a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

if os.environ.get("CI") == "true":
    import opentelemetry.sdk  # noqa: F401 - CI must have the extra
else:
    pytest.importorskip("opentelemetry.sdk")

from clikit import cli
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from runkit import open_store  # noqa: E402

from orderbot.loop.engine import Limits  # noqa: E402
from orderbot.loop.model import Usage  # noqa: E402
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text  # noqa: E402
from orderbot.runner import Runner  # noqa: E402
from orderbot.telemetry.otel import RunTracer  # noqa: E402


@pytest.fixture
def exporter():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.tracer = provider.get_tracer("test")
    return exporter


def traced_run(exporter, toolbox, tmp_path, steps, *, content=False, user="C001", limits=None):
    model = ScriptedModel(steps, name="tiny-model")
    runner = Runner(
        toolbox,
        model,
        open_store(tmp_path / "runs"),
        provider="scripted",
        telemetry=lambda: RunTracer(exporter.tracer, provider="scripted", model=model.name, content=content),
    )
    state = RunState.start("ORD-1001 的详情", user=user)
    runner.start(state, limits or Limits())
    return state, {s.name: s for s in exporter.get_finished_spans()}, exporter.get_finished_spans()


def test_one_trace_with_run_model_and_tool_spans(exporter, toolbox, tmp_path):
    usage = Usage(input_tokens=120, output_tokens=15)
    steps = [calls(call("get_order_details", {"order_id": "ORD-1001"}), usage=usage), text("已发货", usage=usage)]
    state, named, spans = traced_run(exporter, toolbox, tmp_path, steps)
    assert sorted(s.name for s in spans) == [
        "chat tiny-model",
        "chat tiny-model",
        "execute_tool get_order_details",
        "invoke_agent orderbot",
    ]
    assert len({s.context.trace_id for s in spans}) == 1
    run = named["invoke_agent orderbot"]
    assert all(s.parent.span_id == run.context.span_id for s in spans if s is not run)
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["orderbot.stop_reason"] == "answered"
    assert run.attributes["orderbot.limits.max_steps"] == 3 and run.attributes["orderbot.limits.timeout"] == 30.0
    assert run.attributes["gen_ai.usage.input_tokens"] == 240 and run.attributes["orderbot.run_id"] == state.run_id
    chat = named["chat tiny-model"]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "tiny-model"
    assert chat.attributes["gen_ai.provider.name"] == "scripted"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 120 and chat.attributes["gen_ai.usage.output_tokens"] == 15
    tool = named["execute_tool get_order_details"]
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "get_order_details"
    assert tool.attributes["orderbot.tool.decision"] == "executed"
    assert tool.end_time >= tool.start_time
    assert "gen_ai.tool.call.arguments" not in tool.attributes and "gen_ai.tool.call.result" not in tool.attributes


def test_content_only_when_asked(exporter, toolbox, tmp_path):
    steps = [calls(call("get_order_details", {"order_id": "ORD-1001"})), text("ok")]
    _, named, _ = traced_run(exporter, toolbox, tmp_path, steps, content=True)
    tool = named["execute_tool get_order_details"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"order_id": "ORD-1001"}
    assert "SF1234567890123" in tool.attributes["gen_ai.tool.call.result"]


def test_a_refusal_and_a_limit_stop(exporter, toolbox, tmp_path):
    steps = [calls(call("get_order_details", {"order_id": "ORD-1003"})), calls(call("list_my_orders", {}))]
    _, named, spans = traced_run(exporter, toolbox, tmp_path, steps, limits=Limits(max_steps=2))
    tool = named["execute_tool get_order_details"]
    assert tool.attributes["orderbot.tool.decision"] == "no_access" and tool.attributes["error.type"] == "no_access"
    run = named["invoke_agent orderbot"]
    assert run.attributes["orderbot.stop_reason"] == "step_limit"
    assert run.status.status_code.name == "ERROR"


def test_a_pause_for_approval_ends_the_trace(exporter, toolbox, tmp_path):
    steps = [calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}))]
    _, named, _ = traced_run(exporter, toolbox, tmp_path, steps)
    run = named["invoke_agent orderbot"]
    assert run.attributes["orderbot.stop_reason"] == "awaiting_approval"
    assert [e.name for e in run.events] == ["approval needed"]


# ---- end to end: a real `orderbot ask` exporting to a loopback OTLP/HTTP receiver ----------


def orderbot(env: dict, *args: str, python: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`python -m orderbot ...` in a child process, as a person would run it."""
    command = [sys.executable, *python, "-m", "orderbot", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


class Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes]

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.slow  # a process of its own
def test_ask_exports_one_trace_to_an_otlp_receiver(tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_port}"}
        env.pop("ORDERBOT_OTEL_CONTENT", None)
        done = orderbot(env, "ask", "--user", "C001", "ORD-1001 的详情")
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    spans = []
    for path, body in server.bodies:
        assert path == "/v1/traces"
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                spans.extend(scope.spans)
    names = sorted(s.name for s in spans)
    assert names == [
        "chat offline-planner",
        "chat offline-planner",
        "execute_tool get_order_details",
        "invoke_agent orderbot",
    ]
    assert len({s.trace_id for s in spans}) == 1
    chat = next(s for s in spans if s.name.startswith("chat"))
    attributes = {a.key: a.value for a in chat.attributes}
    assert attributes["gen_ai.operation.name"].string_value == "chat"
    assert attributes["gen_ai.request.model"].string_value == "offline-planner"


@pytest.mark.slow  # a process of its own
def test_ask_imports_nothing_from_opentelemetry_when_it_is_off():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = orderbot(env, "ask", "查询 ORD-1001", python=("-X", "importtime"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "orderbot.telemetry.otel" not in done.stderr
    assert "opentelemetry" not in done.stderr


def test_otel_flag_with_the_extra_missing_is_one_sentence(monkeypatch):
    from orderbot import telemetry

    monkeypatch.setitem(sys.modules, "orderbot.telemetry.otel", None)  # as if the extra were not installed
    monkeypatch.setattr(telemetry, "_shared", None)
    result = cli("ask", "--otel", "查询 ORD-1001")
    assert result.exit_code == 6
    assert "pip install 'orderbot[otel]'" in result.output
