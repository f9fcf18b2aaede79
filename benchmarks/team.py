"""A team's run store in PostgreSQL at team scale: `python benchmarks/team.py`.

    python benchmarks/team.py                          # ~10 minutes on 2 cores
    python benchmarks/team.py --approvals 200 --runs 20000 --rounds 5   # quicker
    python benchmarks/team.py --approvals 3 --runs 300 --rounds 1 --json out.json   # the tests' smoke path

1. **Settling a queue.** A throwaway PostgreSQL server (started as the tests start theirs)
   holds the orders and the run store in one database, set up with docs/team.md's grants
   and four eyes on. Role desk00 asks to cancel N orders (N = --approvals, 1,000): N runs
   wait for approval. Then 20 operator processes (roles desk01 ... desk20, one process
   each, released together by a barrier) settle the queue: each lists the queue, picks one
   of the 40 oldest actions at random (so operators do collide) and runs `orderbot
   approvals approve RUN --runs ... --orders ...` in-process (the whole command: settings,
   connections, re-checks, the claim, the call, the rest of the run, the saves), until the
   queue is empty. Reported: approvals per second (N over the wall time from the barrier to
   the last process), p50 and p99 of one approval, how many approvals lost a race (refused,
   exit 9, and told who settled first), and the exactly-once check: every call executed once (audit log, the
   orders' cancelled_by), nothing failed, the queue empty, the audit chain intact.
2. **Listing at 100,000 runs.** Two run stores: one with 100 runs, one with 100,000 (the
   100 newest made by real runs, the rest copies of a pruned run with their own ids and
   integrity tags, each with a settled approval: a store that prunes after some days),
   each with the same 50 actions waiting. `orderbot runs` and `orderbot approvals` against each, interleaved round by
   round: the command in-process (after one warm-up) and as a whole process. Reported: the
   medians and the median of the per-round ratios (100,000 / 100); the target is 1.2x.

Everything lives in a temporary directory (the cluster too) removed at the end.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
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

import gen_orders  # noqa: E402
from shopkit import start_postgres  # noqa: E402

from orderbot.errors import ExitCode  # noqa: E402

OPERATORS = 20
PICK_FROM = 40  # an operator picks one of the oldest this many actions
PASSWORD = "bench-Pw-9q"
WAITING = 50  # actions waiting in each store of the listing figure
WINNER = re.compile(r"\bdesk\d\d\b")  # an operator's role, as a loser's sentence names the winner


def grants() -> list[str]:
    """docs/team.md's grants to operators (the block `-- as runs_owner`)."""
    page = (ROOT / "docs" / "team.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sql\n(.*?)```", page, re.S) if b.startswith("-- as runs_owner"))
    lines = [line for line in block.splitlines() if not line.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def url(server, role: str, database: str) -> str:
    return f"postgresql://{role}:{PASSWORD}@{server.host}:{server.port}/{database}"


def team_database(server, name: str, orders: Path | None) -> None:
    """A database with the sample shop's tables (the orders, when given) and the run tables,
    granted to desk00 ... desk20 as docs/team.md grants, with four eyes on."""
    import psycopg
    from typer.testing import CliRunner

    from orderbot.cli import app

    with server.admin() as admin:
        admin.execute(f"CREATE DATABASE {name}")
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'orderbot_operators'").fetchone():
            admin.execute("CREATE ROLE orderbot_operators NOLOGIN")
            for index in range(OPERATORS + 1):
                admin.execute(f"CREATE ROLE desk{index:02d} LOGIN PASSWORD '{PASSWORD}' IN ROLE orderbot_operators")
    owner = server.url(name)
    cli = CliRunner()
    source = orders or ROOT / "orders.json"
    done = cli.invoke(app, ["orders", "import", str(source), "--to", owner])
    assert done.exit_code == 0, done.output
    assert cli.invoke(app, ["runs", "--runs", owner]).exit_code == 0  # makes the run tables
    with psycopg.connect(owner, autocommit=True) as connection:
        for statement in grants():
            connection.execute(statement)
        connection.execute("INSERT INTO run_policy VALUES ('four_eyes', 'on')")


def ask_to_cancel(runs_url: str, targets: list[tuple[str, str]]) -> list[str]:
    """desk00's runs, one per order, each waiting for approval; made in this process."""
    from orderbot.errors import RecordError
    from orderbot.loop.state import RunState
    from orderbot.models import create
    from orderbot.runner import Runner
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings
    from orderbot.shops.session import open_session

    settings = load_settings(runs=runs_url, orders=runs_url, provider="offline")
    store, session = open_run_store(settings), open_session(settings)
    runner = Runner.for_session(session, create(settings, session.shop), store, provider="offline")
    limits = session.limits(settings)
    made = []
    for order_id, customer in targets:
        while True:  # ids are the second and 16 random bits: at ~100 runs a second two may meet
            state = RunState.start(f"取消订单 {order_id}", user=customer)
            try:
                result = runner.start(state, limits)
                break
            except RecordError as exc:
                if "already another run's" not in str(exc):
                    raise
        assert str(result.state.stop_reason) == "awaiting_approval", result.state.stop_detail
        made.append(state.run_id)
    store.close()
    return made


def operator(index: int, server, database: str, barrier, results) -> None:
    """One desk: settle actions from the queue until it is empty (what failed, if it did)."""
    try:
        settle_as(index, server, database, barrier, results)
    except BaseException as exc:
        results.put([(0.0, -1, [f"desk{index:02d}: {type(exc).__name__}: {exc}"])])
        raise


def settle_as(index: int, server, database: str, barrier, results) -> None:
    os.environ["ORDERBOT_STATE_DIR"] = tempfile.mkdtemp(prefix=f"desk{index:02d}-")
    from typer.testing import CliRunner

    from orderbot.cli import app
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings

    mine = url(server, f"desk{index:02d}", database)
    cli = CliRunner()
    rng = random.Random(index)
    done = []
    barrier.wait()
    while True:
        queue = open_run_store(load_settings(runs=mine))  # closed before approving: 2 connections a desk
        waiting = queue.waiting(limit=PICK_FROM)
        queue.close()
        if not waiting:
            break
        run_id = rng.choice(waiting).run_id
        began = time.perf_counter()
        result = cli.invoke(app, ["approvals", "approve", run_id, "--runs", mine, "--orders", mine])
        done.append((time.perf_counter() - began, result.exit_code, result.output.strip().splitlines()[-1:]))
    results.put(done)


def settle_queue(server, tmp: Path, approvals: int) -> dict:
    database = "settle"
    orders = gen_orders.write(approvals * 10 + 100, tmp / "orders.json")
    team_database(server, database, orders)
    rows = json.loads(orders.read_text(encoding="utf-8"))["orders"]
    targets = [(o["order_id"], o["customer_id"]) for o in rows if o["status"] in ("待付款", "处理中")][:approvals]
    assert len(targets) == approvals, f"only {len(targets)} cancellable orders"
    asker = url(server, "desk00", database)
    began = time.perf_counter()
    run_ids = ask_to_cancel(asker, targets)
    asked_seconds = time.perf_counter() - began

    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(OPERATORS + 1), context.Queue()
    processes = [context.Process(target=operator, args=(i, server, database, barrier, results)) for i in range(1, 21)]
    for process in processes:
        process.start()
    barrier.wait()
    began = time.perf_counter()
    outcomes = [item for _ in processes for item in results.get()]
    wall = time.perf_counter() - began
    for process in processes:
        process.join()

    settled = sorted(seconds for seconds, code, _ in outcomes if code == ExitCode.OK)
    lost = [(s, lines) for s, code, lines in outcomes if lost_race(code)]
    other = [(code, lines) for _, code, lines in outcomes if code != ExitCode.OK and not lost_race(code)]
    check = exactly_once(server, database, run_ids, targets)
    return {
        "approvals": approvals,
        "operators": OPERATORS,
        "asked_seconds": round(asked_seconds, 1),
        "wall_seconds": round(wall, 2),
        "approvals_per_second": round(len(settled) / wall, 1),
        "p50_ms": round(1000 * statistics.median(settled), 1),
        "p99_ms": round(1000 * settled[min(len(settled) - 1, int(0.99 * len(settled)))], 1),
        "attempts": len(outcomes),
        "settled": len(settled),
        "lost_races": len(lost),
        # A loser is told who settled the action first (orderbot.runs.base): its line names a desk.
        "lost_told_who_won": sum(1 for _, lines in lost if WINNER.search(" ".join(lines))),
        "lost_p50_ms": round(1000 * statistics.median([s for s, _ in lost]), 1) if lost else None,
        "other_failures": other[:5],
        **check,
    }


def lost_race(code: int) -> bool:
    """An approval that lost a race: another desk settled the action first, so this one was
    refused (exit 9, nothing done). Here every desk may approve (none asked), so a refusal
    has no other cause; `lost_told_who_won` checks that each loser was told who won."""
    return code == ExitCode.REFUSED


def exactly_once(server, database: str, run_ids: list[str], targets) -> dict:
    import psycopg

    from orderbot.runs.audit import verify
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings

    with psycopg.connect(server.url(database)) as connection:
        executed = dict(
            connection.execute(
                "SELECT run_id, count(*) FROM run_audit WHERE event = 'executed' GROUP BY run_id"
            ).fetchall()
        )
        failed = connection.execute("SELECT count(*) FROM run_audit WHERE event = 'failed'").fetchone()[0]
        statuses = dict(connection.execute("SELECT status, count(*) FROM run_approvals GROUP BY status").fetchall())
        by_order = dict(
            connection.execute(
                "SELECT order_id, cancelled_by FROM orders WHERE order_id = ANY(%s)", ([o for o, _ in targets],)
            ).fetchall()
        )
    store = open_run_store(load_settings(runs=server.url(database)))
    chain = verify(store.audit_entries())
    problems = store.audit_problems()
    store.close()
    run_of = dict(zip([o for o, _ in targets], run_ids, strict=True))
    return {
        "executed_once": sorted(set(executed.values())) == [1] and set(executed) == set(run_ids),
        "failed_entries": failed,
        "approval_rows": statuses,
        "orders_cancelled_by_their_run": sum(
            1 for order_id, by in by_order.items() if by and by.startswith(run_of[order_id])
        ),
        "audit_entries": chain.entries,
        "audit_intact": chain.intact and not problems,
    }


# ---- listing at 100,000 runs --------------------------------------------------------------


def fill(server, database: str, total: int) -> None:
    """`total` runs: 50 waiting and 50 answered made by real runs, the rest copies of a
    pruned answered run (each with its own id, started a second apart, and its own tag)."""
    import psycopg

    from orderbot.loop.state import RunState, new_run_id
    from orderbot.models import create
    from orderbot.runner import Runner
    from orderbot.runs.stores import open_run_store
    from orderbot.runs.tagged import tag_record
    from orderbot.settings import load_settings
    from orderbot.shops.session import open_session

    asker = url(server, "desk00", database)
    settings = load_settings(runs=asker, orders=asker, provider="offline")
    store, session = open_run_store(settings), open_session(settings)
    runner = Runner.for_session(session, create(settings, session.shop), store, provider="offline")
    limits = session.limits(settings)
    now = time.time()
    template = None
    copies = total - 2 * WAITING
    for index in range(WAITING):
        state = RunState.start("查询 ORD-1001", user="C001", run_id=new_run_id(now - 2 * WAITING + index))
        template = runner.start(state, limits).record
    for index in range(WAITING):
        state = RunState.start("取消订单 ORD-1002", user="C001", run_id=new_run_id(now - WAITING + index))
        runner.start(state, limits)
    key = store.key()
    template.prune(now)
    body, summary = template.to_json(), template.summary()
    summary_doc = {k: v for k, v in summary.as_dict().items() if k != "run_id"}
    summary_json = json.dumps(summary_doc, ensure_ascii=False, separators=(",", ":"))
    store.close()
    old = template.run_id
    started = [now - 2 * WAITING - 10 - index for index in range(copies)]  # a second apart: distinct ids
    ids = [new_run_id(when) for when in started]
    with psycopg.connect(server.url(database)) as connection, connection.cursor() as cursor:
        # Loaded past the guards' triggers: they name who started a run and who settles a row
        # as the session's role; here the rows are made as desk00's and desk01's, settled.
        connection.execute("SET session_replication_role = replica")
        columns = "run_id, created_at, written, customer, operator, status, summary, record, revision, pruned_at"
        with cursor.copy(f"COPY runs ({columns}) FROM STDIN") as copy:
            for run_id, when in zip(ids, started, strict=True):
                record = tag_record(key, body.replace(old, run_id).encode()).decode()
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
                copy.write_row((run_id, stamp, when, "C001", "desk00", "answered", summary_json, record, 1, stamp))
        # Each copy settled an approval (committed), as a team's runs do: the queue's table
        # holds 100,000 rows of which WAITING are pending.
        with cursor.copy(
            "COPY run_approvals (run_id, call_id, tool, arguments, description, customer, requested_by, "
            "requested_at, status, decided_by, decided_at) FROM STDIN"
        ) as copy:
            for run_id, when in zip(ids, started, strict=True):
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
                copy.write_row((run_id, "call_1", "cancel_order", '{"order_id":"ORD-1002"}',
                                "Cancel ORD-1002", "C001", "desk00", stamp, "committed", "desk01", stamp))  # fmt: skip
        connection.execute("SET session_replication_role = DEFAULT")
        connection.execute("ANALYZE runs")
        connection.execute("ANALYZE run_approvals")


def listing(server, tmp: Path, big: int, rounds: int) -> dict:
    from typer.testing import CliRunner

    from orderbot.cli import app

    stores = {}
    for name, total in (("small", 100), ("big", big)):
        team_database(server, f"list_{name}", None)
        fill(server, f"list_{name}", total)
        stores[name] = url(server, "desk01", f"list_{name}")
    env = {**os.environ, "ORDERBOT_STATE_DIR": str(tmp / "lister"), "COLUMNS": "100"}
    cli = CliRunner()
    commands = {"runs": ["runs"], "approvals": ["approvals"]}
    times: dict = {(c, s, how): [] for c in commands for s in stores for how in ("in-process", "process")}
    for command in commands.values():  # warm-up: imports, the server's caches
        for where in stores.values():
            assert cli.invoke(app, [*command, "--runs", where]).exit_code == 0
    for _ in range(rounds):
        for name, args in commands.items():
            for store, where in stores.items():
                began = time.perf_counter()
                result = cli.invoke(app, [*args, "--runs", where], env={"COLUMNS": "100"})
                times[(name, store, "in-process")].append(time.perf_counter() - began)
                assert result.exit_code == 0, result.output
                began = time.perf_counter()
                subprocess.run([sys.executable, "-m", "orderbot", *args, "--runs", where], env=env, check=True,
                               capture_output=True)  # fmt: skip
                times[(name, store, "process")].append(time.perf_counter() - began)
    queries = store_queries(stores, rounds)
    out = {}
    for name in commands:
        for how in ("in-process", "process"):
            small, bigger = times[(name, "small", how)], times[(name, "big", how)]
            ratios = [b / s for s, b in zip(small, bigger, strict=True)]
            out[f"{name} {how}"] = {
                "100 runs ms": round(1000 * statistics.median(small), 1),
                f"{big:,} runs ms": round(1000 * statistics.median(bigger), 1),
                "ratio (median of rounds)": round(statistics.median(ratios), 2),
            }
    return out | queries


def store_queries(stores: dict, rounds: int, repeat: int = 50) -> dict:
    """The store's own part of each listing, without connecting or drawing: the 20 newest
    summaries (`runs`) and the waiting actions (`approvals`), `repeat` times per round on an
    open connection; with the plan PostgreSQL chose for each."""
    from itertools import islice

    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings

    opened = {name: open_run_store(load_settings(runs=where)) for name, where in stores.items()}
    work = {
        "runs query": lambda store: list(islice(store.summaries(), 20)),
        "approvals query": lambda store: store.waiting(limit=100),
    }
    times = {(q, s): [] for q in work for s in opened}
    for _ in range(rounds):
        for query, run in work.items():
            for name, store in opened.items():
                began = time.perf_counter()
                for _ in range(repeat):
                    run(store)
                times[(query, name)].append((time.perf_counter() - began) / repeat)
    out = {}
    for query in work:
        small, big = times[(query, "small")], times[(query, "big")]
        out[query] = {
            "100 runs ms": round(1000 * statistics.median(small), 3),
            "big store ms": round(1000 * statistics.median(big), 3),
            "ratio (median of rounds)": round(statistics.median(b / s for s, b in zip(small, big, strict=True)), 2),
        }
    plans = {
        "runs": "SELECT run_id, summary FROM runs ORDER BY run_id DESC LIMIT 100",
        "approvals": "SELECT run_id FROM run_approvals WHERE status = 'pending' "
        "ORDER BY requested_at, run_id LIMIT 100",
    }
    big = opened["big"]
    for name, sql in plans.items():
        out[f"{name} plan"] = [row[0] for row in big.connection.execute("EXPLAIN " + sql).fetchall()]
    for store in opened.values():
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--approvals", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--only", choices=("settle", "listing"), help="one of the two figures")
    options = parser.parse_args()
    for name in [n for n in os.environ if n.startswith("ORDERBOT_") or n == "OPENAI_API_KEY"]:
        del os.environ[name]
    server, stop = start_postgres()
    try:
        with tempfile.TemporaryDirectory(prefix="orderbot-team-bench-") as tmp:
            os.environ["ORDERBOT_STATE_DIR"] = str(Path(tmp) / "state")
            figures = {}
            if options.only in (None, "settle"):
                figures["settle"] = settle_queue(server, Path(tmp), options.approvals)
                print(json.dumps(figures["settle"], indent=2, ensure_ascii=False), flush=True)
            if options.only in (None, "listing"):
                figures["listing"] = listing(server, Path(tmp), options.runs, options.rounds)
                print(json.dumps(figures["listing"], indent=2, ensure_ascii=False))
            figures["load average"] = os.getloadavg()
            if options.json:
                options.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    finally:
        stop()


if __name__ == "__main__":
    main()
