"""A state directory an earlier orderbot wrote is taken over on first use (orderbot.runs.takeover):
once, whole or not at all, nothing lost and nothing trusted.

The fixture, tests/runs/fixtures/previous-release/, is a state directory written by orderbot at
7968f11 (the last release that kept JSON records), with the offline model and the sample shop:

    orderbot ask --user C001 "查询订单 ORD-1001 的状态。"           answered
    orderbot ask --max-steps 1 "查询 ORD-1003"                     step_limit
    orderbot ask --user C002 "取消订单 ORD-1008"                    paused, then
    orderbot resume last --approve --user C002                     approved and executed
    orderbot ask --user C001 "取消订单 ORD-1002"                    paused: still waiting

beside it what that orderbot printed for `runs --json` (runs.json), and the orders file as
the approved cancel left it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import warm_orderbot
from clikit import cli
from runkit import open_store, previous_release, run_ids, sql, state_dir

from orderbot.runs.record import TAG_PREFIX
from orderbot.runs.takeover import ASIDE

FIXTURE = Path(__file__).parent / "fixtures" / "previous-release"
ANSWERED, STEP_LIMITED, APPROVED, WAITING = (
    "261204-203151-33aa",
    "261204-203152-28c0",
    "261204-203153-c2d0",
    "261204-203154-1009",
)
QUESTIONS = {
    ANSWERED: "查询订单 ORD-1001 的状态。",
    STEP_LIMITED: "查询 ORD-1003",
    APPROVED: "取消订单 ORD-1008",
    WAITING: "取消订单 ORD-1002",
}
HEAD = "b2d9ea0a386ed3842abb4b218e290c9488c589188bb6b51e200b94be65bfce4d"  # what `audit --verify` said then
OLD = ("runs", "runs.index", "audit.log", "audit.log.lock")
# The paused cancel was asked for on 2026-12-04: approvals expire after 24 hours by default.
LONG_AGO = {"ORDERBOT_APPROVAL_TTL_HOURS": "1000000"}


def order_status(orders: Path, order_id: str) -> str:
    return next(o["status"] for o in json.loads(orders.read_text("utf-8"))["orders"] if o["order_id"] == order_id)


def test_a_state_directory_of_the_previous_release_is_listed_shown_and_verified_as_it_was(tmp_path):
    previous_release(tmp_path)
    listed = cli("runs")
    assert listed.exit_code == 0, listed.output
    [note] = listed.stderr.splitlines()  # said once, by the command that took it over
    assert "4 runs and 4 audit entries" in note and str(state_dir() / ASIDE) in note
    for run_id, question in QUESTIONS.items():
        assert [line for line in listed.stdout.splitlines() if run_id in line and question in line], listed.stdout
    # What `runs --json` printed then, field for field.
    assert json.loads(cli("runs", "--json").stdout) == json.loads((FIXTURE / "runs.json").read_text("utf-8"))
    for run_id, question in QUESTIONS.items():
        shown = cli("runs", "show", run_id)
        assert shown.exit_code == 0 and shown.stderr == "", shown.output
        assert question in shown.stdout and "altered" not in shown.stdout
        as_kept = json.loads((FIXTURE / "state" / "runs" / f"{run_id}.json").read_bytes())
        assert json.loads(cli("runs", "show", run_id, "--json").stdout) == as_kept  # the very record
    assert "订单 ORD-1001 的状态是：已发货。" in cli("runs", "show", ANSWERED).stdout
    assert f"orderbot resume {STEP_LIMITED} --max-steps 3" in cli("runs", "show", STEP_LIMITED).stdout
    assert f"orderbot resume {WAITING} --approve --user C001" in cli("runs", "show", WAITING).stdout
    verified = json.loads(cli("audit", "--verify", "--json").stdout)
    assert verified["intact"] and verified["entries"] == 4 and verified["head"] == HEAD
    assert verified["problems"] == []


def test_the_old_files_are_moved_aside_whole_and_a_run_exports_as_its_old_file(tmp_path):
    previous_release(tmp_path)
    assert cli("runs").exit_code == 0
    assert sorted(p.name for p in state_dir().iterdir()) == [ASIDE, "orderbot.log", "record.key", "runs.db"]
    aside = state_dir() / ASIDE
    assert sorted(p.name for p in aside.iterdir()) == sorted(OLD)
    for old in (FIXTURE / "state").rglob("*"):  # never deleted, never changed
        moved = aside / old.relative_to(FIXTURE / "state")
        if old.is_file() and old.name not in ("record.key", "orderbot.log"):
            assert moved.read_bytes() == old.read_bytes(), moved
    for run_id in (ANSWERED, STEP_LIMITED, APPROVED, WAITING):
        exported = tmp_path / f"{run_id}.json"
        assert cli("runs", "export", run_id, "-o", str(exported)).exit_code == 0
        assert exported.read_bytes() == (FIXTURE / "state" / "runs" / f"{run_id}.json").read_bytes()
    again = cli("runs")  # once: the next command finds it done
    assert again.exit_code == 0 and again.stderr == ""
    assert sql("SELECT runs, entries, left_out FROM run_imports") == [(4, 4, 0)]


def test_the_paused_cancel_is_approved_and_executed_once(tmp_path):
    orders = previous_release(tmp_path)
    [waiting] = json.loads(cli("approvals", "--json").stdout)
    assert (waiting["run_id"], waiting["customer"], waiting["tool"]) == (WAITING, "C001", "cancel_order")
    assert waiting["arguments"] == {"order_id": "ORD-1002", "reason": "用户要求取消"}  # bound to the same call
    approve = ("resume", WAITING, "--approve", "--user", "C001", "--orders", str(orders))
    done = cli(*approve, env=LONG_AGO)
    assert done.exit_code == 0, done.output
    assert order_status(orders, "ORD-1002") == "已取消"
    changed = orders.read_bytes()
    again = cli(*approve, env=LONG_AGO)
    assert again.exit_code == 9 and "already approved" in again.stderr, again.output
    assert "nothing was done" in again.stderr
    assert orders.read_bytes() == changed  # not a second time
    verified = json.loads(cli("audit", "--verify", "--json").stdout)
    assert verified["intact"] and verified["entries"] == 6 and verified["problems"] == [], verified
    events = [(e["event"], e["run_id"]) for e in json.loads(cli("audit", "--json").stdout)]
    assert events[3:] == [("proposed", WAITING), ("approved", WAITING), ("executed", WAITING)]
    assert json.loads(cli("approvals", "--json").stdout) == []


@pytest.mark.slow  # sixteen processes of their own
def test_sixteen_asks_started_at_once_on_an_old_state_directory_are_all_kept(tmp_path):
    """Sixteen `orderbot ask` processes at once on a state directory of the previous release:
    one of them takes it over, every one of them keeps its run, and the old runs stay."""
    orders = previous_release(tmp_path)
    asks = [
        subprocess.Popen(
            [warm_orderbot.command(), "ask", "--json", "--orders", str(orders), f"查询 ORD-{1001 + n % 14}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ,
        )
        for n in range(16)
    ]
    outcomes = [(ask.wait(timeout=120), *ask.communicate()) for ask in asks]
    kept = set(run_ids())
    told = [err for _, _, err in outcomes if "came over" in err]
    assert len(told) == 1, [err for _, _, err in outcomes]  # taken over once, by one of them
    assert [code for code, _, _ in outcomes] == [0] * 16, [err for _, _, err in outcomes]
    mine = [json.loads(out)["run_id"] for _, out, _ in outcomes]
    assert len(set(mine)) == 16
    assert kept == {ANSWERED, STEP_LIMITED, APPROVED, WAITING, *mine}
    assert sql("SELECT count(*) FROM run_audit") == [(4,)] and len(sql("SELECT * FROM run_imports")) == 1
    assert [p.name for p in state_dir().iterdir() if p.name.startswith(ASIDE)] == [ASIDE]


def test_a_takeover_noted_but_not_moved_is_never_imported_twice(tmp_path):
    """A process killed between the import and moving the old files aside: the next one
    finds the import noted and only moves them (to a folder of their own)."""
    previous_release(tmp_path)
    open_store().close()
    shutil.copytree(FIXTURE / "state" / "runs", state_dir() / "runs")  # the old files, back in place
    shutil.copyfile(FIXTURE / "state" / "audit.log", state_dir() / "audit.log")
    listed = cli("runs", "--json")
    assert listed.exit_code == 0 and listed.stderr == ""
    assert len(json.loads(listed.stdout)) == 4 and sql("SELECT count(*) FROM run_audit") == [(4,)]
    assert not (state_dir() / "runs").exists() and (state_dir() / f"{ASIDE}.2" / "runs").is_dir()


def test_a_takeover_that_fails_half_way_leaves_everything_as_it_was(tmp_path):
    """Whole or not at all: the database refuses the third audit entry (a trigger stands in
    for a full disk); nothing of the import stays, the old files stay where they were, and
    the next start brings everything over."""
    orders = previous_release(tmp_path)
    aside = tmp_path / "old"
    shutil.move(state_dir(), aside)
    open_store().close()  # a database of this orderbot's, made before the old files came back
    sql("CREATE TRIGGER full BEFORE INSERT ON run_audit WHEN NEW.seq = 3 BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    for name in (*OLD, "record.key"):
        shutil.move(aside / name, state_dir() / name)
    failed = cli("runs")
    assert failed.exit_code == 6 and "disk full" in failed.stderr, failed.output
    assert len(failed.stderr.splitlines()) == 1 and "Traceback" not in failed.output
    assert sql("SELECT count(*) FROM runs") == [(0,)] and sql("SELECT count(*) FROM run_audit") == [(0,)]
    assert all((state_dir() / name).exists() for name in OLD) and not (state_dir() / ASIDE).exists()
    sql("DROP TRIGGER full")
    listed = cli("runs", "--json")
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 4 and "4 runs" in listed.stderr
    assert order_status(orders, "ORD-1002") == "处理中"


def test_broken_and_hostile_old_records_are_left_aside_named_and_the_rest_comes_over(tmp_path):
    previous_release(tmp_path)
    runs = state_dir() / "runs"
    victim = tmp_path / "victim.json"
    victim.write_bytes((runs / f"{ANSWERED}.json").read_bytes())
    planted = {
        "261101-000001-0001.json": b'{"format": "orderbot-run", "version": 2, "run_',  # cut off
        "261101-000002-0002.json": b'{"hello": "world"}',  # not a record
        # another state directory's: a tag this key did not make
        "261101-000003-0003.json": (runs / f"{ANSWERED}.json").read_bytes().replace(b"C001", b"C003"),
    }
    for name, data in planted.items():
        (runs / name).write_bytes(data)
    (runs / "261101-000004-0004.json").symlink_to(victim)  # a link: never followed
    os.mkfifo(runs / "261101-000005-0005.json")  # a FIFO: never waited on
    with open(runs / "261101-000006-0006.json", "wb") as huge:
        huge.truncate(64 << 20)  # far past any record's bound: not read
    shutil.copyfile(runs / f"{ANSWERED}.json", runs / "261101-000007-0007.json")  # named for another run
    log = state_dir() / "audit.log"
    first = log.read_bytes().splitlines()[0]
    log.write_bytes(log.read_bytes() + b"not an entry\n" + first + b"\n")  # garbage, then entry 1 again
    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    assert sorted(r["run_id"] for r in json.loads(listed.stdout)) == [ANSWERED, STEP_LIMITED, APPROVED, WAITING]
    notes = listed.stderr.splitlines()
    assert "4 runs and 4 audit entries" in notes[0]
    left = notes[1:]
    assert len(left) == 9, notes
    for number in range(1, 8):
        assert sum(f"runs/261101-00000{number}-000{number}.json" in line for line in left) == 1, (number, left)
    assert sum("audit.log:5" in line for line in left) == 1 and sum("audit.log:6" in line for line in left) == 1
    assert all(str(state_dir() / ASIDE) in line for line in left)
    assert victim.read_bytes() == (FIXTURE / "state" / "runs" / f"{ANSWERED}.json").read_bytes()
    moved = state_dir() / ASIDE / "runs"
    assert (moved / "261101-000004-0004.json").is_symlink() and stat.S_ISFIFO(
        os.lstat(moved / "261101-000005-0005.json").st_mode
    )
    assert (moved / "261101-000003-0003.json").read_bytes() == planted["261101-000003-0003.json"]
    verified = json.loads(cli("audit", "--verify", "--json").stdout)
    assert verified["intact"] and verified["head"] == HEAD
    assert TAG_PREFIX in (moved / f"{WAITING}.json").read_bytes()
