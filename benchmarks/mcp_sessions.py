"""Many conversations on one server, and on two: `python benchmarks/mcp_sessions.py [--rounds 3]
[--lookups 20] [--sessions 1,10,50] [--no-postgres]`.

What is served:
- one: one `orderbot mcp --http` over a JSON copy of generated orders (its runs in a
  temporary state directory: the default SQLite run store);
- two: two `orderbot mcp --http` processes on one PostgreSQL (the orders and the runs in one
  database of a throwaway cluster this script starts, tests/shopkit.py's), the sessions
  alternating between them as a round-robin load balancer would send them.
Both with `--user C001 --queue` (every side effect waits for a desk) and a call window wide
enough not to refuse anything (1,000 calls a second per session).

What each client session does (the mcp package's own client over streamable HTTP, the
handshake era, every session in this one process, each with its own HTTP connection pool):
connect and list the tools (not timed), then, once every session is connected, `--lookups`
`get_order_status` lookups of an order of its own and one `cancel_order` of it (queued for
approval), each call waited for before the next. Timed: from the first call of any session to
the last reply; each call's own time too.

Reported, per setup and number of concurrent sessions: calls per second (all sessions
together), the median and the 99th percentile of the time per call, the rate against the
single-session rate (aim: 50 sessions ≥ 0.7) and p99 against the median (aim: < 10×). Each
round measures every count in turn, `--rounds` rounds (rates: the median of the rounds; times:
every call of every round). Then a desk approves every queued cancel (`orderbot approvals
approve`, in this process), `check_approval` reports each approved through a server (in
`two`, the one that did not queue it), and the audit log must hold exactly one execution of
each: a cancel run twice or not at all fails the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from gen_orders import CST, EPOCH, GOODS  # noqa: E402
from httpkit import connected, serving  # noqa: E402
from mcp_calls import cpu_seconds  # noqa: E402

RATE_TARGET, TAIL_TARGET = 0.7, 10.0
SERVER_FLAGS = ["--user", "C001", "--queue", "--max-tool-calls", "1000", "--window", "1"]


def orders(count: int, path: Path) -> list[str]:
    """`count` orders of customer C001, each one it may cancel (处理中); their ids."""
    rng = random.Random(11)
    made = []
    for index in range(count):
        sku, name, price = rng.choice(GOODS)
        made.append(
            {
                "order_id": f"ORD-{200000 + index}",
                "customer_id": "C001",
                "status": "处理中",
                "items": [{"sku": sku, "name": name, "quantity": 1, "unit_price": price}],
                "total": price,
                "currency": "CNY",
                "created_at": EPOCH.isoformat(),
                "updated_at": EPOCH.astimezone(CST).isoformat(),
                "shipping": {"city": "杭州"},
            }
        )
    path.write_text(json.dumps({"orders": made}, ensure_ascii=False), encoding="utf-8")
    return [o["order_id"] for o in made]


async def one_count(urls: list[str], targets: list[str], lookups: int) -> dict:
    """Every session connected, then all at once: lookups and one cancel each. The calls'
    times, the wall time, and each queued cancel's run id with the server that queued it."""
    sessions = len(targets)
    times: list[float] = []
    queued: list[tuple[str, int]] = []
    ready, go = anyio.Event(), anyio.Event()
    connected_count = 0
    began = ended = 0.0

    async def session(index: int, order_id: str) -> None:
        nonlocal connected_count, ended
        server = index % len(urls)
        async with connected(urls[server]) as client:
            await client.list_tools()
            connected_count += 1
            if connected_count == sessions:
                ready.set()
            await go.wait()
            for _ in range(lookups):
                start = time.perf_counter()
                result = await client.call_tool("get_order_status", {"order_id": order_id})
                times.append(time.perf_counter() - start)
                assert not result.is_error, result
            start = time.perf_counter()
            result = await client.call_tool("cancel_order", {"order_id": order_id, "reason": "不要了"})
            times.append(time.perf_counter() - start)
            envelope = result.structured_content
            assert envelope.get("data", {}).get("status") == "awaiting_approval", envelope
            queued.append((envelope["data"]["run_id"], server))
            ended = max(ended, time.perf_counter())

    async with anyio.create_task_group() as group:
        for index, order_id in enumerate(targets):
            group.start_soon(session, index, order_id)
        await ready.wait()
        began = time.perf_counter()
        go.set()
    return {"times": times, "wall": ended - began, "calls": len(times), "queued": queued}


def settle(queued: list[tuple[str, int]], urls: list[str], flags: dict, env: dict) -> tuple[int, int]:
    """A desk approves every queued cancel; check_approval says approved through a server
    (the other one, when there are two); the audit log's executions of them, and how many
    check_approval reported approved."""
    from typer.testing import CliRunner

    from orderbot.cli import app

    runner = CliRunner()
    for run_id, _ in queued:
        done = runner.invoke(app, ["approvals", "approve", run_id, *flags["runs"], *flags["orders"]], env=env)
        assert done.exit_code == 0, done.output

    async def reports() -> int:
        approved = 0
        for server in range(len(urls)):
            mine = [run_id for run_id, at in queued if (at + 1) % len(urls) == server]
            if not mine:
                continue
            async with connected(urls[server]) as client:
                for run_id in mine:
                    result = await client.call_tool("check_approval", {"run_id": run_id})
                    approved += result.structured_content["data"]["status"] == "approved"
        return approved

    reported = anyio.run(reports)
    audit = json.loads(runner.invoke(app, ["audit", "--json", "--limit", "100000", *flags["runs"]], env=env).stdout)
    ids = {run_id for run_id, _ in queued}
    executed = [e["run_id"] for e in audit if e["event"] == "executed" and e["run_id"] in ids]
    assert sorted(executed) == sorted(ids), "a queued cancel did not execute exactly once"
    return len(executed), reported


def measure(name: str, servers: list, ids: list[str], options, flags: dict, env: dict) -> dict:
    counts = options.sessions
    urls = [server.url for server in servers]
    results = {n: {"rates": [], "times": [], "server": [], "client": []} for n in counts}
    queued: list[tuple[str, int]] = []
    for _ in range(options.rounds):  # every count in each round: all see the same machine load
        for n in counts:
            targets = [ids.pop() for _ in range(n)]
            served, mine = sum(cpu_seconds(s.process.pid) for s in servers), time.process_time()
            measured = anyio.run(one_count, urls, targets, options.lookups)
            served = sum(cpu_seconds(s.process.pid) for s in servers) - served
            results[n]["rates"].append(measured["calls"] / measured["wall"])
            results[n]["times"] += measured["times"]
            # CPU over the whole count, connecting included: what each call costs either side
            results[n]["server"].append(served / measured["calls"])
            results[n]["client"].append((time.process_time() - mine) / measured["calls"])
            queued += measured["queued"]
    executed, reported = settle(queued, urls, flags, env)
    return {"name": name, "counts": results, "executed": executed, "reported": reported, "queued": len(queued)}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(setups: list[dict], options) -> bool:
    counts = options.sessions
    first, last = counts[0], counts[-1]
    print(
        f"{options.lookups} get_order_status lookups and one queued cancel_order per session, "
        f"{options.rounds} rounds, streamable HTTP, the SDK's client (handshake era)"
    )
    header = " | ".join(f"{n} session{'s' * (n > 1)}" for n in counts)
    print(f"| figure | {header} | {last} / {first} | target | verdict |")
    print("| --- |" + " --- |" * (len(counts) + 3))
    good = True
    for setup in setups:
        by = setup["counts"]
        rates = {n: statistics.median(by[n]["rates"]) for n in counts}
        p50 = {n: statistics.median(by[n]["times"]) for n in counts}
        p99 = {n: percentile(by[n]["times"], 0.99) for n in counts}
        ratio = rates[last] / rates[first]
        tail = p99[last] / p50[last]
        rate_ok, tail_ok = ratio >= RATE_TARGET, tail < TAIL_TARGET
        good = good and rate_ok and tail_ok
        name = setup["name"]
        cells = " | ".join(f"{rates[n]:,.0f}" for n in counts)
        print(f"| {name}: calls/s | {cells} | {ratio:.2f} | ≥ {RATE_TARGET} | {'meets' if rate_ok else 'misses'} |")
        cells = " | ".join(f"{p50[n] * 1e3:.1f}" for n in counts)
        print(f"| {name}: p50 ms per call | {cells} | - | - | info |")
        cells = " | ".join(f"{p99[n] * 1e3:.1f}" for n in counts)
        print(f"| {name}: p99 ms per call | {cells} | - | - | info |")
        cells = " | ".join(f"{p99[n] / p50[n]:.1f}×" for n in counts)
        verdict = "meets" if tail_ok else "misses"
        print(f"| {name}: p99 / p50 | {cells} | - | < {TAIL_TARGET:g}× at {last} | {verdict} |")
        for side, label in (("server", "servers' CPU"), ("client", "clients' CPU (this process)")):
            cells = " | ".join(f"{statistics.median(by[n][side]) * 1e3:.2f}" for n in counts)
            print(f"| {name}: {label}, ms per call | {cells} | - | - | info |")
        once = setup["executed"] == setup["queued"] == setup["reported"]
        good = good and once
        print(
            f"| {name}: cancels executed once | {setup['executed']} of {setup['queued']} queued, "
            f"{setup['reported']} reported approved |" + " - |" * (len(counts) - 1) + f" - | all | "
            f"{'meets' if once else 'misses'} |"
        )
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lookups", type=int, default=20)
    parser.add_argument("--sessions", default="1,10,50", help="concurrent sessions, comma-separated")
    parser.add_argument("--no-postgres", action="store_true", help="only the one server on SQLite")
    options = parser.parse_args()
    options.sessions = [int(n) for n in options.sessions.split(",")]
    per_setup = options.rounds * sum(options.sessions)
    work = Path(tempfile.mkdtemp(prefix="orderbot-mcp-sessions-"))
    env = {"ORDERBOT_STATE_DIR": str(work / "state"), "NO_COLOR": "1"}
    os.environ.update(env)
    setups, stop = [], None
    try:
        ids = orders(per_setup, work / "orders.json")
        shop = str(shutil.copyfile(work / "orders.json", work / "one.json"))  # its cancels land here
        with serving("--orders", shop, *SERVER_FLAGS, env=env, cwd=work, timeout=3600) as one:
            flags = {"runs": [], "orders": ["--orders", shop]}
            setups.append(measure("one server", [one], list(ids), options, flags, env))
        if not options.no_postgres:
            import psycopg
            from shopkit import start_postgres
            from typer.testing import CliRunner

            from orderbot.cli import app

            server, stop = start_postgres()
            with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
                admin.execute("CREATE DATABASE shop")
            url = server.url("shop")
            imported = CliRunner().invoke(app, ["orders", "import", str(work / "orders.json"), "--to", url])
            assert imported.exit_code == 0, imported.output
            flags = {"runs": ["--runs", url], "orders": ["--orders", url]}
            served = [*flags["runs"], *flags["orders"], *SERVER_FLAGS]
            with (
                serving(*served, env=env, cwd=work, timeout=3600) as a,
                serving(*served, env=env, cwd=work, timeout=3600) as b,
            ):
                setups.append(measure("two servers, one PostgreSQL", [a, b], list(ids), options, flags, env))
    finally:
        if stop is not None:
            stop()
        shutil.rmtree(work, ignore_errors=True)
    report(setups, options)  # a figure that misses its aim is reported, not an error; a cancel run twice is
    return 0


if __name__ == "__main__":
    sys.exit(main())
