"""`orderbot resume`: approve, reject, continue after a limit, and every re-check that
must refuse before anything runs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

import pytest
from clikit import cli
from runkit import only_run, open_store, record_bytes, record_doc, state_dir
from saying import raises

from orderbot.errors import RecordError
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import RunState
from orderbot.loop.tools import Tool
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.base import BaseRunStore
from orderbot.runs.record import COMMITTED, EXECUTING
from orderbot.runs.resume import check_resume
from orderbot.shops.sample.stores.jsonfile import JsonStore
from orderbot.shops.sample.tools import order_tools

CANCEL = "取消订单 ORD-1002"


def paused_cancel(orders_file: Path) -> str:
    """A piped `ask` that stops for approval; returns its run id."""
    result = cli("ask", "--user", "C001", "--orders", str(orders_file), CANCEL)
    assert result.exit_code == 4, result.output
    run_id = only_run()
    assert run_id in result.output  # the run id is printed
    return run_id


def status(orders_file: Path, order_id: str = "ORD-1002") -> str:
    return JsonStore.load(orders_file).get(order_id).status


def record(run_id: str) -> dict:
    return record_doc(run_id)


def test_the_pending_call_is_on_disk_when_ask_exits_4(orders_file):
    run_id = paused_cancel(orders_file)
    doc = record(run_id)
    assert doc["state"]["stop_reason"] == "awaiting_approval"
    [pending] = doc["state"]["pending"]
    assert pending["name"] == "cancel_order" and pending["user"] == "C001"
    assert json.loads(pending["arguments"])["order_id"] == "ORD-1002"
    assert pending["version"] == doc["tool_versions"]["cancel_order"]
    assert status(orders_file) == "处理中"


def test_resume_approve_cancels_once_and_answers(orders_file):
    run_id = paused_cancel(orders_file)
    result = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    assert result.exit_code == 0, result.output
    assert "approved and executed" in result.output and "订单 ORD-1002 已取消。" in result.output
    assert status(orders_file) == "已取消"
    doc = record(run_id)
    assert doc["state"]["stop_reason"] == "answered" and doc["state"]["pending"] == []
    assert list(doc["side_effects"].values()) == [COMMITTED]
    assert [s["stop_reason"] for s in doc["segments"]] == ["awaiting_approval", "answered"]
    assert {t["segment"] for t in doc["transitions"]} == {0, 1}  # appended to the same record

    written = orders_file.read_bytes()
    again = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    # Settled already (by the same desk here): refused as one who came second, nothing done.
    assert again.exit_code == 9 and "was already approved by" in again.output
    assert orders_file.read_bytes() == written


def test_resume_uses_the_orders_file_the_run_used(orders_file):
    run_id = paused_cancel(orders_file)
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    assert status(orders_file) == "已取消"


def test_resume_reject_changes_nothing_and_the_model_is_told(orders_file):
    run_id = paused_cancel(orders_file)
    before = orders_file.read_bytes()
    result = cli("resume", run_id, "--reject", "--user", "C001")
    assert result.exit_code == 0, result.output
    assert "rejected by the person" in result.output and "你没有确认" in result.output
    assert orders_file.read_bytes() == before
    assert record(run_id)["state"]["calls"][-1]["decision"] == "rejected"


@pytest.mark.parametrize("who", [["--user", "C002"], []])
def test_resume_as_another_user_is_refused(orders_file, who):
    run_id = paused_cancel(orders_file)
    before = record_bytes(run_id)
    result = cli("resume", run_id, "--approve", *who)
    assert result.exit_code == 6
    assert "belongs to user C001" in result.output and "Traceback" not in result.output
    assert status(orders_file) == "处理中"
    assert record_bytes(run_id) == before  # nothing ran, nothing recorded


def test_approve_and_reject_together_is_a_usage_error(orders_file):
    run_id = paused_cancel(orders_file)
    result = cli("resume", run_id, "--approve", "--reject", "--user", "C001")
    assert result.exit_code == 2 and "cannot be used" in result.output
    neither = cli("resume", run_id, "--user", "C001")  # a paused run needs one of them: what to type
    assert neither.exit_code == 2 and "--approve" in neither.output


def test_resume_after_a_tool_changed_is_refused(orders_file, monkeypatch):
    run_id = paused_cancel(orders_file)

    def upgraded_tools(store):  # as if a new orderbot changed cancel_order's schema
        return [
            dataclasses.replace(t, description=t.description + " (v2)") if t.name == "cancel_order" else t
            for t in order_tools(store)
        ]

    monkeypatch.setattr("orderbot.shops.session.order_tools", upgraded_tools)
    result = cli("resume", run_id, "--approve", "--user", "C001")
    assert result.exit_code == 6
    assert "the tool cancel_order changed" in result.output
    assert status(orders_file) == "处理中"


def test_resume_when_the_order_no_longer_qualifies_is_refused(orders_file):
    run_id = paused_cancel(orders_file)
    data = json.loads(orders_file.read_text())
    for order in data["orders"]:
        if order["order_id"] == "ORD-1002":
            order["status"] = "已发货"  # shipped meanwhile
    orders_file.write_text(json.dumps(data, ensure_ascii=False))
    result = cli("resume", run_id, "--approve", "--user", "C001")
    assert result.exit_code == 6
    assert "can no longer be done" in result.output and "已发货" in result.output
    assert status(orders_file) == "已发货"


# ---- the Python API, with a wall clock the test moves ----------------------------------


def pause(toolbox: Toolbox, runs: BaseRunStore, wall) -> RunState:
    model = ScriptedModel([calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}, call_id="c1"))])
    state = RunState.start(CANCEL, user="C001")
    Runner(toolbox, model, runs, provider="scripted", wall_clock=wall).start(state, Limits())
    assert state.stop_reason is StopReason.AWAITING_APPROVAL
    return state


def test_an_expired_approval_is_refused(toolbox, clock, tmp_path):
    runs = open_store(tmp_path / "state")
    state = pause(toolbox, runs, clock)
    stored = runs.load(state.run_id)
    clock.advance(23.9 * 3600)
    check_resume(stored, toolbox, user="C001", approve=True, now=clock(), ttl_hours=24)  # still fine
    clock.advance(0.2 * 3600)
    with raises(RecordError, match=r"expired: it was made 24\.1 h ago and approvals last 24 h"):
        check_resume(stored, toolbox, user="C001", approve=True, now=clock(), ttl_hours=24)


def test_a_call_interrupted_while_executing_is_never_run_again(store, tmp_path, clock):
    """Ctrl-C inside an approved side effect: the record says `executing`; resume refuses."""
    ran = []

    def explode(args, ctx):
        ran.append(ctx.call_id)
        raise KeyboardInterrupt

    tools = [t if t.name != "cancel_order" else dataclasses.replace(t, run=explode) for t in order_tools(store)]
    toolbox = Toolbox(tools)
    runs = open_store(tmp_path / "state")
    state = pause(toolbox, runs, clock)
    stored = runs.load(state.run_id)
    check_resume(stored, toolbox, user="C001", approve=True, now=clock(), ttl_hours=24)
    Runner(toolbox, ScriptedModel([]), runs, wall_clock=clock).resume(stored, Limits(), approve=True)
    assert ran == ["c1"] and stored.state.stop_reason is StopReason.CANCELLED
    again = runs.load(state.run_id)
    assert again.side_effects == {"c1": EXECUTING}
    with raises(RecordError, match="may have been done"):
        check_resume(again, toolbox, user="C001", approve=True, now=clock(), ttl_hours=24)
    assert ran == ["c1"]


def test_a_lost_record_update_does_not_cancel_twice(orders_file, tmp_path):
    """If the run store still said `awaiting_approval` after the cancel had landed (say it was
    restored from a backup), a second approve finds the call already done by the orders' store."""
    run_id = paused_cancel(orders_file)
    database = state_dir() / "runs.db"  # whole: orderbot closed it, so nothing is left in its journal
    saved = tmp_path / "paused.db"
    shutil.copyfile(database, saved)
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    written = orders_file.read_bytes()
    shutil.copyfile(saved, database)
    again = cli("resume", run_id, "--approve", "--user", "C001")
    assert again.exit_code == 0, again.output
    assert orders_file.read_bytes() == written  # the store saw the same call id: nothing written


def test_a_limit_stopped_run_resumed_with_more_steps_answers(orders_file):
    stopped = cli("ask", "--max-steps", "1", "查询 ORD-1001")
    assert stopped.exit_code == 3
    run_id = only_run()
    refused = cli("resume", run_id, "--approve")
    assert refused.exit_code == 2 and "not waiting for approval" in refused.output  # what was typed
    result = cli("resume", run_id, "--max-steps", "3")
    assert result.exit_code == 0, result.output
    assert "订单 ORD-1001 的状态是：已发货。" in result.output
    doc = record_doc(run_id)
    assert [s["limits"]["max_steps"] for s in doc["segments"]] == [1, 3]
    assert doc["state"]["steps"] == 3  # 1 before, 2 after: counted over the whole run
    again = cli("resume", run_id, "--max-steps", "3")
    assert again.exit_code == 1 and "already answered" in again.output  # nothing broken, nothing done


def test_a_resumed_run_that_stops_again_keeps_its_exit_code(use_model, orders_file):
    model = ScriptedModel(
        [
            calls(call("get_order_status", {"order_id": "ORD-1001"})),
            calls(call("get_order_status", {"order_id": "ORD-1001"})),
            calls(call("get_order_status", {"order_id": "ORD-1001"})),
            text("好了"),
        ]
    )
    use_model(model)
    assert cli("ask", "--provider", "scripted", "--max-steps", "1", "查询 ORD-1001").exit_code == 3
    run_id = only_run()
    # no --provider: the run continues with the model it used
    assert cli("resume", run_id, "--max-steps", "1").exit_code == 3
    result = cli("resume", run_id, "--max-steps", "2", "--json")
    doc = json.loads(result.output)
    assert result.exit_code == 0 and doc["answer"] == "好了" and doc["resumed"] is True
    model.assert_complete()


def test_unknown_run_id(orders_file):
    result = cli("resume", "261130-000000-abcd", "--approve")
    assert result.exit_code == 6 and "no run 261130-000000-abcd" in result.output


def test_a_side_effect_tool_of_the_test_is_settled_like_cancel(tmp_path):
    """Resume works for any side-effecting tool, not only cancel_order."""
    from pydantic import BaseModel

    class Args(BaseModel):
        note: str

    sent: list[str] = []
    tool = Tool(
        name="send_note",
        description="send a note",
        args=Args,
        side_effect=True,
        run=lambda args, ctx: sent.append(args.note) or {"sent": True},
    )
    toolbox = Toolbox([tool])
    runs = open_store(tmp_path / "state")
    model = ScriptedModel([calls(call("send_note", {"note": "hi"}, call_id="n1")), text("sent")])
    state = RunState.start("send hi", user="C001")
    runner = Runner(toolbox, model, runs, provider="scripted")
    runner.start(state, Limits())
    assert sent == [] and state.stop_reason is StopReason.AWAITING_APPROVAL
    stored = runs.load(state.run_id)
    check_resume(stored, toolbox, user="C001", approve=True, now=time.time(), ttl_hours=24)  # recorded on time.time
    runner.resume(stored, Limits(), approve=True)
    assert sent == ["hi"] and runs.load(state.run_id).side_effects == {"n1": COMMITTED}


def test_a_rejection_of_a_run_approved_meanwhile_is_refused_as_second(orders_file):
    """Two approvers at once: the second may find the run already carried on to its answer.
    That is a person who came second (exit 9, naming who settled it), not a broken record."""
    asked = cli("ask", "--user", "C001", "--orders", str(orders_file), "--json", "取消订单 ORD-1002，不想要了")
    run_id = json.loads(asked.stdout)["run_id"]
    first = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    assert first.exit_code == 0, first.output
    again = cli("resume", run_id, "--reject", "--user", "C001", "--orders", str(orders_file))
    assert again.exit_code == 9, again.output
    assert "was already approved by" in again.stderr and "nothing was done here" in again.stderr
    assert JsonStore.load(orders_file).orders["ORD-1002"].status == "已取消"  # cancelled once, by the first
