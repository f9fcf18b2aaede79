"""At most once across machines: two operators approving the same call at the same moment,
as separate orderbot processes on one shared run store, execute it once; the other is told
who settled it first. On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import warm_orderbot
from clikit import cli

from orderbot.shops.sample.stores.jsonfile import JsonStore

pytestmark = pytest.mark.slow  # approvals raced by real processes

CANCELLABLE = {"ORD-1002": "C001", "ORD-1004": "C002", "ORD-1008": "C002", "ORD-1009": "C003", "ORD-1013": "C001"}
APPROVERS_PER_RUN = 2


@pytest.fixture(params=["sqlite", "postgres"])
def shared_runs(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
        return
    server = request.getfixturevalue("postgres_server")
    database = server.new_database()
    yield server.url(database)
    server.drop_database(database)


def test_simultaneous_approvals_of_one_call_execute_it_exactly_once(shared_runs, orders_file):
    runs = {}
    for order_id, customer in CANCELLABLE.items():
        asked = ["--json", "--runs", shared_runs, "--orders", str(orders_file), "--user", customer]
        result = cli("ask", *asked, f"取消订单 {order_id}")
        assert result.exit_code == 4, result.output
        runs[json.loads(result.stdout)["run_id"]] = order_id

    command = [warm_orderbot.command(), "approvals", "approve", "--runs", shared_runs]
    processes = [
        (run_id, subprocess.Popen([*command, run_id], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for _ in range(APPROVERS_PER_RUN)
        for run_id in runs
    ]  # all of them at once: each run's two approvers race
    outcomes: dict[str, list[tuple[int, str]]] = {run_id: [] for run_id in runs}
    for run_id, process in processes:
        out, err = process.communicate(timeout=180)
        outcomes[run_id].append((process.returncode, out + err))

    for ended in outcomes.values():
        codes = sorted(code for code, _ in ended)
        assert codes == [0, 9], ended  # the one who came second is refused, not misconfigured
        [told] = [text for code, text in ended if code == 9]
        assert "was already approved by" in told and "Traceback" not in told, told

    orders = JsonStore.load(orders_file)
    for run_id, order_id in runs.items():
        order = orders.get(order_id)
        assert order.status == "已取消" and order.cancelled_by.startswith(run_id), order
    audit = json.loads(cli("audit", "--json", "--limit", "1000", "--runs", shared_runs).stdout)
    for run_id in runs:
        events = sorted(e["event"] for e in audit if e["run_id"] == run_id)
        assert events == ["approved", "executed", "proposed"], (run_id, events)
    verified = cli("audit", "--verify", "--runs", shared_runs)
    assert verified.exit_code == 0, verified.output
    assert os.environ.get("ORDERBOT_RUNS") is None  # the store came from --runs alone
