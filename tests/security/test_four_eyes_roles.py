"""Four eyes holds against a database user, not only against orderbot's flags: on docs/team.md's
own PostgreSQL setup (four eyes on in run_policy), desk1 cannot approve the cancel its own run
asked for by switching its session to the group role it is a member of, however it switches
(a role option in the URL, PGOPTIONS, a role default it sets on itself, SET ROLE in psql), and
an approval settled by hand in the database is never carried out by orderbot."""

from __future__ import annotations

import json

import psycopg
import pytest
from teamkit import make_team, run, sql_block, statements

from orderbot.errors import ExitCode

GROUP = "orderbot_operators"
AS_GROUP = "?options=-c%20role%3Dorderbot_operators"  # libpq: SET ROLE at connect
SWITCHED = "logged in as desk1 but acts as orderbot_operators"


@pytest.fixture
def waiting(postgres_server, tmp_path):
    """The team, four eyes on for every operator and desk2 the one approver (docs/team.md's own
    SQL), and desk1's run waiting for its cancel."""
    database = f"eyes_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team(postgres_server, database)
    with psycopg.connect(url("runs_owner"), autocommit=True) as owner:  # the owner sets the rules
        for statement in statements(sql_block("as runs_owner: four eyes for everyone")):
            owner.execute(statement)
    desk1 = url("desk1")
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1002")
    assert asked.exit_code == 4, asked.output
    yield url, json.loads(asked.stdout)["run_id"]
    postgres_server.drop_database(database)


def untouched(url, run_id: str) -> None:
    """The order is not cancelled, the call still waits, the log holds only its proposal."""
    desk2 = url("desk2")
    assert json.loads(run("orders", "show", "ORD-1002", "--orders", desk2, "--json").stdout)["status"] == "处理中"
    assert [w["run_id"] for w in json.loads(run("approvals", "--runs", desk2, "--json").stdout)] == [run_id]
    assert [e["event"] for e in json.loads(run("audit", "--runs", desk2, "--json").stdout)] == ["proposed"]


def test_no_role_switch_lets_desk1_approve_or_ask_as_the_group(waiting, postgres_server):
    url, run_id = waiting
    desk1 = url("desk1")
    switched = desk1 + AS_GROUP
    by_url = run("approvals", "approve", run_id, "--runs", switched, "--orders", switched)
    assert by_url.exit_code == ExitCode.REFUSED and SWITCHED in by_url.output and "nothing was done" in by_url.output
    pgoptions = {"PGOPTIONS": f"-c role={GROUP}"}
    by_env = run("approvals", "approve", run_id, "--runs", desk1, "--orders", desk1, env=pgoptions)
    assert by_env.exit_code == ExitCode.REFUSED and SWITCHED in by_env.output
    with psycopg.connect(desk1, autocommit=True) as connection:  # a role may set its own defaults
        connection.execute(f"ALTER ROLE desk1 SET role = '{GROUP}'")
    try:
        by_default = run("approvals", "approve", run_id, "--runs", desk1, "--orders", desk1)
        assert by_default.exit_code == ExitCode.REFUSED and SWITCHED in by_default.output
    finally:
        with postgres_server.admin() as admin:
            admin.execute("ALTER ROLE desk1 RESET role")
    untouched(url, run_id)

    # A run cannot be started under the group role either, so none is requested in its name.
    before = run("runs", "--runs", url("desk2"), "--json").stdout
    started = run("ask", "--runs", switched, "--orders", switched, "--user", "C001", "取消订单 ORD-1003")
    assert started.exit_code == ExitCode.REFUSED and SWITCHED in started.output
    assert run("runs", "--runs", url("desk2"), "--json").stdout == before

    rejected = run("approvals", "reject", run_id, "--runs", desk1, "--orders", desk1, "--reason", "客户已改主意")
    assert rejected.exit_code == 0, rejected.output  # saying no is open to every operator, its own run's too


def test_set_role_in_psql_settles_nothing_and_a_row_settled_by_hand_is_never_carried_out(waiting, postgres_server):
    url, run_id = waiting
    refused = pytest.raises(psycopg.errors.InsufficientPrivilege)
    settle = "UPDATE run_approvals SET status = 'approved', decided_by = %s, decided_at = 'now'"
    decide = "SELECT run_decide(%s, 'call_offline_1', true, NULL)"
    with psycopg.connect(url("desk1"), autocommit=True) as connection:
        with refused:
            connection.execute(settle, ("desk1",))  # no desk writes the queue
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="desk1 is not on the list of operators"):
            connection.execute(decide, (run_id,))  # and the store's function holds its rules
        connection.execute(f"SET ROLE {GROUP}")
        for name in (GROUP, "desk1", "desk2"):
            with refused:
                connection.execute(settle, (name,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="logged in as desk1 acts as orderbot_operators"):
            connection.execute(decide, (run_id,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="logged in as desk1 acts as orderbot_operators"):
            connection.execute("SELECT run_decide(%s, 'call_offline_1', false, 'no')", (run_id,))
        forged = (
            "INSERT INTO run_audit SELECT seq + 1, at, 'approved', run_id, call_id, tool, arguments, customer, "
            f"requested_by, '{GROUP}', result, reason, hash, hash FROM run_audit"
        )
        with refused:
            connection.execute(forged)
    untouched(url, run_id)

    database = url("desk2").rsplit("/", 1)[1]  # a superuser, triggers off, settles it in the group's name
    with psycopg.connect(postgres_server.url(database), autocommit=True) as superuser:
        superuser.execute("SET session_replication_role = replica")
        superuser.execute(settle, (GROUP,))
    desk2 = url("desk2")
    approved = run("approvals", "approve", run_id, "--runs", desk2, "--orders", desk2)
    assert approved.exit_code == ExitCode.REFUSED and f"approved by {GROUP}" in approved.output, approved.output
    assert "nothing was done" in approved.output
    assert json.loads(run("orders", "show", "ORD-1002", "--orders", desk2, "--json").stdout)["status"] == "处理中"
