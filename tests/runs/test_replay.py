"""`orderbot replay`: recorded model turns played back against today's tools and engine."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import UTC
from pathlib import Path

import pytest
from clikit import cli
from runkit import export_file, only_run, open_store, record_doc
from saying import raises, stop_said

from orderbot.errors import ExitCode, RecordError
from orderbot.i18n import t
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.state import Event
from orderbot.runner.replay import replay, replay_file
from orderbot.runs.tagged import read_record
from orderbot.shops.sample.tools import order_tools
from orderbot.ui.replay import difference_words

FIXTURES = Path(__file__).parent / "fixtures" / "runs"


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_fixtures_replay_without_difference(fixture):
    """Regression fixtures: runs recorded with the offline model against the bundled sample.
    A change in tools, dispatch or the engine that alters any step fails here."""
    report = replay_file(fixture)
    assert report.identical, [difference_words(d, "en") for d in report.differences]
    assert report.state.stop_reason is not None


def test_the_cancel_fixture_replays_both_segments_without_touching_real_data():
    from orderbot.shops.sample.model import SAMPLE_PATH

    before = SAMPLE_PATH.read_bytes()
    report = replay_file(FIXTURES / "cancel_approved_on_resume.json")
    assert [t.kind for _, t in report.transitions if t.to == "observe"] == [Event.APPROVED]
    assert report.state.answer == "订单 ORD-1002 已取消。"
    assert SAMPLE_PATH.read_bytes() == before


def test_replay_stamps_times_in_the_zone_the_run_was_recorded_in():
    """The cancel fixture was recorded in UTC; replayed on a machine in UTC+8 its
    cancellation time must still come out the same."""
    import time

    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Shanghai"
    time.tzset()
    try:
        report = replay_file(FIXTURES / "cancel_approved_on_resume.json")
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    assert report.identical, [difference_words(d, "en") for d in report.differences]


def test_replay_reports_the_step_whose_tool_output_changed(store):
    record = read_record(FIXTURES / "details_and_refusals.json")

    def get_order_details_v2(args, ctx):  # today's tool says something else
        return {"order_id": args.order_id, "status": "已签收"}

    tools = [
        dataclasses.replace(t, run=get_order_details_v2) if t.name == "get_order_details" else t
        for t in order_tools(store)
    ]
    report = replay(record, Toolbox(tools))
    assert not report.identical
    [diff] = report.differences
    assert (
        diff.step == 1
        and "get_order_details" in difference_words(diff, "en")
        and "ORD-1001" in difference_words(diff, "en")
    )
    assert "已签收" in difference_words(diff, "en")


def test_cli_replay_of_a_fresh_run_is_identical_and_stays_so_when_the_shop_changes(orders_file):
    """Yesterday's run replayed today, after the shop changed: its recorded results stand in
    for the tools (the data is not the run's), a note says so, and nothing differs. Named
    with --orders, the same orders are a what-if: the tools run on them, and the change shows."""
    asked = cli("ask", "--orders", str(orders_file), "查询 ORD-1001 和 ORD-1002")
    assert asked.exit_code == 0
    run_id = only_run()
    same = cli("replay", run_id)
    assert same.exit_code == 0, same.output
    assert "No difference" in same.output and "note:" not in same.output

    data = json.loads(orders_file.read_text())
    data["orders"][1]["status"] = "已发货"  # ORD-1002 shipped since
    orders_file.write_text(json.dumps(data, ensure_ascii=False))
    before = orders_file.read_bytes()
    today = cli("replay", run_id, "--json")
    assert today.exit_code == 0, today.output
    doc = json.loads(today.output)
    assert doc["identical"] is True and doc["differences"] == []
    assert doc["notes"] == [t("replay.data_changed", lang="en")]

    what_if = cli("replay", run_id, "--orders", str(orders_file), "--json")
    assert what_if.exit_code == ExitCode.DIFFERS == 1
    doc = json.loads(what_if.output)
    assert doc["identical"] is False and doc["recorded_stop_reason"] == doc["replayed_stop_reason"] == "answered"
    [diff] = doc["differences"]
    assert diff["step"] == 1 and "ORD-1002" in diff["text"] and "已发货" in diff["text"]
    assert doc["notes"] == [t("replay.other_data", lang="en")]
    assert orders_file.read_bytes() == before  # replay reads a scratch copy


def test_a_run_that_cancelled_an_order_replays_against_its_own_orders_afterwards(orders_file):
    """The run changed its orders itself (approved on resume): the recorded results stand in
    for the tools, so the cancel is neither refused nor done again."""
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002").exit_code == 4
    run_id = only_run()
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    after = orders_file.read_bytes()
    assert json.loads(after)["orders"][1]["status"] == "已取消"
    replayed = cli("replay", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
    doc = json.loads(replayed.output)
    assert doc["differences"] == [] and doc["notes"] == [t("replay.data_changed", lang="en")]
    assert orders_file.read_bytes() == after


def test_on_the_run_s_own_data_a_changed_tool_still_differs(orders_file):
    """The recorded results stand in only for data that is not the run's: on the same data,
    today's tools run, and a tool that now answers otherwise is a difference."""
    from orderbot.shops.sample.stores.jsonfile import JsonStore

    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "查询 ORD-1001 的详情").exit_code == 0
    run_id = only_run()
    record = open_store().load(run_id)

    def get_order_details_v2(args, ctx):
        return {"order_id": args.order_id, "status": "已签收"}

    tools = [
        dataclasses.replace(t, run=get_order_details_v2) if t.name == "get_order_details" else t
        for t in order_tools(JsonStore.load(orders_file))
    ]
    same_data = replay(record, Toolbox(tools), orders_digest=lambda: record.segments[0].orders_digest)
    assert [d.step for d in same_data.differences] == [1] and not same_data.notes
    other_data = replay(record, Toolbox(tools), orders_digest=lambda: "0" * 64)
    assert other_data.identical, [difference_words(d, "en") for d in other_data.differences]
    without_the_tool = [t for t in tools if t.name != "get_order_details"]
    gone = replay(record, Toolbox(without_the_tool), orders_digest=lambda: "0" * 64)
    assert any("unknown_tool" in difference_words(d, "en") for d in gone.differences), [
        difference_words(d, "en") for d in gone.differences
    ]


def test_replay_of_a_paused_run_stops_at_the_pause_and_writes_nothing(orders_file):
    assert cli("ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002").exit_code == 4
    run_id = only_run()
    result = cli("replay", run_id)
    assert result.exit_code == 0 and "awaiting_approval" in result.output
    assert json.loads(orders_file.read_text())["orders"][1]["status"] == "处理中"


def test_a_record_that_dropped_turns_cannot_be_replayed(toolbox):
    record = read_record(FIXTURES / "details_and_refusals.json")
    record.dropped["turns"] = 3
    with raises(RecordError, match="cannot be replayed"):
        replay(record, toolbox)


def test_an_inline_approval_is_recorded_and_replayed_the_same_way(orders_file, tmp_path):
    from datetime import datetime

    from orderbot.loop.engine import Engine, Limits
    from orderbot.loop.state import RunState
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.runs.record import COMMITTED
    from orderbot.runs.recorder import Recorder
    from orderbot.shops.sample.stores.jsonfile import JsonStore

    noon = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    store = JsonStore.load(orders_file)
    store.now = lambda: noon  # the store stamps the cancellation with this time
    toolbox = Toolbox(order_tools(store))
    runs = open_store(tmp_path / "state")
    model = ScriptedModel(
        [calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}, call_id="c1")), text("已取消")]
    )
    state = RunState.start("取消订单 ORD-1002", user="C001")
    recorder = Recorder.start(
        runs,
        state,
        provider="scripted",
        model="m",
        toolbox=toolbox,
        limits=Limits(),
        interactive=True,
        wall_clock=noon.timestamp,
    )
    asked = []
    engine = Engine(
        recorder.wrap(model),
        toolbox,
        Limits(),
        observers=[recorder],
        approver=recorder.guard(lambda pending: asked.append(pending.call_id) or True),
    )
    engine.run(state)
    recorder.close()
    assert asked == ["c1"] and state.answer == "已取消"
    record = runs.load(state.run_id)
    assert record.approvals == {"c1": True} and record.side_effects == {"c1": COMMITTED}
    report = replay_file(export_file(state.run_id, tmp_path, tmp_path / "state"))  # over a fresh copy of the sample
    assert report.identical, [difference_words(d, "en") for d in report.differences]
    assert [t.kind for _, t in report.transitions if t.to == "observe"] == [Event.APPROVED]


def test_replay_compares_values_not_words(monkeypatch):
    """Reworded sentences (the catalogue's English of each event and detail) are no
    difference: replay compares kinds, calls, arguments, results and stop reasons."""
    from orderbot.i18n.catalogue import MESSAGES

    for message_id in [m for m in MESSAGES if m.startswith(("event.", "detail."))]:
        monkeypatch.setitem(MESSAGES, message_id, {**MESSAGES[message_id], "en": "now " + MESSAGES[message_id]["en"]})
    for fixture in sorted(FIXTURES.glob("*.json")):
        report = replay_file(fixture)
        assert report.identical, [difference_words(d, "en") for d in report.differences]


def test_replay_still_finds_a_different_result():
    """The values differ when the data does: an order cancelled since the run was recorded."""
    import shutil
    import tempfile

    from orderbot.shops.sample.model import SAMPLE_PATH

    with tempfile.TemporaryDirectory() as tmp:
        orders = Path(tmp) / "orders.json"
        shutil.copyfile(SAMPLE_PATH, orders)
        doc = json.loads(orders.read_text(encoding="utf-8"))
        for order in doc["orders"]:
            if order["order_id"] == "ORD-1002":
                order["status"] = "已取消"
        orders.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        report = replay_file(FIXTURES / "cancel_approved_on_resume.json", orders)
    assert not report.identical


def test_a_run_ended_by_sigterm_replays_as_ended_by_sigterm(use_model, tmp_path):
    from orderbot.errors import Terminated
    from orderbot.models.scripted import ScriptedModel, call, calls

    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), Terminated()]))
    assert cli("ask", "--provider", "scripted", "查询 ORD-1001").exit_code == ExitCode.CANCELLED
    run_id = only_run()
    assert stop_said(record_doc(run_id)["state"]) == "terminated by a signal (SIGTERM)"
    report = replay_file(export_file(run_id, tmp_path))
    assert report.identical, [difference_words(d, "en") for d in report.differences]


def test_a_run_whose_customer_signed_in_replays_the_sign_in(tmp_path):
    """The customer a sign-in lookup named was not the session's: a replay starts without
    one, so the lookup names them again and the `signed_in` step is the same."""
    import shutil

    shop = tmp_path / "shop.json"
    shutil.copyfile(Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json", shop)
    asked = cli("ask", "--orders", str(shop), "I am olivia.ito5204@example.com, where is #W5866402?")
    assert asked.exit_code == 0, asked.output
    run_id = only_run()
    assert open_store().load(run_id).state.signed_in
    replayed = cli("replay", run_id, "--orders", str(shop), "--json")
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["differences"] == []
    with shop.open("a") as changed:  # the shop is not the run's now: the results are the record's
        changed.write("\n")
    replayed = cli("replay", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
    doc = json.loads(replayed.stdout)
    assert doc["differences"] == [] and doc["notes"] == [t("replay.data_changed", lang="en")]


def test_a_run_cancelled_with_ctrl_c_and_resumed_replays_both_parts(use_model, tmp_path):
    """The recorded turns are played back in order and the Ctrl-C is done again where the
    person did it: the interruption is theirs, not a difference."""
    from orderbot.models.scripted import ScriptedModel, call, calls, text

    lookup = calls(call("get_order_status", {"order_id": "ORD-1001"}))
    use_model(ScriptedModel([lookup, KeyboardInterrupt(), text("已发货。")]))
    stopped = cli("ask", "--provider", "scripted", "--user", "C001", "查询 ORD-1001")
    assert stopped.exit_code == ExitCode.CANCELLED, stopped.output
    run_id = only_run()
    resumed = cli("resume", run_id, "--provider", "scripted", "--user", "C001")
    assert resumed.exit_code == 0, resumed.output
    assert [s["stop_reason"] for s in record_doc(run_id)["segments"]] == ["cancelled", "answered"]
    replayed = cli("replay", run_id)
    assert replayed.exit_code == 0, replayed.output
    assert "No difference" in replayed.output and "answered" in replayed.output
    report = replay_file(export_file(run_id, tmp_path))
    kinds = [(segment, str(t.kind)) for segment, t in report.transitions if t.kind in (Event.FINISHED, Event.RESUMED)]
    assert kinds == [(0, "finished"), (1, "resumed"), (1, "finished")]
    assert report.state.answer == "已发货。"


def _recorded(toolbox, runs, model, *, approver=None):
    """A run of `model` over `toolbox`, recorded in `runs` the way `ask` records one."""
    from orderbot.loop.engine import Limits
    from orderbot.loop.state import RunState
    from orderbot.runner import Runner

    state = RunState.start("取消订单 ORD-1002", user="C001")
    Runner(toolbox, model, runs).start(state, Limits(), approver=approver)
    return runs.load(state.run_id)


@pytest.mark.parametrize("where", ["tool", "prompt"])
def test_a_run_stopped_while_a_call_ran_or_waited_for_a_yes_replays_the_stop_there(where, store, tmp_path):
    """Ctrl-C while a tool ran, or at the approval prompt, then a resume: the replay stops
    the same call at the same place, and the resumed part follows."""
    from orderbot.loop.engine import Limits
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.runner import Runner

    name = "get_order_details" if where == "tool" else "cancel_order"
    args = {"order_id": "ORD-1002"} | ({"reason": "不要了"} if where == "prompt" else {})

    def interrupted(args, ctx):
        raise KeyboardInterrupt

    def at_the_prompt(pending):
        raise KeyboardInterrupt

    tools = order_tools(store)
    stopping = [dataclasses.replace(t, run=interrupted) if t.name == name and where == "tool" else t for t in tools]
    runs = open_store(tmp_path / "state")
    model = ScriptedModel([calls(call(name, args, call_id="c1")), text("好的。")])
    record = _recorded(Toolbox(stopping), runs, model, approver=at_the_prompt if where == "prompt" else None)
    assert record.state.stop_reason.value == "cancelled" and record.state.calls == []
    Runner(Toolbox(tools), model, runs).resume(record, Limits())
    record = runs.load(record.run_id)
    assert record.state.answer == "好的。"
    report = replay(record, Toolbox(tools))
    assert report.identical, [difference_words(d, "en") for d in report.differences]
    [finished, _] = [t for _, t in report.transitions if t.kind is Event.FINISHED]
    assert finished.from_ == "act" and finished.payload.reason.value == "cancelled"


def test_a_retail_cancellation_replays_after_it_cancelled_the_order(tmp_path):
    """Played back, an approval's description is not asked of the tool: it reads the order,
    which the run itself cancelled (and the retail shop refuses to describe a cancelled one)."""
    import shutil

    shop = tmp_path / "shop.json"
    shutil.copyfile(Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json", shop)
    user = ("--orders", str(shop), "--user", "olivia_ito_3591")
    asked = cli("ask", *user, "Please cancel #W5442520, I ordered it by mistake")
    assert asked.exit_code == 4, asked.output
    run_id = only_run()
    assert cli("resume", run_id, "--approve", *user[2:]).exit_code == 0
    replayed = cli("replay", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
    doc = json.loads(replayed.stdout)
    assert doc["differences"] == [] and doc["notes"] == [t("replay.data_changed", lang="en")]


def test_a_hand_off_replays_as_a_hand_off_after_the_shop_changed(tmp_path):
    """Played back, the recorded result of the hand-off tool hands the run off again: the stop
    is `transferred`, with the summary the record has."""
    import shutil

    shop = tmp_path / "shop.json"
    shutil.copyfile(Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json", shop)
    asked = cli("ask", "--orders", str(shop), "--user", "olivia_ito_3591", "transfer me to a human about #W5866402")
    assert asked.exit_code == ExitCode.TRANSFERRED, asked.output
    with shop.open("a") as changed:
        changed.write("\n")
    run_id = only_run()
    replayed = cli("replay", run_id, "--json")
    assert replayed.exit_code == 0, replayed.output
    doc = json.loads(replayed.stdout)
    assert doc["replayed_stop_reason"] == "transferred" and doc["differences"] == []
    assert doc["notes"] == [t("replay.data_changed", lang="en")]
