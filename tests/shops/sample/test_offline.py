"""The sample shop's offline planner: the right calls for the question, answers in the user's language."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from orderbot.answers.claims import check
from orderbot.answers.facts import facts_of
from orderbot.cli import app
from orderbot.loop.conversation import Conversation
from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.state import RunState
from orderbot.shops.sample.offline import OfflineModel
from orderbot.shops.sample.shop import VOCABULARY


def ask(toolbox, question: str, user: str | None = None, **limits) -> RunState:
    return Engine(OfflineModel(), toolbox, Limits(**limits)).run(RunState.start(question, user=user))


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


# ---- what people type -----------------------------------------------------------------------


def conversation(toolbox, *questions: str, user: str | None = "C001") -> list[RunState]:
    """Each question a run of its own, the earlier turns carried as the REPL carries them."""
    talk, states = Conversation(), []
    for question in questions:
        history = talk.history()
        state = Engine(OfflineModel(), toolbox, Limits()).run(RunState.start(question, user=user, history=history))
        talk.add(state.items[len(history) :])
        states.append(state)
    return states


def called(state: RunState) -> list[tuple[str, str | None]]:
    return [(c.name, json.loads(c.arguments).get("order_id")) for c in state.calls]


def unsupported_claims(state: RunState) -> list:
    return check(state.answer, facts_of(state, VOCABULARY), state.calls, vocabulary=VOCABULARY)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("hello", "Hello!"),
        ("Hi there!", "Hello!"),
        ("thanks", "You're welcome!"),
        ("Thank you so much!", "You're welcome!"),
        ("你好", "你好！"),
        ("What can you do?", "Hello! I can look up"),
        ("谢谢", "不客气！"),
        ("好的，谢谢你！", "不客气！"),
        ("再见", "再见！"),
    ],
)
def test_greetings_and_thanks_get_a_short_reply_in_their_language_and_no_call(toolbox, question, reply):
    state = ask(toolbox, question)
    assert state.stop_reason is StopReason.ANSWERED and state.calls == [] and state.steps == 1
    assert state.answer.startswith(reply)
    assert "Which order" not in state.answer and "请提供" not in state.answer


def test_a_greeting_with_a_question_in_it_is_answered_as_the_question(toolbox):
    assert called(ask(toolbox, "hi, what is the status of ORD-1001?")) == [("get_order_status", "ORD-1001")]
    assert "请提供要查询的订单号" in ask(toolbox, "你好，我的快递到哪了？").answer


@pytest.mark.parametrize(
    "question",
    ["ORD1001 status?", "ord-1001 status?", "what about ord1001", "1001 的状态", "订单 1001 到哪了", "order #1001?"],
)
def test_an_order_id_as_people_type_it_reads_as_the_stores(toolbox, question):
    state = ask(toolbox, question, user="C001")
    assert {order for _, order in called(state)} == {"ORD-1001"}
    assert "ORD-1001" in state.answer


@pytest.mark.parametrize(
    "question",
    [
        "我付了 1299 元",  # money
        "paid 1299 yesterday",
        "¥1001 的订单",
        "2026 年的订单状态",  # a year
        "what happened in 2026?",
        "买了 1001 个杯子",  # a quantity
        "1001 和 1002 的状态",  # two numbers: which?
        "SF1234567890123 到哪了",  # a tracking number, not an order's
        "status of 1,299.50",
        "ORDER status?",
    ],
)
def test_a_number_that_may_be_something_else_names_no_order(toolbox, question):
    state = ask(toolbox, question)
    assert state.calls == [] and ("订单号" in state.answer or "order id" in state.answer)


def test_a_year_right_after_an_order_word_is_an_order_number(toolbox):
    assert called(ask(toolbox, "订单 2026 的状态")) == [("get_order_status", "ORD-2026")]


@pytest.mark.parametrize(
    ("question", "refusal"),
    [
        ("cancel all my orders", "I did not cancel anything: orderbot cancels one order at a time"),
        ("取消我所有的订单", "我没有取消任何订单：一次只能取消一个订单"),
        ("把它们都取消", "我没有取消任何订单"),
    ],
)
def test_cancelling_all_orders_cancels_none_and_says_why(toolbox, store, question, refusal):
    state = ask(toolbox, question, user="C001")
    assert state.stop_reason is StopReason.ANSWERED and not state.pending
    assert called(state) == [("list_my_orders", None)]  # the orders, to choose from: no cancellation
    assert state.answer.startswith(refusal)
    assert "approval" in state.answer or "确认" in state.answer
    assert "ORD-1002" in state.answer  # the listing follows
    assert unsupported_claims(state) == []
    assert store.get("ORD-1002").status == "处理中"


def test_it_with_a_word_for_all_is_still_the_one_order(toolbox):
    _, then = conversation(toolbox, "查询 ORD-1002", "取消它吧，都等一周了")
    assert then.stop_reason is StopReason.AWAITING_APPROVAL
    assert [json.loads(p.arguments)["order_id"] for p in then.pending] == ["ORD-1002"]


def test_cancelling_all_orders_signed_out_says_why_too(toolbox):
    state = ask(toolbox, "cancel all my orders")
    assert [c.name for c in state.calls] == ["list_my_orders"]
    assert state.answer.startswith("I did not cancel anything") and "--user" in state.answer


@pytest.mark.parametrize("follow_up", ["and its details?", "show me its details", "详细信息呢？"])
def test_a_follow_up_fetches_the_details_of_the_order_last_talked_about(toolbox, follow_up):
    first, then = conversation(toolbox, "What is the status of ORD-1002?", follow_up)
    assert called(then) == [("get_order_details", "ORD-1002")]
    assert "帆布托特包" in then.answer and "¥199.00" in then.answer
    assert unsupported_claims(then) == []


def test_a_follow_up_after_small_talk_still_finds_the_order(toolbox):
    *_, then = conversation(toolbox, "查询 ORD1001", "谢谢", "详细信息呢？")
    assert called(then) == [("get_order_details", "ORD-1001")]


def test_where_is_it_answers_with_the_carrier_and_the_city(toolbox):
    _, shipped = conversation(toolbox, "查询 ORD-1001", "它到哪了")
    assert called(shipped) == [("get_order_status", "ORD-1001"), ("get_order_details", "ORD-1001")]
    assert shipped.answer.startswith(
        "订单 ORD-1001 的状态是：已发货，由顺丰速运承运，运单号 SF1234567890123，收货城市：杭州。"
    )
    assert unsupported_claims(shipped) == []
    _, packing = conversation(toolbox, "查询 ORD-1002", "它到哪了")
    assert packing.answer == "订单 ORD-1002 的状态是：处理中，还没有承运信息，收货城市：杭州。"
    _, english = conversation(toolbox, "status of ORD-1001?", "where is it?")
    assert english.answer.startswith(
        "Order ORD-1001 is shipped (已发货), carried by 顺丰速运 (tracking number SF1234567890123);"
        " destination city: 杭州."
    )


def test_where_is_an_order_asks_its_status_first(toolbox):
    unknown = ask(toolbox, "Where is ORD-4040?", user="C001")
    assert called(unknown) == [("get_order_status", "ORD-4040")] and "was not found" in unknown.answer
    signed_out = ask(toolbox, "ORD-1001 到哪了？")  # anyone may see the status; the carrier needs a sign-in
    assert [c.name for c in signed_out.calls] == ["get_order_status", "get_order_details"]
    assert signed_out.answer.startswith("订单 ORD-1001 的状态是：已发货。") and "--user" in signed_out.answer


def test_a_follow_up_with_nothing_before_it_asks_for_the_order(toolbox):
    for question in ("详细信息呢？", "and its details?", "它到哪了"):
        state = ask(toolbox, question)
        assert state.calls == [] and ("订单号" in state.answer or "order id" in state.answer)


# ---- the same from the command line ---------------------------------------------------------


def test_the_command_line_answers_greetings_ids_and_follow_ups():
    def ask_cli(*args: str) -> dict:
        result = CliRunner().invoke(app, ["ask", "-u", "C001", "-j", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    hello = ask_cli("hello")
    assert hello["calls"] == [] and hello["answer"].startswith("Hello!")
    assert ask_cli("谢谢")["answer"].startswith("不客气")
    status = ask_cli("1001 的状态")
    assert [json.loads(c["arguments"]) for c in status["calls"]] == [{"order_id": "ORD-1001"}]
    where = ask_cli("-c", "它到哪了")
    assert [c["name"] for c in where["calls"]] == ["get_order_status", "get_order_details"]
    assert "顺丰速运" in where["answer"] and "杭州" in where["answer"] and where["claims"] == []
    details = ask_cli("-c", "and its details?")
    assert json.loads(details["calls"][0]["arguments"]) == {"order_id": "ORD-1001"} and "¥227.00" in details["answer"]
    everything = ask_cli("cancel all my orders")
    assert [c["name"] for c in everything["calls"]] == ["list_my_orders"]
    assert everything["stop_reason"] == "answered" and everything["answer"].startswith("I did not cancel anything")
