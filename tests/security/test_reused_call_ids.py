"""A call id names one call of a run, whatever the server sends. Some servers number their
calls call_0, call_1, ... in every turn; a hostile one may repeat an id on purpose. The
retail shop's at-most-once ledger keys a write by its run, step and call id, so a second
write that reuses an id is carried out, not answered with the first write's result (which
would tell the person it was done while nothing was). In the run store's queue and audit log
the second use is a call of its own (`call_0@2`), asked, decided and carried out as the first,
so that the log still verifies, whether it was approved at the prompt or waited in the queue."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runkit import open_store

from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.audit import verify
from orderbot.shops.retail.jsonstore import JsonShopStore
from orderbot.shops.retail.tools import retail_tools

DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "73301"}


@pytest.mark.slow
def test_two_writes_with_one_call_id_are_both_carried_out(tmp_path) -> None:
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    store = JsonShopStore.load(path)
    model = ScriptedModel(
        [
            calls(call("modify_pending_order_address", {"order_id": "#W5442520", **ADDRESS}, call_id="call_0")),
            calls(
                call("cancel_pending_order", {"order_id": "#W7941031", "reason": "no longer needed"}, call_id="call_0")
            ),
            text("Done."),
        ]
    )
    state = RunState.start("please", user="olivia_ito_3591")
    runs = open_store(tmp_path / "state")
    runner = Runner(Toolbox(retail_tools(store)), model, runs, provider="scripted")
    runner.start(state, Limits(max_steps=5, max_calls_per_step=1), approver=lambda pending: True)
    results = [json.loads(i.output) for i in state.items if getattr(i, "type", "") == "function_call_output"]
    assert [r["data"]["order_id"] for r in results] == ["#W5442520", "#W7941031"]
    after = JsonShopStore.load(path)
    assert after.order("#W5442520").address.city == "Austin"
    assert after.order("#W7941031").status == "cancelled"
    logged = [(e.event, e.call_id) for e in runs.audit_entries()]
    assert logged == [(event, call_id) for call_id in ("call_0", "call_0@2") for event in USES]
    assert verify(runs.audit_entries()).intact and runs.audit_problems() == []


USES = ("proposed", "approved", "executed")


@pytest.mark.slow
def test_a_reused_call_id_that_waits_in_the_queue_is_a_call_of_its_own_there(tmp_path) -> None:
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    model = ScriptedModel(
        [
            calls(call("modify_pending_order_address", {"order_id": "#W5442520", **ADDRESS}, call_id="call_0")),
            calls(
                call("cancel_pending_order", {"order_id": "#W7941031", "reason": "no longer needed"}, call_id="call_0")
            ),
            text("Done."),
        ]
    )
    runs = open_store(tmp_path / "state")
    runner = Runner(Toolbox(retail_tools(JsonShopStore.load(path))), model, runs, provider="scripted")
    limits = Limits(max_steps=5, max_calls_per_step=1)
    state = RunState.start("please", user="olivia_ito_3591")
    runner.start(state, limits)
    for waiting in ("call_0", "call_0@2"):
        assert [w.call_id for w in runs.waiting()] == [waiting]
        runner.resume(runs.load(state.run_id), limits, approve=True)
    assert runs.waiting() == []
    after = JsonShopStore.load(path)
    assert after.order("#W5442520").address.city == "Austin" and after.order("#W7941031").status == "cancelled"
    logged = [(e.event, e.call_id) for e in runs.audit_entries()]
    assert logged == [(event, call_id) for call_id in ("call_0", "call_0@2") for event in USES]
    assert verify(runs.audit_entries()).intact and runs.audit_problems() == []
