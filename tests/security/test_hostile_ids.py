"""The three stores answer a hostile order id alike (a NUL, a control, a look-alike of a real
id): as an order that does not exist, without a database error. What an id may be is one
rule (orderbot.shops.sample.model.ORDER_ID_PATTERN) that every store applies before it
asks its database."""

from __future__ import annotations

import json

import pytest
from clikit import cli

from orderbot.errors import ToolError
from orderbot.loop.dispatch import Refused, Toolbox
from orderbot.loop.items import FunctionCall
from orderbot.loop.tools import ToolContext
from orderbot.shops.sample.tools import order_tools

HOSTILE_IDS = [
    "ORD-1001\x00",  # PostgreSQL refused it with a raw DataError; the JSON store said 不存在
    "ORD-1\x0001",
    "ORD-1001\x1b[2J",
    "ORD-1\u041e01",  # a Cyrillic О for the digit 0
    "ORD-\uff11\uff10\uff10\uff11",  # fullwidth １００１
    "ORD-1001\u200b",  # a zero-width space
    "ORD-1001\u202e",
    "ORD-1001 ",
]
HOSTILE_CUSTOMERS = ["C001\x00", "С001", "C001\x1b", "C\uff10\uff10\uff11"]  # the second is a Cyrillic С


@pytest.mark.parametrize("order_id", HOSTILE_IDS)
def test_a_store_answers_a_hostile_id_as_no_such_order(shop, order_id):
    store = shop.open()
    assert store.get(order_id) is None
    with pytest.raises(ToolError) as refused:
        store.cancel(order_id, "不想要了", "run-1/call_1", user="C001")
    assert refused.value.code == "no_access"  # the same refusal as for an order that does not exist


@pytest.mark.parametrize("customer", HOSTILE_CUSTOMERS)
def test_a_hostile_customer_or_status_lists_nothing(shop, customer):
    store = shop.open()
    assert store.list_orders(customer, limit=10) == []
    assert store.list_orders(None, status="已发货\x00", limit=10) == []
    with pytest.raises(ToolError) as refused:
        store.cancel("ORD-1002", "不想要了", "run-1/call_1", user=customer)
    assert refused.value.code == "no_access"
    assert shop.status("ORD-1002") == "处理中"


def test_the_tools_give_the_model_the_same_answer_on_every_store(shop):
    toolbox = Toolbox(order_tools(shop.open()))
    ctx = ToolContext(user="C001", run_id="run-test")
    answers = []
    for order_id in HOSTILE_IDS:
        for name in ("get_order_status", "get_order_details"):
            call = FunctionCall(call_id="call_1", name=name, arguments=json.dumps({"order_id": order_id}))
            prepared = toolbox.prepare(call, ctx)
            result = prepared.envelope if isinstance(prepared, Refused) else toolbox.execute(prepared, ctx)
            answers.append(result)
    statuses = [a["data"]["status"] for a in answers[0::2]]
    assert statuses == ["不存在"] * len(HOSTILE_IDS), answers
    assert {a.get("code") for a in answers[1::2]} == {"no_access"}, answers


@pytest.mark.parametrize("order_id", HOSTILE_IDS[:5])
def test_orders_show_answers_alike_on_every_store(shop, order_id):
    result = cli("orders", "show", order_id, "--orders", shop.source, "--json")
    assert result.exit_code == 1, result.output  # not found
    assert json.loads(result.stdout)["status"] == "不存在"
    assert "Traceback" not in result.output


def test_a_call_id_no_store_could_write_still_cancels_once(shop):
    """The model chooses call ids; the cancellation key is made of one, so a NUL in it must
    not make a store fail (PostgreSQL) where another succeeds."""
    toolbox = Toolbox(order_tools(shop.open()))
    ctx = ToolContext(user="C001", run_id="run-test", call_id="call\x00\x1b" + "x" * 5000)
    arguments = '{"order_id": "ORD-1002", "reason": "不要了"}'
    call = FunctionCall(call_id=ctx.call_id, name="cancel_order", arguments=arguments)
    prepared = toolbox.prepare(call, ctx)
    assert not isinstance(prepared, Refused), prepared
    first = toolbox.execute(prepared, ctx)
    assert first["ok"] is True, first
    assert toolbox.execute(prepared, ctx) == first  # the repeat of the same call: the same answer
    order = shop.open().get("ORD-1002")
    assert order.status == "已取消" and "\x00" not in order.cancelled_by and len(order.cancelled_by) < 100
