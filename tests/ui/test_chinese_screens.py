"""Chinese screens are Chinese, where orderbot says something: the last row's event, a time
limit's cause, the results gathered before a stop, and an approval waiting in the queue,
said in the reader's language whoever asked for it. Values people copy (stop reasons, flags,
ids) and the outside world's own words (a server's message) stay as they are."""

from __future__ import annotations

import json

from clikit import cli
from fakeapi import WIRES, FakeAPI, error

from orderbot.models.scripted import ScriptedModel, call, calls

KEY = {"OPENAI_API_KEY": "sk-test-chinese-screens-0123456789"}


def test_the_last_rows_event_is_said_and_the_stop_reason_stays_a_value(orders_file):
    answered = cli("--lang", "zh", "ask", "--orders", str(orders_file), "查询 ORD-1001")
    assert answered.exit_code == 0
    last = [line for line in answered.stdout.splitlines() if "已回答" in line]
    assert last and "answered" not in answered.stdout, answered.stdout
    stopped = cli("--lang", "zh", "ask", "--orders", str(orders_file), "--max-steps", "1", "查询 ORD-1001")
    assert "达到步数上限" in stopped.stdout and "停止原因：step_limit" in stopped.stdout, stopped.stdout
    english = cli("--lang", "en", "ask", "--orders", str(orders_file), "查询 ORD-1001")
    assert "answered" in english.stdout and "已回答" not in english.stdout


def test_a_time_limits_cause_is_said_in_chinese_the_servers_words_as_they_are(orders_file):
    wire = WIRES["chat"]
    with FakeAPI() as api:
        api.fallback[wire.route] = error(503, "The server is overloaded")
        args = ["--provider", wire.provider, "--base-url", api.url, "--orders", str(orders_file), "--timeout", "1.5"]
        asked = cli("--lang", "zh", "ask", *args, "查询 ORD-1001", env=KEY)
    assert asked.exit_code == 3, asked.output
    shown = " ".join(asked.stdout.split())
    assert "（最后一次错误：模型服务出错（HTTP 503）：The server is overloaded" in shown, shown
    assert "the model service" not in shown and "no time left" not in shown


def test_results_gathered_before_a_stop_are_said_in_chinese(use_model, orders_file):
    def stopped(lang: str) -> str:
        first, second = ({"order_id": "ORD-1001"}, {"order_id": "ORD-1002"})
        use_model(ScriptedModel([calls(call("get_order_status", first)), calls(call("get_order_status", second))]))
        args = ["ask", "--provider", "scripted", "--orders", str(orders_file), "--max-steps", "2", "查询"]
        result = cli("--lang", lang, *args)
        assert result.exit_code == 3, result.output
        return result.stdout

    chinese = stopped("zh")
    observed = chinese.split("停止前已查到的结果：", 1)[1].splitlines()[1]
    assert 'get_order_status(order_id="ORD-1001") → 成功 ' in observed and "→ ok" not in chinese, observed
    english = stopped("en").split("Observed before the stop:", 1)[1].splitlines()[1]
    assert 'get_order_status(order_id="ORD-1001") → ok ' in english


def test_an_approval_in_the_queue_is_said_in_the_readers_language(orders_file):
    asked = cli("--lang", "en", "ask", "--user", "C001", "--orders", str(orders_file), "--json", "取消订单 ORD-1002")
    assert asked.exit_code == 4, asked.output
    chinese = " ".join(cli("--lang", "zh", "approvals").stdout.split())
    assert "取消订单 ORD-1002（处理中，¥199.00），原因：" in chinese and "Cancel ORD-1002" not in chinese, chinese
    english = " ".join(cli("--lang", "en", "approvals").stdout.split())
    assert "Cancel ORD-1002 (处理中, ¥199.00), reason:" in english, english
    queued = json.loads(cli("approvals", "--json").stdout)[0]["description"]
    assert queued["id"] == "approve.cancel" and queued["params"]["order_id"] == "ORD-1002"  # the same for every reader
