"""The store interface, the same on every store: lookups, listing with paging, and
cancel as compare-and-set."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from orderbot.errors import ToolError
from orderbot.shops.sample.model import ORDER
from orderbot.shops.sample.stores.jsonfile import JsonStore

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_every_store_holds_the_same_orders(shop, orders_file):
    reference = JsonStore.load(orders_file)
    store = shop.open()
    assert store.count() == len(reference) == 14
    for order_id, order in reference.orders.items():
        assert store.get(order_id) == order  # the same values, field for field
    assert store.get("ORD-9999") is None


def test_listing_is_newest_first_with_paging_and_a_status_filter(shop, orders_file):
    reference = JsonStore.load(orders_file)
    store = shop.open()
    everyone = store.list_orders(None, limit=100)
    assert [o.order_id for o in everyone] == [o.order_id for o in reference.list_orders(None, limit=100)]
    assert [o.created_at for o in everyone] == sorted((o.created_at for o in everyone), reverse=True)
    mine = store.list_orders("C001", limit=100)
    assert mine and {o.customer_id for o in mine} == {"C001"}
    assert store.list_orders("C001", limit=2) + store.list_orders("C001", limit=100, offset=2) == mine
    waiting = store.list_orders(None, status="待付款", limit=100)
    assert waiting and {o.status for o in waiting} == {"待付款"}


def test_cancel_is_compare_and_set_and_a_repeat_of_the_same_call_answers_the_same(shop):
    store = shop.open()
    store.now = lambda: NOW
    first = store.cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001")
    assert first == {
        "order_id": "ORD-1002",
        "status": "已取消",
        "cancelled_at": "2026-11-30T12:00:00Z",
        "reason": "不想要了",
    }
    later = shop.open()
    later.now = lambda: datetime(2027, 1, 1, tzinfo=UTC)
    assert later.cancel("ORD-1002", "不想要了", "run-1/call_1", user="C001") == first  # nothing written again
    with pytest.raises(ToolError) as raised:
        later.cancel("ORD-1002", "再来一次", "run-2/call_1", user="C001")
    assert raised.value.code == "not_cancellable"
    order = shop.open().get("ORD-1002")
    assert (order.status, order.cancelled_by, order.cancel_reason) == ("已取消", "run-1/call_1", "不想要了")
    assert ORDER.dump_python(order, mode="json")["updated_at"] == "2026-11-30T12:00:00Z"


@pytest.mark.parametrize("order_id, user", [("ORD-1002", "C002"), ("ORD-9999", "C001"), ("ORD-1002", None)])
def test_the_store_itself_refuses_orders_that_are_not_the_users(shop, order_id, user):
    before = shop.snapshot()
    with pytest.raises(ToolError) as raised:
        shop.open().cancel(order_id, "x", "run-1/call_1", user=user)
    assert raised.value.code == "no_access"
    assert shop.snapshot() == before


def test_an_order_past_cancelling_is_refused_and_left_alone(shop):
    before = shop.snapshot()
    with pytest.raises(ToolError) as raised:
        shop.open().cancel("ORD-1001", "x", "run-1/call_1", user="C001")
    assert raised.value.code == "not_cancellable"
    assert shop.snapshot() == before
