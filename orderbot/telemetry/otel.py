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

Telemetry never slows or clutters a run: spans go out from the SDK's background thread,
and at exit what is left gets EXIT_FLUSH_SECONDS, then is dropped, whether the collector
hangs, is slow, fails or is not there. The exporter's own messages go to orderbot's log
file, never the terminal. Without ORDERBOT_OTEL_CONTENT=1 the spans hold ids, counts,
codes and timings only: no answer text, no arguments, no results, no name or id that
came from the model unchecked.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from orderbot import __version__
from orderbot.loop.engine import StopReason
from orderbot.loop.state import Event, RunState
from orderbot.loop.transitions import Called, Request, Started, Transition

SCOPE = "orderbot"
CONTENT_CHARS = 4000  # of arguments or a result, when content is on
EXIT_FLUSH_SECONDS = 0.5  # the most a process waits at exit for its spans to go out
# A call id is exported as it is when it looks like one (the API's call_..., fc_...);
# anything else, whatever a server put there, only as a digest.
ID_SHAPE = re.compile(r"[A-Za-z0-9_.:-]{1,80}")

log = logging.getLogger("orderbot")


def otlp_tracer(
    exit_flush: float | None = None, at_exit: Callable[[Callable[[], None]], object] = atexit.register
) -> trace.Tracer:
    """A tracer exporting over OTLP/HTTP as the OTEL_* variables say. Spans are sent from
    the SDK's background thread; at exit (`at_exit`) what is left gets `exit_flush`
    seconds (EXIT_FLUSH_SECONDS), no more."""
    log_into_orderbot()
    resource = Resource.create({"service.name": "orderbot", "service.version": __version__})
    # Not the SDK's own exit hook: it waits for the exporter's timeout and retries, 10 s and more.
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    at_exit(ExitFlush(provider, EXIT_FLUSH_SECONDS if exit_flush is None else exit_flush))
    return provider.get_tracer(SCOPE, __version__)


class ExitFlush:
    """Shuts the tracer provider down (sending the spans left) in a thread started now, and
    when called waits for that at most `seconds`: then the process goes on exiting and the
    daemon thread with whatever the collector still holds up goes with it. The thread is
    started beforehand because a thread started during interpreter exit may be refused."""

    def __init__(self, provider: TracerProvider, seconds: float) -> None:
        self.provider, self.seconds = provider, seconds
        self._go, self._done = threading.Event(), threading.Event()
        threading.Thread(target=self._shut_down, name="orderbot-otel-exit", daemon=True).start()

    def _shut_down(self) -> None:
        self._go.wait()
        try:
            self.provider.shutdown()
        finally:
            self._done.set()

    def __call__(self) -> None:
        self._go.set()
        if not self._done.wait(self.seconds):
            log.warning("telemetry: spans not sent within %.1f s at exit were dropped", self.seconds)


class _IntoOrderbotLog(logging.Handler):
    """Hands a record to the handlers of orderbot's own logger (its log file); with none
    set up, drops it rather than let Python print it on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        for handler in logging.getLogger("orderbot").handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


def log_into_orderbot() -> None:
    """The SDK's and the exporter's messages (`Failed to export spans batch ...`,
    `Transient error ...`) go where orderbot's go, not to the terminal."""
    otel_log = logging.getLogger("opentelemetry")
    otel_log.propagate = False
    if not any(isinstance(h, _IntoOrderbotLog) for h in otel_log.handlers):
        otel_log.addHandler(_IntoOrderbotLog())


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
        payload = t.payload
        if isinstance(payload, Started):
            self._start(state, payload, now)
        if self.run is None:
            return
        request = getattr(payload, "request", None)  # a proposal's, or that of the request a run stopped after
        if request is not None:
            self._model_span(t, request, now)
        if isinstance(payload, Called):  # a call that ran, or was refused or rejected
            self._tool_span(t, payload, now)
        if t.kind is Event.AWAITING_APPROVAL:
            self.run.add_event("approval needed", {"orderbot.pending": [p.name for p in payload.pending]})
            self._end(state, now, StopReason.AWAITING_APPROVAL)  # the engine sets it just after this transition
        elif t.kind is Event.FINISHED:
            self._end(state, now)

    def _start(self, state: RunState, started: Started, now: int) -> None:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "orderbot",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "orderbot.run_id": state.run_id,
        }
        for name, value in started.limits.model_dump().items():
            attributes[f"orderbot.limits.{name}"] = value
        self.run = self.tracer.start_span(
            "invoke_agent orderbot", kind=SpanKind.INTERNAL, attributes=attributes, start_time=now
        )

    def _model_span(self, t: Transition, request: Request, now: int) -> None:
        usage = request.usage
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "gen_ai.response.finish_reasons": ["tool_calls" if request.calls else "stop"],
            "orderbot.step": t.step,
        }
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"] = usage
        start = now - int(request.ms * 1e6)
        span = self.tracer.start_span(
            f"chat {self.model}", context=self._inside(), kind=SpanKind.CLIENT, attributes=attributes, start_time=start
        )
        span.end(end_time=now)

    def _tool_span(self, t: Transition, called: Called, now: int) -> None:
        call, result, decision = called.call, called.result, called.decision
        # A name not in the whitelist is the model's text, and may be anything it read.
        name = call.name[:100] if self.content or decision != "unknown_tool" else "(unknown)"
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": _call_id(call.call_id),
            "gen_ai.tool.type": "function",
            "orderbot.tool.decision": decision,
            "orderbot.tool.ok": bool(result.get("ok")),
            "orderbot.step": t.step,
        }
        if not result.get("ok") and result.get("code"):
            attributes["error.type"] = str(result["code"])
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = _text(call.parsed())
            attributes["gen_ai.tool.call.result"] = _text(result)
        start = now - int((called.ms or 0) * 1e6)
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
                "orderbot.steps": state.steps,
                "orderbot.tool_calls": state.tool_calls,
                "gen_ai.usage.input_tokens": state.input_tokens or 0,  # None: the provider reported none
                "gen_ai.usage.output_tokens": state.output_tokens or 0,
            }
        )
        if self.content:  # the detail of an answered run is the head of the answer, which may quote an order
            run.set_attribute("orderbot.stop_detail", state.stop_detail[:500])
        if reason not in (None, StopReason.ANSWERED, StopReason.AWAITING_APPROVAL):
            run.set_status(Status(StatusCode.ERROR, str(reason)))
        run.end(end_time=now)

    def _inside(self):
        return trace.set_span_in_context(self.run)


def _call_id(value: str) -> str:
    if ID_SHAPE.fullmatch(value):
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:16]


def _text(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text[:CONTENT_CHARS]
