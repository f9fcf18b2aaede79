"""Approvals racing each other, on every store: 20 processes approving 20 different runs
(two runs per order), and 20 processes approving the same run. Each order is cancelled
exactly once, and exactly one approval of a run carries its call out."""

from __future__ import annotations

import json
import multiprocessing

import pytest
from clikit import cli
from runkit import record_doc, run_ids

from orderbot.errors import ExitCode
from orderbot.shops.sample.model import SAMPLE_PATH

pytestmark = pytest.mark.slow  # approvals by twenty real processes

RACERS = 20


def pause(source: str, order_id: str) -> str:
    """A piped `ask` that stops for approval of one cancellation; its run id."""
    before = set(run_ids())
    result = cli("ask", "--user", "C001", "--orders", source, f"取消订单 {order_id}，不想要了")
    assert result.exit_code == 4, result.output
    [run_id] = set(run_ids()) - before
    return run_id


def _approve(run_id: str, source: str, barrier, results) -> None:
    barrier.wait(timeout=120)  # every racer is loaded and waiting: then all go at once
    result = cli("resume", run_id, "--approve", "--user", "C001", "--orders", source)
    results.put((run_id, result.exit_code))


def race(approvals: list[tuple[str, str]]) -> list[tuple[str, int]]:
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(len(approvals)), context.Queue()
    racers = [context.Process(target=_approve, args=(*pair, barrier, results)) for pair in approvals]
    for racer in racers:
        racer.start()
    outcomes = [results.get(timeout=240) for _ in racers]
    for racer in racers:
        racer.join(timeout=60)
    assert [racer.exitcode for racer in racers] == [0] * len(racers)
    return outcomes


def executed(run_id: str) -> int:
    """How many calls of the run were carried out and succeeded (a cancel that lost the
    race is executed too, but its result is the store's not_cancellable)."""
    doc = record_doc(run_id)
    return sum(call["decision"] == "executed" and call["result"]["ok"] for call in doc["state"]["calls"])


@pytest.fixture
def many(shop):
    """The sample plus ten more orders of C001 that can still be cancelled."""
    orders = json.loads(SAMPLE_PATH.read_text(encoding="utf-8"))["orders"]
    template = next(o for o in orders if o["order_id"] == "ORD-1002")
    extra = [{**template, "order_id": f"ORD-{2001 + n}"} for n in range(RACERS // 2)]
    return shop.another(orders + extra, "many")


def test_twenty_approvals_of_twenty_runs_cancel_each_order_exactly_once(many):
    order_ids = [f"ORD-{2001 + n}" for n in range(RACERS // 2)]
    runs = {order_id: [pause(many.source, order_id), pause(many.source, order_id)] for order_id in order_ids}
    cancelled_before = sum(o.status == "已取消" for o in many.open().list_orders(None, limit=100))
    many.close()  # no connection is shared across the fork
    outcomes = race([(run_id, many.source) for pair in runs.values() for run_id in pair])

    assert all(code in (0, 6) for _, code in outcomes), outcomes
    store = many.open()
    for order_id, pair in runs.items():
        order = store.get(order_id)
        assert order.status == "已取消"
        assert order.cancelled_by.split("/")[0] in pair  # cancelled by one of its two runs ...
        assert sum(executed(run_id) for run_id in pair) == 1  # ... and carried out by exactly one
    assert sum(o.status == "已取消" for o in store.list_orders(None, limit=100)) == cancelled_before + RACERS // 2


def test_twenty_approvals_of_the_same_run_cancel_once(shop):
    run_id = pause(shop.source, "ORD-1002")
    shop.close()
    outcomes = race([(run_id, shop.source)] * RACERS)

    # The others are refused (busy, or settled first by the one that won), not misconfigured.
    assert sorted(code for _, code in outcomes) == [0] + [ExitCode.REFUSED] * (RACERS - 1), outcomes
    assert executed(run_id) == 1
    order = shop.open().get("ORD-1002")
    assert order.status == "已取消" and order.cancelled_by.startswith(f"{run_id}/")
