"""DNS rebinding against `orderbot mcp --http` on loopback: a web page of another name that
a DNS answer pointed at the server's address must not reach it. On every loopback address
(127.0.0.2 counts as loopback without --allow-remote, and ::1), a request whose Host or
Origin names anything but the address the server is bound to is refused before it reaches
the session; one that names it is served. Before, only 127.0.0.1, localhost and ::1 were
checked, and on 127.0.0.2 a request with `Host: evil.example` was served."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading

import httpx2
import pytest

from orderbot.shops.sample.model import SAMPLE_PATH

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("host", ["127.0.0.2", "::1"])
def test_host_and_origin_of_another_name_are_refused_on_every_loopback_address(host, tmp_path) -> None:
    if host == "::1" and not ipv6_loopback():
        pytest.fail("this machine has no ::1 to test on")  # never skipped: the guard must be shown to hold
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    shown = f"[{host}]" if ":" in host else host
    server = subprocess.Popen(
        [sys.executable, "-m", "orderbot", "mcp", "--orders", str(orders), "--http", f"{shown}:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    watchdog = threading.Timer(60, server.kill)
    watchdog.start()
    try:
        listening = server.stderr.readline()
        url = listening.split(" on ")[1].split()[0]
        assert url.startswith(f"http://{shown}:"), listening
        port = url.rsplit(":", 1)[1].split("/")[0]

        def post(**headers):
            return httpx2.post(url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)

        evil_host = post(Host=f"evil.example:{port}")
        evil_origin = post(Origin=f"http://evil.example:{port}")
        other_loopback = post(Host=f"127.0.0.3:{port}")
        own = post(Origin=f"http://{shown}:{port}")
    finally:
        watchdog.cancel()
        server.terminate()
        server.wait(timeout=30)
    assert (evil_host.status_code, evil_origin.status_code, other_loopback.status_code) == (421, 403, 421)
    assert own.status_code == 200 and "orderbot" in own.text
