"""Cancelling writes orders.json: atomically, under a file lock, at most once per call,
never the bundled sample; concurrent writers and crashes lose nothing."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from filelock import FileLock

from orderbot.errors import ToolError
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore, lock_path

FIXED_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def load(path: Path, **kwargs) -> JsonStore:
    store = JsonStore.load(path)
    store.now = lambda: FIXED_NOW
    for key, value in kwargs.items():
        setattr(store, key, value)
    return store


def orders_in(path: Path) -> dict[str, dict]:
    return {o["order_id"]: o for o in json.loads(path.read_text(encoding="utf-8"))["orders"]}


def test_cancel_changes_only_that_order_and_records_who_did_it(orders_file):
    before = orders_in(orders_file)
    store = load(orders_file)
    result = store.cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001")
    assert result == {
        "order_id": "ORD-1002",
        "status": "已取消",
        "cancelled_at": "2026-11-30T12:00:00Z",
        "reason": "不想要了",
    }
    after = orders_in(orders_file)
    assert after["ORD-1002"] == {
        **before["ORD-1002"],
        "status": "已取消",
        "updated_at": "2026-11-30T12:00:00Z",
        "cancelled_at": "2026-11-30T12:00:00Z",
        "cancel_reason": "不想要了",
        "cancelled_by": "run-1/call_1",
    }
    assert {k: v for k, v in after.items() if k != "ORD-1002"} == {k: v for k, v in before.items() if k != "ORD-1002"}
    assert store.get("ORD-1002").status == "已取消"  # the in-memory view follows the file
    assert JsonStore.load(orders_file).get("ORD-1002").cancelled_by == "run-1/call_1"  # still loads
    assert Path(lock_path(orders_file)).parent == orders_file.parent
    assert not list(orders_file.parent.glob(".orders.json.*.tmp"))


def test_the_same_call_twice_writes_once_and_answers_the_same(orders_file):
    store = load(orders_file)
    first = store.cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001")
    written, inode = orders_file.read_bytes(), orders_file.stat().st_ino
    again = load(orders_file).cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001")  # e.g. a second resume
    assert again == first
    assert orders_file.read_bytes() == written
    assert orders_file.stat().st_ino == inode  # not even rewritten with the same bytes


def test_another_call_on_a_cancelled_order_is_not_cancellable(orders_file):
    load(orders_file).cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001")
    with pytest.raises(ToolError) as raised:
        load(orders_file).cancel("ORD-1002", "再取消一次", "run-2/call_1", user="C001")
    assert raised.value.code == "not_cancellable"


@pytest.mark.parametrize("order_id, user", [("ORD-1002", "C002"), ("ORD-9999", "C001"), ("ORD-1002", None)])
def test_the_store_itself_refuses_orders_that_are_not_the_users(orders_file, order_id, user):
    before = orders_file.read_bytes()
    with pytest.raises(ToolError) as raised:
        load(orders_file).cancel(order_id, "x", "run-1/call_1", user=user)
    assert raised.value.code == "no_access"
    assert orders_file.read_bytes() == before


def test_the_file_is_read_again_under_the_lock(orders_file):
    # Two stores loaded before either writes: each must start from the file as it is now.
    first, second = load(orders_file), load(orders_file)
    first.cancel("ORD-1002", "a", "run-a/call_1", user="C001")
    second.cancel("ORD-1004", "b", "run-b/call_1", user="C002")
    after = orders_in(orders_file)
    assert after["ORD-1002"]["status"] == after["ORD-1004"]["status"] == "已取消"


def _cancel_after_barrier(path: str, order_id: str, user: str, barrier, results) -> None:
    store = JsonStore.load(Path(path))  # both processes hold a stale copy before either writes
    barrier.wait(timeout=60)
    results.put(store.cancel(order_id, "并发", f"run-{order_id}/call_1", user=user)["order_id"])


def test_two_processes_cancelling_different_orders_both_land(orders_file):
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(2), context.Queue()
    workers = [
        context.Process(target=_cancel_after_barrier, args=(str(orders_file), oid, user, barrier, results))
        for oid, user in (("ORD-1002", "C001"), ("ORD-1008", "C002"))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert sorted(results.get(timeout=5) for _ in workers) == ["ORD-1002", "ORD-1008"]
    after = orders_in(orders_file)
    assert after["ORD-1002"]["status"] == after["ORD-1008"]["status"] == "已取消"
    assert JsonStore.load(orders_file).get("ORD-1004").status == "待付款"  # the rest untouched


def _crash_before_replace(path: str) -> None:
    def killed(*args, **kwargs):  # the power goes out after the temp file is written
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = killed
    JsonStore.load(Path(path)).cancel("ORD-1002", "x", "run-1/call_1", user="C001")


def test_a_crash_mid_write_leaves_the_previous_file_intact(orders_file):
    before = orders_file.read_bytes()
    child = multiprocessing.get_context("fork").Process(target=_crash_before_replace, args=(str(orders_file),))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == -signal.SIGKILL
    assert orders_file.read_bytes() == before
    [temp] = orders_file.parent.glob(".orders.json.*.tmp")  # it died after writing the new copy ...
    assert json.loads(temp.read_text(encoding="utf-8"))["orders"][1]["status"] == "已取消"  # ... but never renamed it
    # The lock died with the process: the next writer is not blocked.
    load(orders_file, lock_timeout=5).cancel("ORD-1002", "x", "run-2/call_1", user="C001")
    assert orders_in(orders_file)["ORD-1002"]["status"] == "已取消"
    assert not temp.exists()  # and the next writer cleared what the dead one left behind


def test_a_failed_write_leaves_file_memory_and_folder_as_they_were(orders_file, monkeypatch):
    before = orders_file.read_bytes()
    store = load(orders_file)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(ToolError) as raised:
        store.cancel("ORD-1002", "x", "run-1/call_1", user="C001")
    assert raised.value.code == "write_failed"
    assert str(orders_file.parent) not in str(raised.value)
    assert orders_file.read_bytes() == before
    assert store.get("ORD-1002").status == "处理中"
    assert not list(orders_file.parent.glob(".orders.json.*.tmp"))


def test_a_held_lock_makes_the_cancel_busy_not_lost(orders_file):
    before = orders_file.read_bytes()
    with FileLock(lock_path(orders_file)), pytest.raises(ToolError) as raised:
        load(orders_file, lock_timeout=0.05).cancel("ORD-1002", "x", "run-1/call_1", user="C001")
    assert raised.value.code == "busy"
    assert orders_file.read_bytes() == before


def test_the_bundled_sample_is_never_written():
    before = SAMPLE_PATH.read_bytes()
    store = JsonStore.load(SAMPLE_PATH, writable=True)
    assert store.writable is False
    with pytest.raises(ToolError) as raised:
        store.cancel("ORD-1002", "x", "run-1/call_1", user="C001")
    assert raised.value.code == "read_only" and "--orders" in str(raised.value)
    assert SAMPLE_PATH.read_bytes() == before


def test_a_file_broken_by_someone_else_is_not_overwritten(orders_file):
    store = load(orders_file)
    orders_file.write_text('{"orders": [', encoding="utf-8")
    with pytest.raises(ToolError) as raised:
        store.cancel("ORD-1002", "x", "run-1/call_1", user="C001")
    assert raised.value.code == "store_unavailable"
    assert orders_file.read_text(encoding="utf-8") == '{"orders": ['
