"""The order stores at size, side by side in one run: `python benchmarks/stores.py [COUNT]`.

    python benchmarks/stores.py 10000            # a minute or two
    python benchmarks/stores.py 1000000 --rounds 3

For COUNT generated orders (benchmarks/gen_orders.py) it measures whole `orderbot`
processes, interleaved round by round, against the 14-order sample file:

  ask        one offline `ask` for one order's status: median wall time, peak memory (RSS)
  approve    one cancel + approve: `resume RUN --approve` of a run paused on a cancel
             (the process that re-checks, cancels and answers), against a plain `ask`
  json rmw   the JSON store's approve against a plain read-modify-write of the same file
             (json.load, edit one order, json.dump, fsync; collector off) and its memory
  import     `orderbot orders import` into SQLite, orders per second, next to sqlite3's own
             executemany of the same rows into the same tables (rows built beforehand)

SQLite is a file; PostgreSQL is a throwaway server started here (as the tests do) and
already running when anything is timed. Everything lives in a temporary directory that
is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
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

QUESTION = "请查询订单 ORD-1001 的状态。"


def orderbot(*args: str) -> list[str]:
    return [sys.executable, "-m", "orderbot", *args]


def measure(args: list[str], env: dict) -> tuple[float, float]:
    """Wall time and peak RSS of one process, with its own peak (not the runner's)."""
    script = (
        "import os, resource, subprocess, sys, time, json\n"
        "t = time.perf_counter(); p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "print(json.dumps([time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,"
        " p.returncode, p.stderr.decode()[-300:]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, check=True)
    seconds, peak, code, err = json.loads(out.stdout)
    if code not in (0, 4):
        raise SystemExit(f"{' '.join(args[2:])} exited {code}: {err}")
    return seconds, peak


def pause(source: str, order_id: str, user: str, env: dict, state: Path) -> str:
    """A run paused on one cancellation, kept in the state directory `state`; its id."""
    result = subprocess.run(
        orderbot("ask", "--json", "--state-dir", str(state), "--user", user, "--orders", source,
                 f"取消订单 {order_id}，不想要了"),
        env=env,
        capture_output=True,
    )  # fmt: skip
    assert result.returncode == 4, result.stderr.decode()
    return json.loads(result.stdout)["run_id"]


def cancellable(path: Path, count: int) -> list[tuple[str, str]]:
    """(order id, customer) of orders that can be cancelled, spread over the file."""
    with path.open(encoding="utf-8") as handle:
        orders = json.load(handle)["orders"]
    chosen = [(o["order_id"], o["customer_id"]) for o in orders if o["status"] in ("待付款", "处理中")]
    step = max(1, len(chosen) // (count + 1))
    return chosen[step::step][:count]


RMW = """
import gc, json, os, sys
gc.disable()
path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    doc = json.load(f)
for order in doc["orders"]:
    if order["order_id"] == sys.argv[2]:
        order["status"] = "已取消"
with open(path + ".tmp", "w", encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
    f.flush()
    os.fsync(f.fileno())
os.replace(path + ".tmp", path)
"""

EXECUTEMANY = """
import sqlite3, sys, time
from pathlib import Path
from orderbot.shops.sample.stores.jsonfile import parse_orders
from orderbot.shops.sample.stores.sql import INDEXES, rows_of, tables
path = Path(sys.argv[1])
rows = list(rows_of(parse_orders(path, path.read_bytes()).values()))
db = sqlite3.connect(sys.argv[2], isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("BEGIN")
for statement in tables("REAL", "TEXT"):
    db.execute(statement)
began = time.perf_counter()
db.executemany("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [r[0] for r in rows])
db.executemany("INSERT INTO line_items VALUES (?,?,?,?,?,?)", [i for r in rows for i in r[1]])
db.executemany("INSERT INTO shipping VALUES (?,?,?,?)", [r[2] for r in rows if r[2]])
for statement in INDEXES:
    db.execute(statement)
db.execute("COMMIT")
print(time.perf_counter() - began)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int, nargs="?", default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    options = parser.parse_args()
    from gen_orders import write

    from orderbot.shops.sample.model import SAMPLE_PATH

    rows: list[tuple[str, str, str, str]] = []

    def figure(name: str, measured: str, baseline: str, ratio: float, target: str) -> None:
        rows.append((name, measured, baseline, f"{ratio:.2f}×", target))
        print(f"  {name}: {measured} vs {baseline} = {ratio:.2f}× (target {target})", flush=True)

    with tempfile.TemporaryDirectory(prefix="orderbot-bench-") as tmp:
        tmp = Path(tmp)
        state = tmp / "state"
        env = {**os.environ, "ORDERBOT_STATE_DIR": str(state), "NO_COLOR": "1", "ORDERBOT_LANG": "zh"}
        env.pop("OPENAI_API_KEY", None)
        sample = tmp / "sample.json"
        sample.write_bytes(SAMPLE_PATH.read_bytes())
        big = tmp / "orders.json"
        began = time.perf_counter()
        write(options.count, big)
        print(f"generated {options.count:,} orders ({big.stat().st_size / 1e6:.0f} MB) in "
              f"{time.perf_counter() - began:.0f} s", flush=True)  # fmt: skip

        sources = {"sqlite": f"sqlite:///{tmp / 'shop.db'}"}
        seconds, _ = measure(orderbot("orders", "import", str(big), "--to", sources["sqlite"]), env)
        base = float(
            subprocess.run(
                [sys.executable, "-c", EXECUTEMANY, str(big), str(tmp / "baseline.db")],
                env=env, capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        figure(
            f"import {options.count:,} into SQLite (whole command, validation included)",
            f"{options.count / seconds:,.0f} orders/s",
            f"{options.count / base:,.0f} orders/s",
            seconds / base,
            "info",
        )
        stop = None
        if not options.no_postgres:
            from shopkit import start_postgres

            server, stop = start_postgres()
            import psycopg

            with psycopg.connect(server.url("postgres"), autocommit=True) as admin:
                admin.execute("CREATE DATABASE shop")
            sources["postgres"] = server.url("shop")
            seconds, _ = measure(orderbot("orders", "import", str(big), "--to", sources["postgres"]), env)
            rate = f"{options.count / seconds:,.0f} orders/s"
            rows.append((f"import {options.count:,} into PostgreSQL (COPY)", rate, "-", "-", "info"))
        try:
            # Per round: one order to cancel per store, and two in the JSON file (orderbot's
            # approval and the read-modify-write baseline).
            targets = cancellable(big, options.rounds * (len(sources) + 2))
            results: dict[str, list[tuple[float, float]]] = {}
            for _ in range(options.rounds):  # interleaved: every variant sees the same machine load
                for name, source in [("sample", str(sample)), *sources.items(), ("json", str(big))]:
                    results.setdefault(f"ask {name}", []).append(
                        measure(orderbot("ask", "--orders", source, QUESTION), env)
                    )
                    if name == "sample":
                        continue
                    order_id, user = targets.pop()
                    run_id = pause(source, order_id, user, env, state)
                    results.setdefault(f"approve {name}", []).append(
                        measure(orderbot("resume", run_id, "--approve", "--user", user, "--orders", source), env)
                    )
                    if name == "json":
                        order_id, _ = targets.pop()
                        results.setdefault("rmw", []).append(
                            measure([sys.executable, "-c", RMW, str(big), order_id], env)
                        )
        finally:
            if stop:
                stop()

    def med(key: str, index: int) -> float:
        return statistics.median(r[index] for r in results[key])

    ask_s, ask_m = med("ask sample", 0), med("ask sample", 1)
    for name in [*sources, "json"]:
        label = {"sqlite": "SQLite", "postgres": "PostgreSQL", "json": "JSON"}[name]
        if name != "json":
            figure(f"{label} {options.count:,}: ask one order", f"{med(f'ask {name}', 0):.2f} s", f"{ask_s:.2f} s",
                   med(f"ask {name}", 0) / ask_s, "≤ 1.2×")  # fmt: skip
            figure(f"{label} {options.count:,}: peak memory of that ask", f"{med(f'ask {name}', 1):.0f} MiB",
                   f"{ask_m:.0f} MiB", med(f"ask {name}", 1) / ask_m, "≤ 1.2×")  # fmt: skip
            approve, plain = med(f"approve {name}", 0), med(f"ask {name}", 0)
            figure(f"{label} {options.count:,}: cancel + approve vs a plain ask", f"{approve:.2f} s", f"{plain:.2f} s",
                   approve / plain, "≤ 1.3×")  # fmt: skip
        else:
            figure(f"JSON {options.count:,}: cancel + approve vs read-modify-write", f"{med('approve json', 0):.2f} s",
                   f"{med('rmw', 0):.2f} s", med("approve json", 0) / med("rmw", 0), "≤ 1.3×")  # fmt: skip
            figure(f"JSON {options.count:,}: its peak memory", f"{med('approve json', 1):.0f} MiB",
                   f"{med('rmw', 1):.0f} MiB", med("approve json", 1) / med("rmw", 1), "≤ 1.5×")  # fmt: skip
    print()
    print("| figure | orderbot | baseline | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
