"""Whether runs are exported as OpenTelemetry traces, decided without importing it.

Tracing is on when the `otel` extra is installed (`pip install 'orderbot[otel]'`) and
either `--otel` is given or OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set.
Otherwise nothing from opentelemetry is imported: cold start stays as it was. The exporter
itself is configured by the standard OTEL_* variables (endpoint, headers, timeout,
OTEL_SERVICE_NAME); ORDERBOT_OTEL_CONTENT=1 adds tool arguments and results to the spans.
The tracing observer lives in orderbot.telemetry.otel.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from orderbot.errors import ConfigError

if TYPE_CHECKING:
    from orderbot.loop.transitions import Observer

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXTRA_MISSING = "--otel needs the otel extra: pip install 'orderbot[otel]'"

_shared = None  # one exporter per process, shared by every run


def wanted(flag: bool = False) -> bool:
    return flag or any(os.environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def content_wanted() -> bool:
    return os.environ.get("ORDERBOT_OTEL_CONTENT", "").strip() == "1"


def setup(flag: bool, *, provider: str, model: str) -> Callable[[], Observer] | None:
    """A factory of one tracing observer per run, or None when tracing is off. With only the
    environment variable set and the extra missing, tracing is quietly off (the variable may
    be meant for another program); with --otel it is an error."""
    if not wanted(flag):
        return None
    try:
        import orderbot.telemetry.otel as otel  # here, not at the top: when off, tracing imports nothing
    except ImportError:
        if flag:
            raise ConfigError(EXTRA_MISSING) from None
        return None
    global _shared
    if _shared is None:
        _shared = otel.otlp_tracer()
    tracer, content = _shared, content_wanted()
    return lambda: otel.RunTracer(tracer, provider=provider, model=model, content=content)
