"""What `orderbot mcp` adds to each call: `python benchmarks/mcp_calls.py [--rounds 7] [--calls 200]`.

Two servers over the same copy of the sample shop's orders, each started once and spoken to
by the mcp package's own client over standard input/output, as a host does:

- A: `orderbot mcp --user C001 --orders ORDERS` (its runs recorded in a temporary state
  directory, the call window opened wide enough for the benchmark: 1,000 calls in 0.1 s);
- B: benchmarks/mcp_minimal.py, a minimal server of the same SDK with one tool that looks the
  order up in the same file and answers with the same shapes (title, output schema, text and
  structured content).

Each round sends `--calls` sequential `get_order_status` lookups to one, then to the other
(which goes first alternates), after one warm-up round. Reported per side: the median and
the minimum of the wall time per call (what the host waits), and the server process's own
CPU time per call (all its threads, from /proc's schedstat; the client's work is the same on both sides);
the ratio judged is the median of the per-round ratios of the wall time (A / B), with the
CPU ratio beside it. `--era` picks the protocol era (the handshake, which hosts speak today,
by default). `--rounds 3 --calls 20` is a quick smoke run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLE = ROOT / "orderbot" / "shops" / "sample" / "sample_orders.json"
LOOKUP = {"order_id": "ORD-1001"}
TARGET = 1.1


def cpu_seconds(pid: int) -> float:
    """CPU time a process has had so far, all its threads, to the nanosecond (Linux's
    schedstat; /proc's stat counts in 10 ms ticks, too coarse for a round)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            continue
    return total / 1e9


def server_pid(marker: str) -> int:
    """The pid of this process's child whose command line holds `marker` (the stdio client
    keeps it to itself)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == os.getpid() and marker in command:
                return int(entry.name)
    raise RuntimeError(f"no server of this benchmark runs {marker}")


async def measure(rounds: int, calls: int, era: str, work: Path) -> dict:
    orders = work / "orders.json"
    shutil.copyfile(SAMPLE, orders)
    env = {**os.environ, "ORDERBOT_STATE_DIR": str(work / "state")}
    command = [
        "-m",
        "orderbot",
        "mcp",
        "--user",
        "C001",
        "--orders",
        str(orders),
        "--max-tool-calls",
        "1000",
        "--window",
        "0.1",
    ]
    sides = {
        "orderbot": StdioServerParameters(command=sys.executable, args=command, env=env, cwd=str(work)),
        "minimal": StdioServerParameters(
            command=sys.executable, args=[str(HERE / "mcp_minimal.py"), str(orders)], env=env, cwd=str(work)
        ),
    }
    markers = {"orderbot": "orderbot mcp", "minimal": "mcp_minimal.py"}
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    client_cpu: dict[str, list[float]] = {name: [] for name in sides}  # the client's own CPU, either side
    mode = "legacy" if era == "handshake" else "auto"
    async with Client(sides["orderbot"], mode=mode) as a, Client(sides["minimal"], mode=mode) as b:
        clients = {"orderbot": a, "minimal": b}
        pids = {name: server_pid(markers[name]) for name in sides}
        for client in clients.values():
            await client.list_tools()

        async def one_round(name: str) -> tuple[float, float]:
            client, pid = clients[name], pids[name]
            used, mine, began = cpu_seconds(pid), time.process_time(), time.perf_counter()
            for _ in range(calls):
                result = await client.call_tool("get_order_status", LOOKUP)
                assert not result.is_error, result
            wall, own = (time.perf_counter() - began) / calls, (time.process_time() - mine) / calls
            return wall, (cpu_seconds(pid) - used) / calls, own

        for name in sides:  # warm-up
            await one_round(name)
        for index in range(rounds):
            order = list(sides) if index % 2 == 0 else list(reversed(sides))
            for name in order:
                seconds, used, own = await one_round(name)
                wall[name].append(seconds)
                cpu[name].append(used)
                client_cpu[name].append(own)
    return {"wall": wall, "cpu": cpu, "client": client_cpu}


def report(figures: dict, calls: int, era: str) -> bool:
    wall, cpu, client = figures["wall"], figures["cpu"], figures["client"]
    ratios = [a / b for a, b in zip(wall["orderbot"], wall["minimal"], strict=True)]
    cpu_ratios = [a / b for a, b in zip(cpu["orderbot"], cpu["minimal"], strict=True) if b > 0]
    print(
        f"{calls} sequential get_order_status lookups per round, {len(ratios)} rounds, stdio, "
        f"the SDK's client ({era} era)"
    )
    for name in wall:
        print(
            f"  {name:9} wall per call: median {statistics.median(wall[name]) * 1e6:7.0f} µs, "
            f"min {min(wall[name]) * 1e6:7.0f} µs · server CPU per call: median "
            f"{statistics.median(cpu[name]) * 1e6:7.0f} µs · the client's CPU: "
            f"{statistics.median(client[name]) * 1e6:5.0f} µs"
        )
    ratio = statistics.median(ratios)
    print(
        f"  orderbot / minimal, wall: median of per-round ratios {ratio:.2f}x "
        f"(ratio of the minimums {min(wall['orderbot']) / min(wall['minimal']):.2f}x; target ≤ {TARGET}x)"
    )
    if cpu_ratios:
        print(f"  orderbot / minimal, server CPU: median of per-round ratios {statistics.median(cpu_ratios):.2f}x")
    return ratio <= TARGET


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds, each side once (default 7)")
    parser.add_argument("--calls", type=int, default=200, help="lookups per round and side (default 200)")
    parser.add_argument("--era", choices=("handshake", "2026-07-28"), default="handshake", help="the protocol era")
    parser.add_argument("--check", action="store_true", help="exit 1 when the ratio misses its target")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="orderbot-mcp-bench-") as work:
        met = report(anyio.run(measure, args.rounds, args.calls, args.era, Path(work)), args.calls, args.era)
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
