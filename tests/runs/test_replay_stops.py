"""Replay finds no difference where there is none: a run stopped at its time limit (with the
failure that was being retried when time ran out), cancelled, or stopped at its step limit
replays with exit 0, as the command line reports it; a run whose tool now answers
differently still exits 1. What is compared is what the run did (its stop reason and the
reason's values), never the wording around it."""

from __future__ import annotations

import json

from clikit import cli
from fakeapi import WIRES, FakeAPI, error

from orderbot.models.scripted import ScriptedModel, call, calls, text

KEY = {"OPENAI_API_KEY": "sk-test-replay-stops-0123456789"}


def replayed(run_id: str, *args: str) -> tuple[int, dict]:
    result = cli("replay", run_id, "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def test_a_run_stopped_at_its_time_limit_replays_without_difference(orders_file):
    wire = WIRES["chat"]
    with FakeAPI() as api:
        api.fallback[wire.route] = error(503, "The server is overloaded")  # retried until time runs out
        args = ["--provider", wire.provider, "--base-url", api.url, "--orders", str(orders_file), "--timeout", "1.5"]
        asked = cli("ask", *args, "--json", "查询 ORD-1001", env=KEY)
    document = json.loads(asked.stdout)
    assert asked.exit_code == 3 and document["stop_reason"] == "time_limit", asked.output
    assert document["stop_message"]["params"]["cause"]  # it says what was being retried
    code, report = replayed(document["run_id"], "--orders", str(orders_file))
    assert (code, report["identical"], report["differences"]) == (0, True, [])
    assert report["replayed_stop_reason"] == "time_limit"


def test_a_cancelled_run_replays_without_difference(use_model, orders_file):
    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), KeyboardInterrupt()]))
    asked = cli("ask", "--provider", "scripted", "--orders", str(orders_file), "--json", "查询 ORD-1001")
    document = json.loads(asked.stdout)
    assert asked.exit_code == 130 and document["stop_reason"] == "cancelled", asked.output
    code, report = replayed(document["run_id"])
    assert (code, report["identical"], report["replayed_stop_reason"]) == (0, True, "cancelled")


def test_a_run_stopped_at_its_step_limit_replays_without_difference(orders_file):
    asked = cli("ask", "--orders", str(orders_file), "--max-steps", "1", "--json", "查询 ORD-1001")
    document = json.loads(asked.stdout)
    assert asked.exit_code == 3 and document["stop_reason"] == "step_limit", asked.output
    code, report = replayed(document["run_id"])
    assert (code, report["identical"], report["replayed_stop_reason"]) == (0, True, "step_limit")


def test_a_run_whose_tool_now_answers_differently_still_differs(use_model, orders_file, tmp_path):
    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")]))
    asked = cli("ask", "--provider", "scripted", "--orders", str(orders_file), "--json", "查询 ORD-1001")
    document = json.loads(asked.stdout)
    assert asked.exit_code == 0, asked.output
    other = tmp_path / "other.json"
    other.write_text(orders_file.read_text(encoding="utf-8").replace('"已发货"', '"已签收"', 1), encoding="utf-8")
    code, report = replayed(document["run_id"], "--orders", str(other))
    assert code == 1 and not report["identical"]
    assert report["differences"][0]["step"] == 1
