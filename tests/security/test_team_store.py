"""A team's run store is written by many hands: what it shows comes out escaped, and what a
hand edits changes nothing an approval does.

- The queue and the audit log show a model's arguments, a customer's id and an operator's
  reason; escape sequences in them reach the terminal as `\\x1b`, never raw.
- A pending approval row edited to name another order approves nothing: orderbot acts on
  the record (tagged), and the edited record is refused.
- A row marked approved by hand, or an approval the store's policy forbids, is never carried
  out: the store checks the row, the log and the policy before it marks a call executing.
- An operator the store does not list as an approver is not asked at its own prompt.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pexpect
import pytest
from clikit import cli
from forked_terminal import orderbot_in_a_terminal
from saying import raises

from orderbot.errors import ExitCode, OperatorRefused, RecordError
from orderbot.loop.engine import Limits
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.base import Policy
from orderbot.runs.sqlite import SqliteRunStore
from orderbot.shops.sample.stores.jsonfile import JsonStore

HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202e"


def test_escapes_written_into_the_store_are_shown_escaped_in_the_queue_and_the_log(orders_file, tmp_path):
    """The tools refuse control characters in a reason (the model cannot plant one), so the
    hostile text here is written into the tables by hand, and into an operator's reason."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    asked = cli("ask", "--json", "--runs", url, "--orders", str(orders_file), "--user", "C001", "取消订单 ORD-1002")
    run_id = json.loads(asked.stdout)["run_id"]
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("UPDATE run_approvals SET description = ?, requested_by = ?", (f"Cancel{HOSTILE}", HOSTILE))
    database.execute("UPDATE run_audit SET customer = ?", (HOSTILE,))
    database.commit()
    queue = cli("approvals", "--runs", url)
    assert queue.exit_code == 0 and "\x1b" not in queue.output and "\u202e" not in queue.output
    assert "\\x1b" in queue.output and "\\u202e" in queue.output
    rejected = cli("approvals", "reject", run_id, "--runs", url, "--reason", f"no{HOSTILE}")
    assert rejected.exit_code == 0 and "\x1b" not in rejected.output
    log = cli("audit", "--runs", url)
    assert log.exit_code == 0 and "\x1b" not in log.output and "\u202e" not in log.output
    assert json.loads(cli("audit", "--json", "--runs", url).stdout)[-1]["reason"].startswith("no\x1b")
    assert "\x1b" not in cli("audit", "--verify", "--runs", url).output  # the changed entry, named safely


def test_an_approval_row_edited_to_another_order_approves_nothing(orders_file, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    asked = cli("ask", "--json", "--runs", url, "--orders", str(orders_file), "--user", "C001", "取消订单 ORD-1002")
    run_id = json.loads(asked.stdout)["run_id"]
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("UPDATE run_approvals SET arguments = replace(arguments, 'ORD-1002', 'ORD-1013')")
    database.execute("UPDATE runs SET record = replace(record, 'ORD-1002', 'ORD-1013')")
    database.commit()
    refused = cli("approvals", "approve", run_id, "--runs", url)
    assert refused.exit_code == 6 and "altered" in refused.output
    orders = JsonStore.load(orders_file)
    assert orders.get("ORD-1002").status == "处理中" and orders.get("ORD-1013").status == "待付款"


def test_an_approval_row_settled_by_hand_in_another_name_is_never_carried_out(orders_file, tmp_path):
    """SQLite has no roles nor triggers: whoever can write the file can mark a row approved.
    orderbot then carries out nothing: the row is not what its own approval would write."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    asked = cli("ask", "--json", "--runs", url, "--orders", str(orders_file), "--user", "C001", "取消订单 ORD-1002")
    run_id = json.loads(asked.stdout)["run_id"]
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("UPDATE run_approvals SET status = 'approved', decided_by = 'someone', decided_at = 'x'")
    database.commit()
    approved = cli("approvals", "approve", run_id, "--runs", url)
    assert approved.exit_code == ExitCode.REFUSED and "already approved by someone" in approved.output, approved.output
    assert JsonStore.load(orders_file).get("ORD-1002").status == "处理中"


def test_the_store_holds_its_policy_whoever_calls_the_runner_at_the_claim_and_at_the_last_gate(
    toolbox, orders_file, tmp_path
):
    """`approvals approve` checks four eyes before it claims anything; a program driving the
    runner itself skips that check, and the store refuses its claim. Four eyes turned on
    between the claim and the `executing` mark: the store refuses to mark the call executing."""

    class PolicyAfterTheClaim(SqliteRunStore):
        def save(self, record, steps=()):
            super().save(record, steps)
            if any(step.event == "approved" for step in steps):
                self.connection.execute("INSERT INTO run_policy VALUES ('four_eyes', 'on')")

    store = PolicyAfterTheClaim.open(tmp_path / "runs.db", where="sqlite:///runs.db")
    model = ScriptedModel([calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}, call_id="c1"))])
    state = RunState.start("取消 ORD-1002", user="C001")
    Runner(toolbox, model, store, provider="scripted").start(state, Limits())
    store.connection.execute("INSERT INTO run_policy VALUES ('four_eyes', 'on')")
    runner = Runner(toolbox, ScriptedModel([text("已取消")]), store, provider="scripted")
    with raises(OperatorRefused, match="four eyes: .* cannot approve it; nothing was changed"):
        runner.resume(store.load(state.run_id), Limits(), approve=True)
    assert store.connection.execute("SELECT status FROM run_approvals").fetchall() == [("pending",)]

    store.connection.execute("DELETE FROM run_policy")
    with raises(RecordError, match="whom the audit log or the store's rules do not bear out"):
        runner.resume(store.load(state.run_id), Limits(), approve=True)
    assert JsonStore.load(orders_file).get("ORD-1002").status == "处理中"
    assert store.connection.execute("SELECT status FROM run_approvals").fetchall() == [("approved",)]
    store.close()


@pytest.mark.slow  # a terminal session
def test_an_operator_the_store_does_not_list_as_an_approver_is_not_asked_at_the_prompt(orders_file, tmp_path):
    """With run_approvers naming someone else, `ask` in a terminal pauses for the queue rather
    than letting this operator say yes at its own prompt, where no queue row is checked."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    assert cli("runs", "--runs", url).exit_code == 0
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("INSERT INTO run_approvers VALUES ('desk9')")
    database.commit()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    args = ["ask", "--runs", url, "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002"]
    child = orderbot_in_a_terminal(args, env=env, dimensions=(50, 120))
    child.expect_exact("Paused: another operator must approve this action.")  # not asked here
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4
    assert JsonStore.load(orders_file).get("ORD-1002").status == "处理中"
    assert Policy(approvers=frozenset({"desk9"})).asks_at_the_prompt("desk9")
    assert not Policy(four_eyes=True).asks_at_the_prompt("desk9")


def test_an_approval_whose_decision_left_the_log_before_the_call_ran_is_not_carried_out(toolbox, orders_file, tmp_path):
    """Between the claim and the `executing` mark the decision's audit entry is taken out (by
    hand, in SQLite): the last gate finds the log no longer bears the approval out."""

    class Tampered(SqliteRunStore):
        def save(self, record, steps=()):
            super().save(record, steps)
            if any(step.event == "approved" for step in steps):
                self.connection.execute("DELETE FROM run_audit WHERE event = 'approved'")

    store = Tampered.open(tmp_path / "runs.db", where="sqlite:///runs.db")
    model = ScriptedModel([calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不要了"}, call_id="c1"))])
    state = RunState.start("取消 ORD-1002", user="C001")
    Runner(toolbox, model, store, provider="scripted").start(state, Limits())
    runner = Runner(toolbox, ScriptedModel([text("已取消")]), store, provider="scripted")
    with raises(RecordError, match="whom the audit log or the store's rules do not bear out"):
        runner.resume(store.load(state.run_id), Limits(), approve=True)
    assert JsonStore.load(orders_file).get("ORD-1002").status == "处理中"
    store.close()
