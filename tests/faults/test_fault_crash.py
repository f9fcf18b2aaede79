"""Crash test: runs killed with SIGKILL at random points leave every run record readable
and the orders file whole.

Each round starts a real `orderbot` process on a private orders file and state directory
(offline model, so no network), waits for its header line (printed once imports and
setup are done, just before the run and its writes) and kills it at a random moment of
what follows: half the rounds kill `ask` (the run record is being written), half kill
`resume --approve` (the record and the orders file are being written). After every kill:
each record parses and validates, `orderbot runs` lists them, and orders.json loads and
differs from before in at most the one order being cancelled. The kill points come from a
seeded random generator (ORDERBOT_CRASH_SEED to vary them), and there are a bounded number
of rounds so the suite stays fast.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clikit import cli
from fuzz import IN_CI
from runkit import open_store, run_ids

from orderbot.runs.summary import RUN_ID as RUN_ID_FORMAT
from orderbot.shops.sample.model import ORDER, SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore

ROUNDS = 10 if IN_CI else 4  # each round starts two processes (tests/fuzz.py)
USER = "C001"
RUN_ID = re.compile(RUN_ID_FORMAT.pattern.strip("^$"))

pytestmark = [
    pytest.mark.slow,  # real processes killed at random points
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL"),
]


def orders_with_cancellable(path: Path, count: int) -> None:
    """The sample plus `count` orders of USER that can still be cancelled."""
    doc = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))
    model = next(o for o in doc["orders"] if o["order_id"] == "ORD-1002")
    for i in range(count):
        order = copy.deepcopy(model)
        order["order_id"] = f"ORD-20{i:02d}"
        doc["orders"].append(order)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def orderbot(*args: str) -> subprocess.Popen:
    # Unbuffered, so the header line arrives the moment it is printed.
    return subprocess.Popen(
        [sys.executable, "-m", "orderbot", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ | {"NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
    )


def started(proc: subprocess.Popen) -> str:
    """Block until the run's header line: imports, settings and the orders file are done,
    and the run itself (with its writes) is about to start. Returns the run id."""
    line = proc.stdout.readline().decode()
    found = RUN_ID.search(line)
    assert found, f"no header line: {line!r}"
    return found.group()


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()[-2000:]
    return proc.returncode, out.decode()


def kill_after(proc: subprocess.Popen, seconds: float) -> float | None:
    """Wait up to `seconds` for the process to end, else SIGKILL it. None when killed, else
    the seconds it took to end by itself."""
    began = time.monotonic()
    try:
        proc.wait(timeout=seconds)
        took = time.monotonic() - began
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        took = None
    proc.communicate(timeout=60)
    return took


def check_state(state_dir: Path, orders: Path, before: dict, target: str) -> dict:
    """Every record readable; orders.json whole, changed in at most `target`."""
    store = open_store(state_dir)
    for run_id in run_ids(state_dir):
        store.load(run_id)  # raises RecordError on a torn or corrupt record
    assert all(s.error is None for s in store.summaries())
    store.close()
    after = {oid: ORDER.dump_python(o, mode="json") for oid, o in JsonStore.load(orders).orders.items()}
    assert after.keys() == before.keys()
    changed = {oid for oid in after if after[oid] != before[oid]}
    assert changed <= {target}
    if changed:
        assert after[target]["status"] == "已取消"
    return after


def test_runs_killed_at_random_points_leave_records_readable_and_orders_whole(tmp_path):
    orders = tmp_path / "orders.json"
    orders_with_cancellable(orders, ROUNDS + 1)
    state_dir = Path(os.environ["ORDERBOT_STATE_DIR"])
    rng = random.Random(int(os.environ.get("ORDERBOT_CRASH_SEED", "20261130")))
    ask_args = ["ask", "--orders", str(orders), "--user", USER, "--provider", "offline"]

    def resume_args(run_id: str) -> list[str]:
        return ["resume", run_id, "--approve", "--user", USER, "--orders", str(orders)]

    # One uninterrupted ask and resume: they must work, and they tell how long the part of
    # a run after its header lasts (where the writes are).
    ask = orderbot(*ask_args, "取消订单 ORD-2000，原因：不要了")
    run_id, began = started(ask), time.monotonic()
    assert finish(ask)[0] == 4
    ask_tail = time.monotonic() - began
    resume = orderbot(*resume_args(run_id))
    started(resume)
    began = time.monotonic()
    assert finish(resume)[0] == 0
    resume_tail = time.monotonic() - began
    before = {oid: ORDER.dump_python(o, mode="json") for oid, o in JsonStore.load(orders).orders.items()}
    assert before["ORD-2000"]["status"] == "已取消"

    # A round that ended before its kill point says how long that part really takes now: the
    # first runs can be slower (a busier machine, a cold cache), and kill points drawn from
    # a tail too long would mostly come after the end.
    killed = 0
    for round_ in range(1, ROUNDS + 1):
        target = f"ORD-20{round_:02d}"
        ask = orderbot(*ask_args, f"取消订单 {target}，原因：不要了")
        run_id = started(ask)
        if round_ % 2:
            took = kill_after(ask, rng.uniform(0, ask_tail))  # while the run record is written
            ask_tail = ask_tail if took is None else min(ask_tail, took)
        else:
            assert finish(ask)[0] == 4
            resume = orderbot(*resume_args(run_id))
            started(resume)
            took = kill_after(resume, rng.uniform(0, resume_tail))  # record and orders file written
            resume_tail = resume_tail if took is None else min(resume_tail, took)
        killed += took is None
        before = check_state(state_dir, orders, before, target)

    assert killed >= max(1, ROUNDS * 3 // 10)  # the rounds really died mid-run (3 of 10 in CI)
    listing = cli("runs")
    assert listing.exit_code == 0, listing.output
