"""The audit log holds against a desk operator with psql, her own password and nothing but the
grants docs/team.md gives (its blocks are run: tests/teamkit.py), on a real PostgreSQL:

- she cannot log an execution or a failure, nor anything else, in other roles' names: the log
  and the queue are written only by the store's functions, which name her;
- a run she copies under a new id and re-tags to say desk2 approved it at the prompt is named
  by `audit --verify`, appears in nobody's log, and the server carries out nothing of it;
- one row that does not link (a superuser's, with the triggers off) stops no desk: desk3
  still asks and approves, the next entries link on, and `--verify` names that one row;
- she never approves her own request under four eyes, even calling the function herself.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from saying import raises
from teamkit import make_team, make_team_then, run, sql_block, statements

from orderbot.errors import ExitCode, OperatorRefused
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits
from orderbot.models.scripted import ScriptedModel, text
from orderbot.runner import Runner
from orderbot.runs.postgres import PostgresRunStore
from orderbot.runs.tagged import tag_record
from orderbot.shops.sample.stores.jsonfile import JsonStore
from orderbot.shops.sample.tools import order_tools

KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"  # team-keyed.sql's (make.py)
CALL = "call_offline_1"


@pytest.fixture
def team(postgres_server, tmp_path):
    """docs/team.md's team, four eyes on for every operator (its own SQL, less the approver list)."""
    database = f"desk_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team(postgres_server, database)
    with psycopg.connect(url("runs_owner"), autocommit=True) as owner:
        for statement in statements(sql_block("as runs_owner: four eyes for everyone")):
            if "run_approvers" not in statement:
                owner.execute(statement)
    url.superuser = postgres_server.url(database)
    yield url
    postgres_server.drop_database(database)


def ask(url, desk: str, order_id: str, user: str = "C001") -> str:
    at = url(desk)
    asked = run("ask", "--json", "--runs", at, "--orders", at, "--user", user, f"取消订单 {order_id}")
    assert asked.exit_code == ExitCode.AWAITING_APPROVAL, asked.output
    return json.loads(asked.stdout)["run_id"]


def approve(url, desk: str, run_id: str):
    return run("approvals", "approve", run_id, "--runs", url(desk), "--orders", url(desk))


def log(url) -> list[tuple]:
    entries = json.loads(run("audit", "--runs", url("desk3"), "--json").stdout)
    return [(e["event"], e["run_id"], e["requested_by"], e["decided_by"]) for e in entries]


def status(url, order_id: str) -> str:
    return json.loads(run("orders", "show", order_id, "--orders", url("desk3"), "--json").stdout)["status"]


def test_a_desk_cannot_log_an_execution_or_a_failure_in_other_names(team):
    done = ask(team, "desk1", "ORD-1002")
    assert approve(team, "desk2", done).exit_code == 0
    claimed = ask(team, "desk1", "ORD-1013")
    with psycopg.connect(team("desk2"), autocommit=True) as desk2:  # desk2 approves it and is carrying it out
        assert desk2.execute("SELECT run_decide(%s, %s, true, NULL)", (claimed, CALL)).fetchone() == (True,)
        execute = "SELECT run_execute(run_id, call_id, tool, arguments, customer) FROM run_approvals WHERE run_id = %s"
        assert desk2.execute(execute, (claimed,)).fetchone() == (True,)
    before = log(team)

    as_desk3 = "SELECT seq + 1, at, %s, run_id, call_id, tool, arguments, customer, 'desk3', 'desk2', result, "
    as_desk3 += "reason, hash, hash"
    with psycopg.connect(team("desk1"), autocommit=True) as desk1:
        for event in ("executed", "failed"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                desk1.execute(f"INSERT INTO run_audit {as_desk3} FROM run_audit ORDER BY seq DESC LIMIT 1", (event,))
        for ok in (True, False):  # through the function: only the session carrying a call out logs its outcome
            for run_id in (done, claimed):
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match="desk1 is not carrying out"):
                    desk1.execute("SELECT run_outcome(%s, %s, %s, '{}')", (run_id, CALL, ok))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="desk1 has not approved call"):
            desk1.execute(execute, (claimed,))
    assert log(team) == before and status(team, "ORD-1013") == "待付款"
    assert before[-2:] == [("proposed", claimed, "desk1", None), ("approved", claimed, "desk1", "desk2")]
    assert run("audit", "--verify", "--runs", team("desk3")).exit_code == 0


def test_a_copied_run_retagged_to_say_desk2_approved_it_is_found_and_never_carried_out(team, orders_file):
    """desk1 reads the records' key (every desk tags records), copies her waiting run under a
    new id and re-tags it saying desk2 approved the cancel at the prompt: the log gains nothing
    in desk2's name, the server runs nothing, and --verify names the record."""
    mine = ask(team, "desk1", "ORD-1002")
    copy = mine[:-4] + ("0000" if not mine.endswith("0000") else "0001")
    with psycopg.connect(team("desk1"), autocommit=True) as desk1:
        key = bytes.fromhex(desk1.execute("SELECT key FROM run_key").fetchone()[0])
        doc = json.loads(desk1.execute("SELECT record FROM runs WHERE run_id = %s", (mine,)).fetchone()[0])
        del doc["integrity"]
        doc["run_id"] = doc["state"]["run_id"] = copy
        doc["decisions"][CALL] |= {"approved": True, "decided_by": "desk2", "decided_at": doc["created_at"]}
        doc["approvals"] = {CALL: True}
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
        desk1.execute(
            "INSERT INTO runs SELECT %s, created_at, written, customer, operator, status, summary, %s, 1, NULL "
            "FROM runs WHERE run_id = %s",
            (copy, tag_record(key, body).decode(), mine),
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no entry in desk2's name, however tried
            desk1.execute(
                "INSERT INTO run_audit SELECT seq + 1, at, 'executed', %s, call_id, tool, arguments, customer, "
                "requested_by, 'desk2', '{}', NULL, hash, hash FROM run_audit ORDER BY seq DESC LIMIT 1",
                (copy,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no call call_offline_1 of run"):
            desk1.execute("SELECT run_decide(%s, %s, true, NULL)", (copy, CALL))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="desk1 is not carrying out"):
            desk1.execute("SELECT run_outcome(%s, %s, true, '{}')", (copy, CALL))

    # A program of desk1's drives the runner on the copy, as if desk2's yes were real.
    store = PostgresRunStore.open(team("desk1"))
    try:
        record = store.load(copy)  # the tag verifies: the key is every desk's
        assert record.decisions[CALL].decided_by == "desk2"
        tools = Toolbox(order_tools(JsonStore.load(orders_file)))
        runner = Runner(tools, ScriptedModel([text("已取消")]), store, provider="scripted")
        with raises(OperatorRefused, match="desk1 has not approved call call_offline_1 of run"):
            runner.resume(record, Limits(), approve=True)
    finally:
        store.close()
    assert JsonStore.load(orders_file).get("ORD-1002").status == "处理中" and status(team, "ORD-1002") == "处理中"
    assert not [e for e in log(team) if "desk2" in e]
    assert json.loads(run("audit", "--runs", team("desk3"), "--operator", "desk2", "--json").stdout) == []

    found = run("audit", "--verify", "--runs", team("desk3"))
    assert found.exit_code == 1, found.output
    said = " ".join(found.output.split())
    assert f"run {copy}'s record says desk2 approved call_offline_1, but neither the queue nor the log" in said


def test_one_row_that_does_not_link_stops_no_desk_in_a_keyed_log(postgres_server, tmp_path):
    """docs/team.md's desks on a log they keyed before the server wrote it (its owner gave the
    key once): desk1 cannot append a junk `hmac:` row; a superuser's, triggers off, leaves
    desk3 asking and approving, the next entries linked on, and --verify naming that row only."""
    database = f"junk_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team_then(postgres_server, database, "team-keyed.sql")
    try:
        assert run("runs", "--runs", url("runs_owner"), env={"ORDERBOT_AUDIT_KEY": KEY}).exit_code == 0
        junk = (
            "INSERT INTO run_audit SELECT seq + 1, at, 'proposed', run_id, 'call_junk', tool, arguments, customer, "
            "session_user, NULL, NULL, NULL, hash, 'hmac:' || repeat('0', 64) FROM run_audit ORDER BY seq DESC LIMIT 1"
        )
        refused = pytest.raises(psycopg.errors.InsufficientPrivilege)
        with psycopg.connect(url("desk1"), autocommit=True) as desk1, refused:
            desk1.execute(junk)
        with psycopg.connect(postgres_server.url(database), autocommit=True) as superuser:
            superuser.execute("SET session_replication_role = replica")
            superuser.execute(junk)
            [(seq,)] = superuser.execute("SELECT max(seq) FROM run_audit").fetchall()

        asked = ask(url, "desk3", "ORD-1004", "C002")
        assert approve(url, "desk2", asked).exit_code == 0
        other = ask(url, "desk1", "ORD-1002")
        approved = approve(url, "desk3", other)
        assert approved.exit_code == 0, approved.output
        assert status(url, "ORD-1004") == "已取消" and status(url, "ORD-1002") == "已取消"

        found = run("audit", "--verify", "--runs", url("desk3"))
        assert found.exit_code == 1, found.output
        problems = [line.strip() for line in found.output.splitlines()[1:]]
        assert problems == [
            f"entry {seq} was changed (its hash does not match its fields)",
            f"entry {seq} is about call_junk of run {log_run(url, seq)}, which neither the queue nor the run "
            "knows: added",
        ], found.output
    finally:
        postgres_server.drop_database(database)


def log_run(url, seq: int) -> str:
    return json.loads(run("audit", "--runs", url("desk3"), "--json").stdout)[seq - 1]["run_id"]


def test_no_desk_approves_her_own_request_under_four_eyes_even_through_the_function(team):
    mine = ask(team, "desk1", "ORD-1002")
    own = approve(team, "desk1", mine)
    assert own.exit_code == ExitCode.REFUSED and "four eyes: desk1 asked" in own.output
    with psycopg.connect(team("desk1"), autocommit=True) as desk1:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="four eyes: desk1 asked for the action"):
            desk1.execute("SELECT run_decide(%s, %s, true, NULL)", (mine, CALL))
        # Nor by proposing a call of her own in another desk's name: the function names her.
        desk1.execute(
            "SELECT run_propose(%s, 'call_mine', tool, arguments, description, customer) FROM run_approvals", (mine,)
        )
        asked_by = desk1.execute("SELECT requested_by FROM run_approvals WHERE call_id = 'call_mine'").fetchone()[0]
        assert asked_by == "desk1"
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="four eyes"):
            desk1.execute("SELECT run_decide(%s, 'call_mine', true, NULL)", (mine,))
    assert status(team, "ORD-1002") == "处理中"
