"""orderbot.runner: the one place a run is wired (recorder, approver, observers, engine)."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

from clikit import cli
from runkit import open_store

import orderbot.runner as runner_module
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.record import COMMITTED, EXECUTING
from orderbot.shops.sample.tools import order_tools

PACKAGE = Path(__file__).resolve().parents[1] / "orderbot"
CANCEL = {"order_id": "ORD-1002", "reason": "不要了"}


def test_the_record_is_on_disk_before_any_view_sees_a_transition(toolbox, tmp_path):
    runs = open_store(tmp_path / "state")
    model = ScriptedModel([calls(call("get_order", {"order_id": "ORD-1001"})), text("已发货")])
    state = RunState.start("查询 ORD-1001", user="C001")
    shown, on_disk_when_shown = [], []

    def view(transition, state):
        shown.append(str(transition.kind))
        on_disk_when_shown.append(open_store(tmp_path / "state").load(state.run_id).run_id == state.run_id)

    Runner(toolbox, model, runs, provider="scripted").start(state, Limits(), views=[view])
    assert state.stop_reason is StopReason.ANSWERED
    assert on_disk_when_shown and all(on_disk_when_shown)
    # A read-only run is written at its start and at its stop: then with every transition.
    assert [t["kind"] for t in open_store(tmp_path / "state").load(state.run_id).transitions] == shown


def test_an_approved_call_is_noted_on_disk_before_it_runs_and_committed_after(store, tmp_path):
    runs = open_store(tmp_path / "state")
    model = ScriptedModel([calls(call("cancel_order", CANCEL, call_id="c1")), text("已取消")])
    state = RunState.start("取消 ORD-1002", user="C001")
    on_disk_while_running = []

    tools = order_tools(store)
    real_cancel = next(t for t in tools if t.name == "cancel_order").run

    def cancel(args, ctx):
        on_disk_while_running.append(open_store(tmp_path / "state").load(state.run_id).side_effects)
        return real_cancel(args, ctx)

    tools = [t if t.name != "cancel_order" else dataclasses.replace(t, run=cancel) for t in tools]
    record = (
        Runner(Toolbox(tools), model, runs, provider="scripted").start(state, Limits(), approver=lambda p: True).record
    )
    assert state.answer == "已取消" and record.approvals == {"c1": True}
    assert on_disk_while_running == [{"c1": EXECUTING}]
    assert runs.load(state.run_id).side_effects == {"c1": COMMITTED}
    model.assert_complete()


def test_a_paused_run_resumes_through_the_runner_and_appends_to_its_record(toolbox, tmp_path):
    runs = open_store(tmp_path / "state")
    state = RunState.start("取消 ORD-1002", user="C001")
    Runner(toolbox, ScriptedModel([calls(call("cancel_order", CANCEL, call_id="c1"))]), runs).start(state, Limits())
    assert state.stop_reason is StopReason.AWAITING_APPROVAL
    stored = runs.load(state.run_id)
    resumed = Runner(toolbox, ScriptedModel([text("已取消")]), runs).resume(stored, Limits(), approve=True)
    assert resumed.state.answer == "已取消"
    again = runs.load(state.run_id)
    assert [s.kind for s in again.segments] == ["ask", "resume"] and again.side_effects == {"c1": COMMITTED}


def test_no_command_builds_an_engine_itself():
    """The runner is the only place outside the tests that constructs an Engine."""
    builders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Engine":
                builders.append(path.relative_to(PACKAGE).as_posix())
    assert builders == ["runner/__init__.py"]


def test_facts_and_claims_are_computed_once_per_run_and_only_by_the_runner(monkeypatch, tmp_path):
    """Every view (table, --json, the exit code of --strict-claims) reads the runner's result:
    one run of `ask --json --strict-claims` computes its facts and claims exactly once."""

    counted = {"facts": 0, "claims": 0}
    real_facts, real_check = runner_module.facts_of, runner_module.check

    def facts_of(state, vocabulary):
        counted["facts"] += 1
        return real_facts(state, vocabulary)

    def check(*args, **kwargs):
        counted["claims"] += 1
        return real_check(*args, **kwargs)

    monkeypatch.setattr(runner_module, "facts_of", facts_of)
    monkeypatch.setattr(runner_module, "check", check)
    done = cli("ask", "--json", "--strict-claims", "查询订单 ORD-1001 的状态")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["facts"][0]["order_id"] == "ORD-1001"
    done = cli("ask", "查询订单 ORD-1001 的状态")
    assert done.exit_code == 0 and "ORD-1001 · 已发货" in done.stdout
    assert counted == {"facts": 2, "claims": 2}


def test_no_module_but_the_runner_computes_facts_or_claims():
    """facts_of and the claim check are called in one place, so no view can compute its own."""
    callers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            called = node.func if isinstance(node, ast.Call) else None
            if (isinstance(called, ast.Name) and called.id in ("facts_of", "check")) or (
                isinstance(called, ast.Attribute) and called.attr == "facts_of"
            ):
                callers.add(path.relative_to(PACKAGE).as_posix())
    assert callers == {"runner/__init__.py"}
