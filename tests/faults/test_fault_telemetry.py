"""Telemetry never slows or clutters a run, whatever the OTLP collector does.

A loopback collector that hangs, answers slowly, answers 503, or is not there (a closed
port): a real `orderbot ask` (offline) in a process of its own, where the exit flush
runs, ends well before a collector that holds it could make it (SLOW - 1 s later, at most,
than the same run against a collector that works: room for a loaded machine), says
nothing of it on the terminal, and its log file holds the exporter's messages. The exit
flush's bound is injected (0.2 s) so the measure leaves room for a loaded machine; the
bound itself is checked in-process with a provider that never finishes, without waiting
on any network.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

if os.environ.get("CI") == "true":
    import opentelemetry.sdk  # noqa: F401 - CI must have the extra
else:
    pytest.importorskip("opentelemetry.sdk")

from orderbot.telemetry import otel  # noqa: E402

BOUND = 0.2  # the exit flush's bound in these runs (EXIT_FLUSH_SECONDS, injected)
SLOW = 10.0  # seconds the slow collector takes to answer (nobody waits for it unless the run does)
# How much later than a healthy run beside it a run may end: a run that waited on its collector
# would end SLOW (or, for a hang, the exporter's own timeout of 10 s) later; whole processes on
# a loaded machine vary by a few seconds between runs, which half of SLOW leaves room for.
ALLOWED = SLOW / 2
QUESTION = "ORD-1001 的详情"

# `orderbot ...` with the exit flush's bound set first (the first argument).
ORDERBOT_WITH_BOUND = """
import sys
from orderbot.telemetry import otel
otel.EXIT_FLUSH_SECONDS = float(sys.argv.pop(1))
from orderbot.cli import main
sys.argv[0] = "orderbot"
main()
"""


class Collector:
    """An OTLP/HTTP receiver on loopback that behaves as `mode` says: "ok", "hang",
    "slow", "503", or "refused" (a port nobody listens on)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.posts = 0
        self.release = threading.Event()  # wakes hanging and slow handlers at the end
        self.server: ThreadingHTTPServer | None = None
        if mode == "refused":
            with socket.socket() as sock:  # a port that was free a moment ago, now closed
                sock.bind(("127.0.0.1", 0))
                self.port = sock.getsockname()[1]
            return
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def _handler(self):
        collector = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                collector.posts += 1
                if collector.mode == "hang":
                    collector.release.wait()
                    self.close_connection = True
                    return
                if collector.mode == "slow":
                    collector.release.wait(SLOW)
                self.send_response(503 if collector.mode == "503" else 200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def collector():
    made: list[Collector] = []

    def make(mode: str) -> Collector:
        made.append(Collector(mode))
        return made[-1]

    yield make
    for each in made:
        each.close()


def ask_exporting_to(url: str, more: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(more or {}, OTEL_EXPORTER_OTLP_ENDPOINT=url)
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", ORDERBOT_WITH_BOUND, str(BOUND), "ask", "--user", "C001", QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return time.monotonic() - began, done


def log_text() -> str:
    log = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


# What the log says of each failure: the exporter's own words, or orderbot's when the
# exporter had not given up by the bound.
LOGGED = {
    "hang": "spans not sent within 0.2 s at exit were dropped",
    "slow": "spans not sent within 0.2 s at exit were dropped",
    "503": "Transient error Service Unavailable encountered while exporting spans batch",
    "refused": "encountered while exporting spans batch",
}


def healthy_run(tmp_path) -> float:
    """Seconds the same run takes with a collector that works, measured right beside the run
    it is compared with, so both see the same load."""
    healthy = Collector("ok")
    try:
        seconds, done = ask_exporting_to(healthy.url, {"ORDERBOT_STATE_DIR": str(tmp_path / "healthy-state")})
    finally:
        healthy.close()
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert healthy.posts >= 1  # it exported its spans
    return seconds


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(LOGGED))
def test_a_failing_collector_does_not_hold_the_run_and_says_nothing(collector, tmp_path, mode):
    failing = collector(mode)

    reference = healthy_run(tmp_path)
    seconds, done = ask_exporting_to(failing.url)

    print(f"{mode}: {seconds:.2f} s, {seconds - reference:+.2f} s against a collector that works")  # -s shows it
    assert done.returncode == 0, done.stderr
    assert "ORD-1001" in done.stdout
    assert done.stderr == ""  # no "Failed to export spans batch", no "Transient error"
    assert seconds - reference <= ALLOWED, f"{seconds:.2f} s, {reference:.2f} s with a collector that works"
    assert LOGGED[mode] in log_text()
    assert mode == "refused" or failing.posts >= 1  # the spans were offered, in the background


# ---- the bound, in-process ------------------------------------------------------------------------


class Provider:
    """A tracer provider whose shutdown (the flush of what is left) ends only when told."""

    def __init__(self) -> None:
        self.may_end = threading.Event()
        self.shut = threading.Event()

    def shutdown(self) -> None:
        self.shut.set()
        self.may_end.wait()


def test_exit_flush_waits_no_longer_than_its_bound(caplog):
    provider = Provider()
    flush = otel.ExitFlush(provider, 0.05)
    try:
        began = time.monotonic()
        flush()
        took = time.monotonic() - began
    finally:
        provider.may_end.set()

    assert provider.shut.is_set()  # the flush was tried
    assert 0.05 <= took < 0.05 + 5.0  # without the bound it would wait for ever: the margin is for a loaded machine
    assert "spans not sent within 0.1 s at exit were dropped" in caplog.text


def test_exit_flush_returns_as_soon_as_the_spans_are_out(caplog):
    provider = Provider()
    provider.may_end.set()
    flush = otel.ExitFlush(provider, 30.0)

    began = time.monotonic()
    flush()

    assert time.monotonic() - began < 5.0  # not the 30 s bound: it returned when the flush did
    assert "dropped" not in caplog.text


def test_the_exporters_messages_go_to_orderbots_log_not_the_terminal(capfd, tmp_path):
    from orderbot.commands.logs import setup_logging

    setup_logging(tmp_path / "state")
    otel.log_into_orderbot()

    logging.getLogger("opentelemetry.exporter.otlp.common.http").error("Failed to export spans batch code: 503")

    for handler in logging.getLogger("orderbot").handlers:
        handler.flush()
    assert capfd.readouterr().err == ""
    assert "Failed to export spans batch code: 503" in (tmp_path / "state" / "orderbot.log").read_text()
