"""A run as an OpenTelemetry trace: an engine observer, like the recorder and the views.

Imported only when tracing is on (orderbot.telemetry decides). One trace per run:

    invoke_agent orderbot          the run: limits, stop reason, steps, calls, tokens
    ├── chat <model>               one per model request (GenAI semantic conventions:
    │                              gen_ai.operation.name, gen_ai.request.model,
    │                              gen_ai.usage.input_tokens / output_tokens, ...)
    └── execute_tool <tool>        one per tool call: name, decision, duration; arguments
                                   and result only with ORDERBOT_OTEL_CONTENT=1

The engine reports a model request and a tool call when they are over (with their
durations), so their spans are written afterwards with explicit start and end times.
"""

from __future__ import annotations

import atexit
import json
import time
from collections.abc import Callable

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from orderbot import __version__
from orderbot.loop.engine import StopReason
from orderbot.loop.state import Event, RunState, Transition

SCOPE = "orderbot"
CONTENT_CHARS = 4000  # of arguments or a result, when content is on


def otlp_tracer() -> trace.Tracer:
    """A tracer exporting over OTLP/HTTP as the OTEL_* variables say; flushed at exit."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "orderbot", "service.version": __version__}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    atexit.register(provider.shutdown)
    return provider.get_tracer(SCOPE, __version__)


class RunTracer:
    """An engine observer that turns one run's transitions into spans."""

    def __init__(
        self,
        tracer: trace.Tracer,
        *,
        provider: str,
        model: str,
        content: bool = False,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.tracer = tracer
        self.provider = provider
        self.model = model
        self.content = content
        self.clock = clock
        self.run: trace.Span | None = None

    def __call__(self, t: Transition, state: RunState) -> None:
        now = self.clock()
        data = t.data or {}
        if t.kind in (Event.STARTED, Event.RESUMED):
            self._start(state, data, now)
        if self.run is None:
            return
        if "request_ms" in data:
            self._model_span(t, data, now)
        if "call" in data:  # a call that ran, or was refused or rejected
            self._tool_span(t, data, now)
        if t.kind is Event.AWAITING_APPROVAL:
            self.run.add_event("approval needed", {"orderbot.pending": [p["name"] for p in data.get("pending", [])]})
            self._end(state, now, StopReason.AWAITING_APPROVAL)  # the engine sets it just after this transition
        elif t.kind is Event.FINISHED:
            self._end(state, now)

    def _start(self, state: RunState, data: dict, now: int) -> None:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "orderbot",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "orderbot.run_id": state.run_id,
        }
        for name, value in (data.get("limits") or {}).items():
            attributes[f"orderbot.limits.{name}"] = value
        self.run = self.tracer.start_span(
            "invoke_agent orderbot", kind=SpanKind.INTERNAL, attributes=attributes, start_time=now
        )

    def _model_span(self, t: Transition, data: dict, now: int) -> None:
        usage = data.get("usage") or {}
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "gen_ai.response.finish_reasons": ["tool_calls" if data.get("proposed") else "stop"],
            "orderbot.step": t.step,
        }
        if usage:
            attributes["gen_ai.usage.input_tokens"] = usage.get("input_tokens", 0)
            attributes["gen_ai.usage.output_tokens"] = usage.get("output_tokens", 0)
        start = now - int(float(data["request_ms"]) * 1e6)
        span = self.tracer.start_span(
            f"chat {self.model}", context=self._inside(), kind=SpanKind.CLIENT, attributes=attributes, start_time=start
        )
        span.end(end_time=now)

    def _tool_span(self, t: Transition, data: dict, now: int) -> None:
        call, result = data["call"], data.get("result") or {}
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": str(call.get("name", "")),
            "gen_ai.tool.call.id": str(call.get("call_id", "")),
            "gen_ai.tool.type": "function",
            "orderbot.tool.decision": str(data.get("decision", "")),
            "orderbot.tool.ok": bool(result.get("ok")),
            "orderbot.step": t.step,
        }
        if not result.get("ok") and result.get("code"):
            attributes["error.type"] = str(result["code"])
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = _text(call.get("arguments"))
            attributes["gen_ai.tool.call.result"] = _text(result)
        start = now - int(float(data.get("ms") or 0) * 1e6)
        span = self.tracer.start_span(
            f"execute_tool {attributes['gen_ai.tool.name']}",
            context=self._inside(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start,
        )
        if not result.get("ok"):
            span.set_status(Status(StatusCode.ERROR, attributes.get("error.type", "")))
        span.end(end_time=now)

    def _end(self, state: RunState, now: int, reason: StopReason | None = None) -> None:
        run, self.run = self.run, None
        reason = reason or state.stop_reason
        run.set_attributes(
            {
                "orderbot.stop_reason": str(reason) if reason else "",
                "orderbot.stop_detail": state.stop_detail[:500],
                "orderbot.steps": state.steps,
                "orderbot.tool_calls": state.tool_calls,
                "gen_ai.usage.input_tokens": state.input_tokens or 0,  # None: the provider reported none
                "gen_ai.usage.output_tokens": state.output_tokens or 0,
            }
        )
        if reason not in (None, StopReason.ANSWERED, StopReason.AWAITING_APPROVAL):
            run.set_status(Status(StatusCode.ERROR, str(reason)))
        run.end(end_time=now)

    def _inside(self):
        return trace.set_span_in_context(self.run)


def _text(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text[:CONTENT_CHARS]
