"""What a hostile or broken MCP client can do with the pipes of `orderbot mcp`: a message of
gigabytes on one line, and a client that stops reading the replies. Neither may cost memory
without bound nor keep the server from ending: a line over 4 MiB is dropped whole (never
held) and the server goes on; a server whose client stopped reading still ends at SIGTERM,
at once, with exit 143 (the SDK's own transport wrote from a thread that blocked for good
on a full pipe, and the process waited for it)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time

import pytest
from clikit import on_time

from orderbot.mcp.server import MAX_LINE
from orderbot.shops.sample.model import SAMPLE_PATH

FULL = 65536 - 2 * 4096  # a pipe's default capacity, less what a last partly-filled page leaves
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'


def lookup(request_id: int) -> str:
    params = {"name": "get_order_status", "arguments": {"order_id": "ORD-1001"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}) + "\n"


def start(tmp_path) -> subprocess.Popen:
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    command = ["mcp", "--user", "C001", "--orders", str(orders), "--max-tool-calls", "1000", "--window", "1"]
    return subprocess.Popen(
        [sys.executable, "-m", "orderbot", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=dict(os.environ),
    )


@pytest.mark.slow
def test_a_line_over_the_cap_is_dropped_whole_and_the_server_goes_on(tmp_path) -> None:
    server = start(tmp_path)
    watchdog = threading.Timer(60, server.kill)
    watchdog.start()
    try:
        huge = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "' + b"x" * (MAX_LINE + 10)
        opening = json.dumps(INITIALIZE).encode() + b"\n" + INITIALIZED
        server.stdin.write(opening + huge + b'"}}\n' + lookup(3).encode())
        server.stdin.flush()
        replies = [json.loads(server.stdout.readline()) for _ in range(2)]
        server.stdin.close()
        replies += [json.loads(line) for line in server.stdout]
        stderr = server.stderr.read().decode()
        code = server.wait(timeout=30)
    finally:
        watchdog.cancel()
        server.kill()
    assert [r.get("id") for r in replies] == [1, 3]  # the huge one got nothing, the next its answer
    assert replies[1]["result"]["structuredContent"]["data"]["status"] == "已发货"
    assert code == 0 and "Traceback" not in stderr


@pytest.mark.slow
def test_a_client_that_stops_reading_cannot_keep_the_server_from_ending_at_sigterm(tmp_path) -> None:
    server = start(tmp_path)
    watchdog = threading.Timer(60, server.kill)
    watchdog.start()
    try:
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n" + INITIALIZED)
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        # A thousand replies (~300 KB) into a pipe that holds 64 KB, which nobody reads any more.
        server.stdin.write("".join(lookup(n) for n in range(2, 1002)).encode())
        server.stdin.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _waiting(server) < FULL:
            time.sleep(0.05)  # polling for the pipe to fill, not timing the server
        assert _waiting(server) >= FULL, "the replies never filled the pipe"
        began = time.monotonic()
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
        took = time.monotonic() - began
    finally:
        watchdog.cancel()
        server.kill()
    assert code == 143 and on_time(took, 1.0, slack=0.0), (code, took)


def _waiting(server: subprocess.Popen) -> int:
    """Bytes written to the server's stdout pipe that nobody has read."""
    waiting = bytearray(4)
    fcntl.ioctl(server.stdout.fileno(), termios.FIONREAD, waiting)
    return int.from_bytes(waiting, sys.byteorder)
