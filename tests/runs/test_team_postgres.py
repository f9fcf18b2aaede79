"""One PostgreSQL database, two operator roles, desk1 and desk2, set up as docs/team.md says
(its SQL blocks are run here, so the page cannot drift from what works): desk1's run waits,
desk2 sees it in the queue, four eyes refuses desk1's own approval and desk2's executes it,
the audit log names both and verifies, and stops verifying after a row is changed by hand.
What the server itself refuses (a desk changing or removing the log, settling in another
desk's name) is checked with the desks' own connections."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from teamkit import PASSWORDS, make_team, run, sql_block, statements

from orderbot.errors import ExitCode
from orderbot.runs.sql import SCHEMA_VERSION


@pytest.fixture
def team(postgres_server, tmp_path):
    """A database `team_*` set up as docs/team.md says (tests/teamkit.py); the URL of each role."""
    database = f"team_{tmp_path.name[-20:].replace('-', '_').lower()}"
    yield make_team(postgres_server, database)
    postgres_server.drop_database(database)


def test_desk1_asks_desk2_approves_with_four_eyes_and_the_audit_names_both(team):
    desk1, desk2 = team("desk1"), team("desk2")
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1002")
    assert asked.exit_code == 4, asked.output
    run_id = json.loads(asked.stdout)["run_id"]
    assert json.loads(asked.stdout)["operator"] == "desk1"

    [waiting] = json.loads(run("approvals", "--runs", desk2, "--json").stdout)
    assert waiting["run_id"] == run_id and waiting["requested_by"] == "desk1" and waiting["customer"] == "C001"

    four_eyes = {"ORDERBOT_FOUR_EYES": "1"}
    own = run("approvals", "approve", run_id, "--runs", desk1, "--orders", desk1, env=four_eyes)
    assert own.exit_code == ExitCode.REFUSED and "four eyes: desk1 asked for the action" in own.output, own.output
    approved = run("approvals", "approve", run_id, "--runs", desk2, "--orders", desk2, "--json", env=four_eyes)
    assert approved.exit_code == 0, approved.output
    assert json.loads(approved.stdout)["operator"] == "desk2"
    shown = run("orders", "show", "ORD-1002", "--orders", desk2, "--json")
    assert json.loads(shown.stdout)["status"] == "已取消"

    entries = json.loads(run("audit", "--runs", desk2, "--json").stdout)
    assert [(e["event"], e["requested_by"], e["decided_by"]) for e in entries] == [
        ("proposed", "desk1", None),
        ("approved", "desk1", "desk2"),
        ("executed", "desk1", "desk2"),
    ]
    listed = run("runs", "--runs", desk2)
    assert "desk1" in listed.output and "operator" in listed.output
    assert run("audit", "--verify", "--runs", desk1).exit_code == 0


def test_the_server_refuses_what_no_desk_may_do_and_verify_finds_a_superusers_edit(team, postgres_server):
    """With the documented grants a desk reads the queue and the log and writes neither: no
    INSERT, UPDATE, DELETE or TRUNCATE of the log, no row of the queue, no policy, no look at
    the link key; it writes them only through the store's functions, in its own name."""
    import psycopg

    desk1, desk2 = team("desk1"), team("desk2")
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1002")
    run_id = json.loads(asked.stdout)["run_id"]
    with psycopg.connect(desk1, autocommit=True) as connection:
        for statement in (
            "UPDATE run_audit SET decided_by = 'desk2'",
            "DELETE FROM run_audit",
            "TRUNCATE run_audit",
            "INSERT INTO run_audit SELECT seq + 1, at, 'rejected', run_id, call_id, tool, arguments, customer, "
            "requested_by, 'desk1', result, 'no', hash, hash FROM run_audit",
            "UPDATE run_approvals SET status = 'approved', decided_by = 'desk2'",
            "INSERT INTO run_approvals SELECT run_id, 'call_2', tool, arguments, description, customer, "
            "requested_by, requested_at, status FROM run_approvals",
            "INSERT INTO run_policy VALUES ('four_eyes', 'off')",
            "INSERT INTO run_approvers VALUES ('desk1')",
            "SELECT key FROM run_link_key",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connection.execute(statement)
        connection.execute("UPDATE orders SET status = status WHERE order_id = 'ORD-1001'")  # what grants cannot stop
    assert run("approvals", "approve", run_id, "--runs", desk2, "--orders", desk2).exit_code == 0
    assert run("audit", "--verify", "--runs", desk2).exit_code == 0

    owner = team("runs_owner")
    refused = pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only")
    with psycopg.connect(owner, autocommit=True) as connection, refused:  # even the owner: the trigger says no
        connection.execute("UPDATE run_audit SET decided_by = 'desk1' WHERE seq = 2")
    database = desk2.rsplit("/", 1)[1]  # a superuser can switch the triggers off; the chain still tells
    with psycopg.connect(postgres_server.url(database), autocommit=True) as connection:
        connection.execute("SET session_replication_role = replica")
        connection.execute("UPDATE run_audit SET decided_by = 'desk1' WHERE seq = 2")
    broken = run("audit", "--verify", "--runs", desk2)
    assert broken.exit_code == 1 and "entry 2 was changed" in broken.output


def test_a_store_of_the_older_schema_has_its_guards_replaced_by_its_owner(team, postgres_server):
    """Version 1's triggers named the role a session switched to; opening the store replaces
    them, which only the owner of their functions may do: a desk is told to ask the owner."""
    import psycopg

    database = team("desk1").rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.url(database), autocommit=True) as superuser:
        superuser.execute("UPDATE run_schema SET version = 1")
    desk = run("approvals", "--runs", team("desk1"))
    assert desk.exit_code == 6 and "made by an older orderbot (schema version 1)" in desk.output, desk.output
    assert "its owner opens it once" in desk.output
    assert run("runs", "--runs", team("runs_owner")).exit_code == 0
    with psycopg.connect(postgres_server.url(database), autocommit=True) as superuser:
        assert superuser.execute("SELECT version FROM run_schema").fetchall() == [(SCHEMA_VERSION,)]
    assert run("approvals", "--runs", team("desk1")).exit_code == 0


def _four_eyes_and_desk2_approves(team) -> None:
    """docs/team.md's policy: four eyes for everyone, and only desk2 approves."""
    import psycopg

    with psycopg.connect(team("runs_owner"), autocommit=True) as connection:
        for statement in statements(sql_block("as runs_owner: four eyes for everyone")):
            connection.execute(statement)


def _at_desk(team, role: str) -> tuple[str, dict]:
    """A desk's URL as docs/team.md has it typed (no password) and its environment (PGPASSWORD)."""
    url = team(role)
    return url.replace(f":{PASSWORDS[role]}@", "@"), {"PGPASSWORD": PASSWORDS[role], "COLUMNS": "80"}


PAUSED_FOR_ANOTHER = {
    "en": "Paused: another operator must approve this action.",
    "zh": "已暂停：这个操作需要另一位操作员批准。",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_pause_under_four_eyes_gives_the_command_another_desk_runs_with_its_own_login(team, lang):
    """The requester may not approve: the pause says another operator must, and its command
    (continued between its arguments where the line is short, as a shell continues one) names
    LOGIN in both URLs; at desk2, LOGIN replaced by desk2, it approves and executes the call."""
    _four_eyes_and_desk2_approves(team)
    desk1, desk1_env = _at_desk(team, "desk1")
    asked = run(
        "--lang", lang, "ask", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1002", env=desk1_env
    )
    assert asked.exit_code == ExitCode.AWAITING_APPROVAL, asked.output
    assert PAUSED_FOR_ANOTHER[lang] in asked.output and "your approval" not in asked.output, asked.output
    run_id = re.search(r"\d{6}-\d{6}-[0-9a-f]{4}", asked.output)[0]
    shown = asked.output[asked.output.index("orderbot approvals approve") :].splitlines()
    end = next(i for i, line in enumerate(shown) if not line.endswith(" \\"))
    command = shlex.join(shlex.split("\n".join(shown[: end + 1]).replace("\\\n", "")))  # as a shell reads it pasted
    anyone = desk1.replace("desk1@", "LOGIN@")
    assert command == f"orderbot approvals approve {run_id} --runs {anyone} --orders {anyone}", asked.output

    desk2, desk2_env = _at_desk(team, "desk2")
    approved = run(*shlex.split(command.replace("LOGIN@", "desk2@"))[1:], env=desk2_env)
    assert approved.exit_code == 0, approved.output
    shown = run("orders", "show", "ORD-1002", "--orders", desk2, "--json", env=desk2_env)
    assert json.loads(shown.stdout)["status"] == "已取消"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_approval_without_orders_refused_the_requesters_login_says_to_pass_ones_own(team, lang):
    """Without --orders, desk2's approval connects to the orders as the record names them,
    as desk1: the server refuses desk2's password for desk1, and the sentence says to pass
    --orders with desk2's own login, which then approves."""
    _four_eyes_and_desk2_approves(team)
    desk1, desk1_env = _at_desk(team, "desk1")
    asked = run(
        "--lang",
        lang,
        "ask",
        "--json",
        "--runs",
        desk1,
        "--orders",
        desk1,
        "--user",
        "C001",
        "取消订单 ORD-1002",
        env=desk1_env,
    )
    run_id = json.loads(asked.stdout)["run_id"]
    anyone = desk1.replace("desk1@", "LOGIN@")  # --json's command is the one for another desk too
    assert (
        json.loads(asked.stdout)["resume_command"]
        == f"orderbot approvals approve {run_id} --runs {anyone} --orders {anyone}"
    )

    desk2, desk2_env = _at_desk(team, "desk2")
    refused = run("--lang", lang, "approvals", "approve", run_id, "--runs", desk2, env=desk2_env)
    assert refused.exit_code == ExitCode.CONFIG, refused.output
    said = {
        "en": f"{desk1}: the server refused the user name or password; the run's record names its orders with the "
        f"login of the operator who started it: pass --orders with your own ({desk2})",
        "zh": f"{desk1}：服务器拒绝了这个用户名或密码；运行记录里的订单连接用的是发起运行的操作员的登录名："
        f"请用 --orders 给出你自己的（{desk2}）",
    }[lang]
    assert said in " ".join(refused.output.split()), refused.output
    assert run("approvals", "approve", run_id, "--runs", desk2, "--orders", desk2, env=desk2_env).exit_code == 0
