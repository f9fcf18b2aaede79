"""The claim check reads answers that name no id, and statuses written before the id
(orderbot.answers.claims). A real small model (Gemma 3 270M) answered `未发货。` for
ORD-1001, which is 已发货, and the check passed it because it only read what follows an id."""

from __future__ import annotations

import pytest
from clikit import cli

from orderbot.loop.engine import Engine, Limits
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import result_of
from orderbot.shops.sample.shop import VOCABULARY


def claims(toolbox, answer: str, *looked_at: tuple[str, str]) -> list[tuple[str, str, str, str | None]]:
    model = ScriptedModel([calls(*(call(name, {"order_id": oid}) for name, oid in looked_at)), text(answer)])
    state = Engine(model, toolbox, Limits(max_steps=5)).run(RunState.start("question", user="C001"))
    return [(c.kind, c.order_id, c.said, c.observed) for c in result_of(state, VOCABULARY).claims]


STATUS_1001 = ("get_order_status", "ORD-1001")  # 已发货
DETAILS_1001 = ("get_order_details", "ORD-1001")  # 已发货, ¥227.00: 168.00 ×1 and 29.50 ×2
STATUS_1002 = ("get_order_status", "ORD-1002")  # 处理中


@pytest.mark.parametrize(
    "answer, looked_at, said",
    [
        ("未发货。", [STATUS_1001], "未发货"),  # the answer the small model gave
        ("您的订单还没有发货，请耐心等待。", [STATUS_1001], "还没有发货"),
        ("It has not shipped yet.", [STATUS_1001], "not shipped"),
        ("It hasn't been shipped.", [STATUS_1001], "n't been shipped"),
        ("处理中。", [STATUS_1001], "处理中"),
        ("The order is processing.", [STATUS_1001], "processing"),
        ("已发货。", [STATUS_1002], "已发货"),
        ("已发货的订单 ORD-1002 预计明天送达。", [STATUS_1002], "已发货"),  # the status before the id
        ("The shipped order ORD-1002 arrives tomorrow.", [STATUS_1002], "shipped"),
        ("ORD-1001 未发货。", [STATUS_1001], "未发货"),  # a negated status after the id is a claim too
    ],
)
def test_a_status_that_contradicts_the_one_order_is_a_claim(toolbox, answer, looked_at, said):
    found = claims(toolbox, answer, *looked_at)
    assert [(kind, said_) for kind, _, said_, _ in found] == [("status", said)], found
    observed = "已发货" if looked_at == [STATUS_1001] else "处理中"
    assert found[0][1] == looked_at[0][1] and found[0][3] == observed


@pytest.mark.parametrize(
    "answer, said",
    [("总价 ¥199.00。", "¥199.00"), ("一共 300 元。", "300 元"), ("ORD-1001 的总价是 ¥99.00。", "¥99.00")],
)
def test_an_amount_the_details_did_not_hold_is_a_claim(toolbox, answer, said):
    assert claims(toolbox, answer, DETAILS_1001) == [("amount", "ORD-1001", said, "¥227.00")]


@pytest.mark.parametrize(
    "answer, looked_at",
    [
        ("已发货。", [STATUS_1001]),
        ("您的订单已经发货了，还没有签收。", [STATUS_1001]),  # not yet delivered: true of a shipped order
        ("该订单无法取消：只有待付款或处理中的订单才能取消。", [STATUS_1001]),  # a rule, not a status
        ("Only orders that are processing can be cancelled.", [STATUS_1001]),
        ("未发货。", [STATUS_1001, STATUS_1002]),  # two orders looked at: which one is meant is not known
        ("处理中。", [STATUS_1002]),
        ("总价 ¥227.00，西湖龙井 ¥168.00，两个玻璃茶杯共 59 元。", [DETAILS_1001]),
        ("请提供订单号。", [STATUS_1001]),
        ("已发货的订单 ORD-1001 预计明天送达。", [STATUS_1001]),
    ],
)
def test_what_agrees_with_the_order_or_says_nothing_about_it_is_no_claim(toolbox, answer, looked_at):
    assert claims(toolbox, answer, *looked_at) == []


def test_strict_claims_exits_7_for_the_small_models_answer(use_model, orders_file):
    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("未发货。")]))
    args = ["ask", "--provider", "scripted", "--orders", str(orders_file), "--strict-claims", "ORD-1001 发货了吗"]
    result = cli(*args)
    assert result.exit_code == 7, result.output
    assert "未发货" in result.output and "已发货" in result.output
