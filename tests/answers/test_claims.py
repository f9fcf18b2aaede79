"""Facts and the claim check, over call records the real engine made with scripted models."""

from __future__ import annotations

import pytest

from orderbot.answers.claims import Claim
from orderbot.answers.facts import facts_of
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.engine import Engine, Limits
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import result_of
from orderbot.shops.sample.shop import VOCABULARY
from orderbot.ui.facts import claim_words, fact_line
from orderbot.ui.render import format_claim, format_facts


def run(toolbox, answer: str, *tool_calls, user: str | None = "C001", approver=None) -> RunState:
    turns = [calls(*tool_calls)] if tool_calls else []
    model = ScriptedModel([*turns, text(answer)])
    engine = Engine(model, toolbox, Limits(max_steps=5), approver=approver)
    return engine.run(RunState.start("question", user=user))


def status(order_id: str):
    return call("get_order_status", {"order_id": order_id})


def details(order_id: str):
    return call("get_order_details", {"order_id": order_id})


def cancel(order_id: str):
    return call("cancel_order", {"order_id": order_id, "reason": "不要了"})


def kinds(state: RunState) -> list[tuple[str, str, str, str | None]]:
    return [(c.kind, c.order_id, c.said, c.observed) for c in result_of(state, VOCABULARY).claims]


# ---- facts ------------------------------------------------------------------------------


def test_facts_one_line_per_order_touched(toolbox):
    state = run(toolbox, "ok", status("ORD-1001"), status("ORD-9999"), details("ORD-1003"))
    lines = [fact_line(f, "en") for f in facts_of(state, VOCABULARY)]
    assert lines == ["ORD-1001 · 已发货", "ORD-9999 · not found", "ORD-1003 · no access"]


def test_a_fact_line_says_the_catalogues_words_in_english_or_in_the_language_asked(toolbox, monkeypatch):
    """The facts panel says the catalogue's words in the language asked; --json keeps the
    values and codes they are said from, whatever the words."""
    monkeypatch.setitem(MESSAGES, "facts.not_found", {**MESSAGES["facts.not_found"], "en": "EN not found"})
    (fact,) = facts_of(run(toolbox, "ok", status("ORD-9999")), VOCABULARY)
    assert fact_line(fact, "en") == "ORD-9999 · EN not found"
    assert fact_line(fact, "zh") == "ORD-9999 · 不存在"
    assert fact.as_dict() == {"order_id": "ORD-9999", "status": "不存在", "fields": {}, "outcomes": [], "actions": []}


def test_details_fact_shows_the_fields_returned(toolbox):
    state = run(toolbox, "ok", details("ORD-1001"))
    (fact,) = facts_of(state, VOCABULARY)
    assert fact.fields["items"] == "西湖龙井 250g ×1, 玻璃茶杯 ×2"
    assert fact.fields["total"] == "¥227.00"
    assert fact.fields["shipping"] == "顺丰速运 SF1234567890123 杭州"
    assert fact_line(fact, "en").startswith("ORD-1001 · 已发货 · items: ")


def test_refused_cancel_names_the_status_it_has(toolbox):
    state = run(toolbox, "ok", cancel("ORD-1001"))
    assert [fact_line(f, "en") for f in facts_of(state, VOCABULARY)] == ["ORD-1001 · 已发货 · not cancellable: 已发货"]


def test_a_cancel_waiting_for_approval_and_one_listing(toolbox):
    model = ScriptedModel([calls(call("list_my_orders", {}), cancel("ORD-1002"))])
    state = Engine(model, toolbox, Limits()).run(RunState.start("q", user="C001"))
    lines = [fact_line(f, "en") for f in facts_of(state, VOCABULARY)]
    assert "ORD-1002 · 处理中 · cancel awaiting approval" in lines
    assert "ORD-1013 · 待付款" in lines and len(lines) == 5


def test_facts_hold_order_data_as_it_is_and_the_views_show_it_escaped(toolbox, store):
    """Facts are values (answers sits below ui): the escaping is the views' (orderbot.ui.escape)."""
    import dataclasses

    store.orders["ORD-1002"] = dataclasses.replace(store.orders["ORD-1002"], note="line one\n\x1b[31mred\u202e")
    state = run(toolbox, "ok", details("ORD-1002"))
    fact = facts_of(state, VOCABULARY)[0]
    assert fact.fields["note"] == "line one\n\x1b[31mred\u202e"  # a value as the store holds it
    assert format_facts([fact])[0].endswith("note: line one\\n\\x1b[31mred\\u202e")  # shown as escapes, never raw
    claim = Claim("status", "ORD-1002", "已发货", "处理中\n\x1b[2J")
    assert "处理中\\n\\x1b[2J" in format_claim(claim) and "\x1b" not in format_claim(claim)


# ---- correct answers give no claims ----------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "tool_calls"),
    [
        ("订单 ORD-1001 的状态是：已发货。", [status("ORD-1001")]),
        ("Order ORD-1001 is shipped (已发货).", [status("ORD-1001")]),
        ("没有找到订单 ORD-9999。", [status("ORD-9999")]),
        ("Order ORD-9999 was not found.", [status("ORD-9999")]),
        ("Order ORD-9999 does not exist.", [status("ORD-9999")]),
        (
            "订单 ORD-1001 当前状态不能取消：order ORD-1001 is 已发货; only 处理中 or 待付款 can be cancelled",
            [cancel("ORD-1001")],
        ),
        ("Order ORD-1005 was cancelled (已取消) before.", [status("ORD-1005")]),
        (
            "Your orders:\nORD-1013: awaiting payment\nORD-1002: processing\nORD-1010: refund in progress",
            [call("list_my_orders", {})],
        ),
        ("订单 ORD-1001：已发货，西湖龙井 250g ×1，SKU-TEA-01，合计 ¥227.00。", [details("ORD-1001")]),
        ("Order ORD-1003 is not among your orders.", [details("ORD-1003")]),
        ("Which order do you mean? Please give the order id.", []),
        ("订单 ORD-1002 没有取消：只读示例数据。", [status("ORD-1002")]),
        ("Order ORD-1002 was not cancelled: it is still processing.", [status("ORD-1002")]),
    ],
)
def test_a_correct_answer_gives_no_claims(toolbox, answer, tool_calls):
    assert kinds(run(toolbox, answer, *tool_calls)) == []


def test_a_cancellation_that_executed_may_be_claimed(toolbox, orders_file):
    state = run(toolbox, "订单 ORD-1002 已取消。", cancel("ORD-1002"), approver=lambda pending: True)
    assert fact_line(facts_of(state, VOCABULARY)[0], "en") == "ORD-1002 · 已取消 · cancelled in this run"
    assert kinds(state) == []
    state = run(toolbox, "Order ORD-1004 has been cancelled.", cancel("ORD-1004"), user="C002", approver=lambda p: True)
    assert kinds(state) == []


# ---- each kind of claim, in both languages ---------------------------------------------


def test_a_status_claimed_for_an_order_that_does_not_exist(toolbox):
    state = run(toolbox, "ORD-9999 的状态是已发货", status("ORD-9999"))
    assert kinds(state) == [("status", "ORD-9999", "已发货", "不存在")]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("ORD-9999 的结果是 ok", ("nonexistent_id", "ORD-9999", "ORD-9999", "不存在")),
        ("ORD-9999 is fine.", ("nonexistent_id", "ORD-9999", "ORD-9999", "不存在")),
        ("Order ORD-9999 is shipped.", ("status", "ORD-9999", "shipped", "不存在")),
    ],
)
def test_a_missing_order_spoken_of_as_real(toolbox, answer, expected):
    assert kinds(run(toolbox, answer, status("ORD-9999"))) == [expected]


@pytest.mark.parametrize(
    "answer",
    ["订单 ORD-1001 已发货，另见 MB-44。", "Order ORD-1001 is shipped; see also MB-44."],
)
def test_an_id_from_nowhere(toolbox, answer):
    assert kinds(run(toolbox, answer, status("ORD-1001"))) == [("unknown_id", "MB-44", "MB-44", None)]


@pytest.mark.parametrize("answer", ["订单 ORD-1001 的状态是已发货。", "Order ORD-1001 has shipped."])
def test_an_order_no_tool_was_asked_about(toolbox, answer):
    assert kinds(run(toolbox, answer)) == [("unknown_id", "ORD-1001", "ORD-1001", None)]


@pytest.mark.parametrize(
    ("answer", "said"),
    [("订单 ORD-1002 的状态是：已发货。", "已发货"), ("Order ORD-1002 is delivered.", "delivered")],
)
def test_a_status_the_tool_did_not_return(toolbox, answer, said):
    assert kinds(run(toolbox, answer, status("ORD-1002"))) == [("status", "ORD-1002", said, "处理中")]


@pytest.mark.parametrize("answer", ["订单 ORD-1003 的状态是已签收。", "Order ORD-1003 was delivered."])
def test_a_status_for_an_order_the_user_may_not_see(toolbox, answer):
    said = "已签收" if "已签收" in answer else "delivered"
    state = run(toolbox, answer, details("ORD-1003"))
    assert kinds(state) == [("status", "ORD-1003", said, None)]  # the tools returned no status for it
    result = result_of(state, VOCABULARY)
    assert claim_words(result.claims[0], result.facts[0], "en").endswith("but the tools returned no access")


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("好的，订单 ORD-1001 已为你取消。", "已为你取消"),
        ("Done: order ORD-1001 has been cancelled.", "has been cancelled"),
    ],
)
def test_a_cancellation_that_was_refused(toolbox, answer, said):
    assert kinds(run(toolbox, answer, cancel("ORD-1001"))) == [("cancellation", "ORD-1001", said, "已发货")]


@pytest.mark.parametrize("answer", ["订单 ORD-1002 已取消。", "I cancelled ORD-1002 for you."])
def test_a_cancellation_the_person_rejected(toolbox, answer):
    state = run(toolbox, answer, cancel("ORD-1002"), approver=lambda pending: False)
    (claim,) = result_of(state, VOCABULARY).claims
    assert (claim.kind, claim.order_id, claim.observed) == ("cancellation", "ORD-1002", None)
    fact = result_of(state, VOCABULARY).facts[0]
    assert claim_words(claim, fact, "en").endswith("(cancel rejected: nothing was done)")


def test_a_cancellation_never_attempted(toolbox):
    state = run(toolbox, "Order ORD-1002 has been cancelled.", status("ORD-1002"))
    assert kinds(state) == [("cancellation", "ORD-1002", "has been cancelled", "处理中")]
