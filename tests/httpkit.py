"""The real `orderbot mcp --http` in a process of its own, and the mcp package's own client
over streamable HTTP to it: what tests/mcp/test_mcp_sessions.py, test_mcp_tokens.py,
test_mcp_jwt.py, test_mcp_servers.py and the security tests drive.

`serving(args)` starts the command on a free loopback port (its runs in the test's state
directory unless the arguments say otherwise) and stops it afterwards; a server that stops
answering is killed by a watchdog, failing the test rather than hanging it. `connected(url)`
is an SDK `Client` over streamable HTTP, with a bearer token when given.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@dataclass
class Server:
    url: str
    process: subprocess.Popen

    def log(self) -> str:
        """What the server wrote to standard error after its first line (read once it ended)."""
        return self.process.stderr.read() if self.process.poll() is not None else ""


@contextlib.contextmanager
def serving(*args: str, env: dict | None = None, cwd=None, timeout: float = 120) -> Iterator[Server]:
    """`orderbot mcp --http 127.0.0.1:0 ARGS` until the block ends (then SIGTERM, as a
    service manager stops it)."""
    command = [sys.executable, "-m", "orderbot", "mcp", "--http", "127.0.0.1:0", *args]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        listening = process.stderr.readline()
        if " on " not in listening:
            process.wait(timeout=30)
            raise AssertionError(f"orderbot mcp did not start: {listening}{process.stderr.read()}")
        url = listening.split(" on ")[1].split()[0]
        yield Server(url, process)
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


@contextlib.asynccontextmanager
async def connected(url: str, *, token: str | None = None, mode: str = "legacy", **client) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP to `url`, sending `token` as its bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, **client) as connected_client:
            yield connected_client
