"""The retail shop's database stores at tau2's size and at a million orders, side by side:
`python benchmarks/retail.py [--orders 1000000] [--rounds 3]`.

    python benchmarks/retail.py                        # 1M orders, 500k customers: ~25 minutes
    python benchmarks/retail.py --orders 100000        # a quicker look

Two shops in each of SQLite and PostgreSQL: tau2's own (tests/fixtures/tau2-retail/db.json:
1,000 orders, 500 customers) and a generated one of the same shape (gen_retail.py: tau2's
records first, then generated ones up to ORDERS orders and ORDERS / 2 customers). Each is
loaded by the whole `orderbot orders import` command; the large import's wall time and the
command's peak memory (the resident-set high-water mark of the process) are reported.

Then, per round, interleaved (SQLite small, SQLite large, PostgreSQL small, PostgreSQL large,
each on a store opened once, as a running orderbot holds it):

  lookup     store.find_user_by_email for LOOKUPS customers drawn at random from that
             shop (their emails in a mixed case): find_user_id_by_email's store call
  details    store.order for LOOKUPS random orders of that shop: get_order_details's call
  write      one approved cancellation, WRITES times on distinct pending orders: read the
             order and its customer, compute the write (actions.cancel_pending_order),
             store.apply it with a new call key (compare-and-set + ledger, one transaction)

A round's figure is the mean time per operation (SQLite: the CPU time of the thread, which
other work on a shared machine does not inflate, and which leaves out the wait for fsync,
the same at both sizes; PostgreSQL: wall time, as the server does the work); the table
shows the min and median over the rounds of each side and the median of the per-round
ratios large / small (target ≤ 1.2×), with the ratio of the minimums beside it. The
PostgreSQL server is the tests' throwaway cluster (tests/shopkit.py: fsync off, as for
every figure here: the two sizes are compared, not the disk); each database is settled
(VACUUM ANALYZE, CHECKPOINT) after its import and before anything is timed. Everything
lives in a temporary directory removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from gen_retail import TAU2_DB, write  # noqa: E402

from orderbot.shops.choice import open_retail_store  # noqa: E402
from orderbot.shops.retail import actions  # noqa: E402
from orderbot.shops.source import parse_source  # noqa: E402

LOOKUPS = 2_000
WRITES = 100
# SQLite works in this thread: its CPU time, which a machine shared with other work does not
# inflate (as the loop figure in run.py); PostgreSQL works in the server: wall time.
CLOCKS = {"sqlite": time.thread_time, "postgres": time.perf_counter}


def measure(args: list[str], env: dict) -> tuple[float, float]:
    """Wall time and peak RSS (MiB) of one process, with its own peak (not the runner's)."""
    script = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter(); p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "print(json.dumps([time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,"
        " p.returncode, p.stderr.decode()[-300:]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, check=True)
    seconds, peak, code, err = json.loads(out.stdout)
    if code != 0:
        raise SystemExit(f"{' '.join(args[2:])} exited {code}: {err}")
    return seconds, peak


def picks(store, count: int, rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    """(emails, order ids, pending order ids) drawn at random from the whole shop, read
    through its own connection before anything is timed."""
    sql = "SELECT {} FROM {} WHERE seq IN ({})"
    native = sqlite3.Connection if isinstance(store.connection, sqlite3.Connection) else None

    def one(query: str, params: tuple) -> list[tuple]:
        return store.connection.execute(query if native else query.replace("?", "%s"), params).fetchall()

    users = one("SELECT count(*) FROM retail_users", ())[0][0]
    orders = one("SELECT count(*) FROM retail_orders", ())[0][0]
    user_seqs = rng.sample(range(1, users + 1), min(count, users))
    order_seqs = rng.sample(range(1, orders + 1), min(count, orders))
    marks = ", ".join("?" for _ in user_seqs)
    emails = [json.loads(body)["email"] for (body,) in one(sql.format("body", "retail_users", marks), tuple(user_seqs))]
    emails = [e.upper() if i % 2 else e.title() for i, e in enumerate(emails)]
    marks = ", ".join("?" for _ in order_seqs)
    order_ids = [oid for (oid,) in one(sql.format("order_id", "retail_orders", marks), tuple(order_seqs))]
    pending = [oid for (oid,) in one("SELECT order_id FROM retail_orders WHERE status = 'pending'", ())]
    rng.shuffle(order_ids)
    return emails, order_ids, rng.sample(pending, min(len(pending), 10 * WRITES))


def time_each(operation, items, clock) -> float:
    began = clock()
    for item in items:
        operation(item)
    return (clock() - began) / len(items)


def settle(url: str) -> None:
    """What a freshly loaded PostgreSQL database does in the background (autovacuum's
    analyze and visibility map, the checkpoint of the load's dirty buffers) done now, so
    none of it runs while the rounds are timed."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")
        connection.execute("CHECKPOINT")


def cancel(store, order_id: str, key: str) -> None:
    order = store.order(order_id)
    write = actions.cancel_pending_order(order, store.user(order.user_id), "no longer needed")
    store.apply(write, key, timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--shop", type=Path, help="a shop gen_retail.py already wrote for --orders (not generated again)"
    )
    options = parser.parse_args()
    rng = random.Random(5)
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="orderbot-retail-bench-") as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "ORDERBOT_STATE_DIR": str(tmp / "state"), "NO_COLOR": "1"}
        big = options.shop or tmp / "retail-big.json"
        began = time.perf_counter()
        if options.shop is None:
            write(options.orders, big)
        users = options.orders // 2
        made = "reused" if options.shop else f"generated in {time.perf_counter() - began:.0f} s"
        print(f"{options.orders:,} orders, {users:,} customers ({big.stat().st_size / 1e6:.0f} MB): {made}", flush=True)
        stop = None
        targets = {"sqlite": (f"sqlite:///{tmp / 'small.db'}", f"sqlite:///{tmp / 'big.db'}")}
        if not options.no_postgres:
            from shopkit import start_postgres

            server, stop = start_postgres()
            import psycopg

            with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
                admin.execute("CREATE DATABASE small")
                admin.execute("CREATE DATABASE big")
            targets["postgres"] = (server.url("small"), server.url("big"))
        try:
            stores = {}
            for kind, (small, large) in targets.items():
                label = {"sqlite": "SQLite", "postgres": "PostgreSQL"}[kind]
                orderbot = [sys.executable, "-m", "orderbot", "orders", "import"]
                measure([*orderbot, str(TAU2_DB), "--to", small], env)
                seconds, peak = measure([*orderbot, str(big), "--to", large], env)
                name = f"{label}: import {options.orders:,} orders, {users:,} customers (whole command)"
                rate = f"{seconds:.1f} s, {options.orders / seconds:,.0f} orders/s"
                rows.append((name, rate, "-", "-", "-", "info"))
                rows.append((f"{label}: peak memory of that import", f"{peak:.0f} MiB", "-", "-", "-", "info"))
                print(f"  {rows[-2][0]}: {rows[-2][1]}; {rows[-1][1]}", flush=True)
                for size, url in (("small", small), ("large", large)):
                    if kind == "postgres":
                        settle(url)
                    store = open_retail_store(parse_source(url))
                    stores[kind, size] = (store, *picks(store, LOOKUPS, rng))
            results: dict[tuple[str, str, str], list[float]] = {}
            for number in range(options.rounds):
                for kind in targets:
                    for size in ("small", "large"):
                        store, emails, order_ids, pending = stores[kind, size]
                        mine = pending[number * WRITES : (number + 1) * WRITES]
                        clock = CLOCKS[kind]
                        keyed = [(oid, f"bench/{number}/{oid}") for oid in mine]
                        figures = {
                            "lookup": time_each(store.find_user_by_email, emails, clock),
                            "details": time_each(store.order, order_ids, clock),
                            "write": time_each(lambda pair, on=store: cancel(on, *pair), keyed, clock),
                        }
                        for name, value in figures.items():
                            results.setdefault((kind, name, size), []).append(value)
                print(f"round {number + 1} of {options.rounds} done", flush=True)
            for store, *_ in stores.values():
                store.close()
        finally:
            if stop:
                stop()

    what = {
        "lookup": "find_user_id_by_email (store.find_user_by_email)",
        "details": "an order's details (store.order)",
        "write": "one approved cancellation (read, compute, apply)",
    }
    for kind in targets:
        label = {"sqlite": "SQLite", "postgres": "PostgreSQL"}[kind]
        for name in ("lookup", "details", "write"):
            small, large = results[kind, name, "small"], results[kind, name, "large"]
            ratios = [b / a for a, b in zip(small, large, strict=True)]
            rows.append((
                f"{label}: {what[name]}, {options.orders:,} vs 1,000 orders",
                f"{min(large) * 1e6:,.0f} / {statistics.median(large) * 1e6:,.0f} µs",
                f"{min(small) * 1e6:,.0f} / {statistics.median(small) * 1e6:,.0f} µs",
                f"{statistics.median(ratios):.2f}×",
                f"{min(large) / min(small):.2f}×",
                "≤ 1.2×",
            ))  # fmt: skip
    print()
    print(
        f"| figure | at {options.orders:,}: min / median | at tau2's 1,000: min / median | ratio | of mins | target |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
