"""The offline planner: the right calls for the question, answers in the user's language."""

from __future__ import annotations

import json

from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.state import RunState
from orderbot.models.offline import OfflineModel


def ask(toolbox, question: str, **limits) -> RunState:
    return Engine(OfflineModel(), toolbox, Limits(**limits)).run(RunState.start(question))


def test_chinese_question_gets_a_chinese_answer(toolbox):
    state = ask(toolbox, "请查询订单 ORD-1001 的状态。")
    assert state.stop_reason is StopReason.ANSWERED
    assert "已发货" in state.answer and "订单 ORD-1001" in state.answer
    assert state.steps == 2 and state.tool_calls == 1


def test_two_ids_give_two_calls_in_one_step(toolbox):
    state = ask(toolbox, "查询 ORD-1001 和 ORD-1002")
    assert [(c.step, c.name, json.loads(c.arguments)["order_id"]) for c in state.calls] == [
        (1, "get_order_status", "ORD-1001"),
        (1, "get_order_status", "ORD-1002"),
    ]
    assert "已发货" in state.answer and "处理中" in state.answer


def test_english_question_gets_an_english_answer(toolbox):
    state = ask(toolbox, "What is the status of order ORD-1003?")
    assert state.answer.startswith("Order ORD-1003 is delivered")


def test_unknown_order_is_explained(toolbox):
    assert "没有找到订单 ORD-9999" in ask(toolbox, "查询 ORD-9999").answer
    assert "was not found" in ask(toolbox, "Where is ORD-9999?").answer


def test_tool_error_is_explained_in_plain_words(toolbox):
    state = ask(toolbox, "查询 ORD-" + "1" * 40)
    assert state.calls[0].result["code"] == "invalid_arguments"
    assert "无效" in state.answer


def test_no_id_asks_for_one_without_calling_tools(toolbox):
    state = ask(toolbox, "我的快递到哪了？")
    assert state.calls == [] and state.steps == 1
    assert "订单号" in state.answer
    assert "order id" in ask(toolbox, "Where is my parcel?").answer
