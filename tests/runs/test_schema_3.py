"""Stores an earlier orderbot wrote (run store schema version 3, when desks wrote the queue and
the audit log themselves; tests/runs/fixtures/schema-3 says how they were made) are taken over
by today's: opened once by the PostgreSQL store's owner (a SQLite file by anyone who can write
it), their runs and their logs come over as they were and verify, and the desks go on working
with the grants they had, now through the store's functions and no longer writing either
table. A log the desks had keyed is linked on by the server with that key, which the owner
gives once."""

from __future__ import annotations

import json
import sqlite3

import psycopg
import pytest
from teamkit import THEN, make_team_then, run

from orderbot.errors import ExitCode
from orderbot.runs.sql import SCHEMA_VERSION

KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"  # the desks' key then (make.py)


@pytest.fixture
def then(postgres_server, tmp_path, request):
    database = f"then_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team_then(postgres_server, database, request.param)
    yield url
    postgres_server.drop_database(database)


def entries(url, env: dict | None = None) -> list[dict]:
    return json.loads(run("audit", "--runs", url, "--json", env=env).stdout)


@pytest.mark.parametrize("then", ["team.sql"], indirect=True)
def test_a_team_store_of_schema_3_is_taken_over_by_its_owner_and_verifies(then):
    desk1, desk2 = then("desk1"), then("desk2")
    early = run("approvals", "--runs", desk1)
    assert early.exit_code == ExitCode.CONFIG and "made by an older orderbot (schema version 3)" in early.output
    assert run("runs", "--runs", then("runs_owner")).exit_code == 0  # the owner opens it once
    with psycopg.connect(then("runs_owner"), autocommit=True) as owner:
        assert owner.execute("SELECT version FROM run_schema").fetchall() == [(SCHEMA_VERSION,)]

    before = entries(desk2)
    assert [(e["event"], e["requested_by"], e["decided_by"]) for e in before] == [
        ("proposed", "desk1", None),
        ("approved", "desk1", "desk2"),
        ("executed", "desk1", "desk2"),
        ("proposed", "desk1", None),
        ("rejected", "desk1", "desk2"),
        ("proposed", "desk1", None),  # C002's cancel, asked and approved at desk1's own prompt
        ("approved", "desk1", "desk1"),
        ("executed", "desk1", "desk1"),
        ("proposed", "desk1", None),
    ]
    intact = run("audit", "--verify", "--runs", desk1)
    assert intact.exit_code == 0 and "intact: 9 entries" in intact.output, intact.output
    for listed in json.loads(run("runs", "--runs", desk1, "--json").stdout):  # every record verifies as before
        shown = json.loads(run("runs", "show", listed["run_id"], "--runs", desk1, "--json").stdout)
        assert shown["run_id"] == listed["run_id"] and "altered" not in json.dumps(shown)

    with psycopg.connect(desk1, autocommit=True) as connection:  # the grants of that day write nothing now
        for statement in (
            "INSERT INTO run_audit SELECT seq + 100, at, event, run_id, call_id, tool, arguments, customer, "
            "requested_by, decided_by, result, reason, hash, hash FROM run_audit WHERE seq = 9",
            "UPDATE run_approvals SET status = 'rejected', decided_by = 'desk1'",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connection.execute(statement)

    [waiting] = json.loads(run("approvals", "--runs", desk2, "--json").stdout)  # C003's ORD-1009
    approved = run("approvals", "approve", waiting["run_id"], "--runs", desk2, "--orders", desk2)
    assert approved.exit_code == 0, approved.output
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", "C002", "取消订单 ORD-1004")
    later = json.loads(asked.stdout)["run_id"]
    rejected = run("approvals", "reject", later, "--runs", desk2, "--orders", desk2, "--reason", "重复")
    assert rejected.exit_code == 0, rejected.output
    after = entries(desk1)
    assert after[:9] == before  # the old entries as they were, numbers and links
    assert [(e["event"], e["requested_by"], e["decided_by"]) for e in after[9:]] == [
        ("approved", "desk1", "desk2"),
        ("executed", "desk1", "desk2"),
        ("proposed", "desk1", None),
        ("rejected", "desk1", "desk2"),
    ]
    intact = run("audit", "--verify", "--runs", desk2)
    assert intact.exit_code == 0 and "intact: 13 entries" in intact.output, intact.output


@pytest.mark.parametrize("then", ["team-keyed.sql"], indirect=True)
def test_a_log_the_desks_keyed_is_linked_on_by_the_server_with_the_key_its_owner_gives_once(then):
    owner = then("runs_owner")
    without = run("runs", "--runs", owner)
    assert without.exit_code == ExitCode.CONFIG, without.output
    assert "linked with an audit key from entry 2 on" in without.output and "its owner opens it once" in without.output
    other = run("runs", "--runs", owner, env={"ORDERBOT_AUDIT_KEY": "f" * 64})
    assert other.exit_code == ExitCode.CONFIG and "do not match this session's audit key" in other.output
    assert run("runs", "--runs", owner, env={"ORDERBOT_AUDIT_KEY": KEY}).exit_code == 0
    with psycopg.connect(then("desk1"), autocommit=True) as desk, pytest.raises(psycopg.errors.InsufficientPrivilege):
        desk.execute("SELECT key FROM run_link_key")  # only the owner's functions read it

    desk1, desk3 = then("desk1"), then("desk3")
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", "C002", "取消订单 ORD-1004")
    assert asked.exit_code == ExitCode.AWAITING_APPROVAL, asked.output  # no key at the desk: the server links
    approved = run("approvals", "approve", json.loads(asked.stdout)["run_id"], "--runs", desk3, "--orders", desk3)
    assert approved.exit_code == 0, approved.output
    newest = entries(desk3)[-3:]
    said = [(e["event"], e["decided_by"]) for e in newest]
    assert said == [("proposed", None), ("approved", "desk3"), ("executed", "desk3")]
    assert all(e["hash"].startswith("hmac:") for e in newest)

    server_checked = run("audit", "--verify", "--runs", desk3)  # the desk holds no key: the server checks
    assert server_checked.exit_code == 0, server_checked.output
    assert "intact: 12 entries" in server_checked.output
    assert "with the audit key from entry 2 on" in server_checked.output
    keyed = run("audit", "--verify", "--runs", desk3, env={"ORDERBOT_AUDIT_KEY": KEY})  # an auditor's copy of the key
    assert keyed.exit_code == 0 and keyed.output.split("Head: ")[1] == server_checked.output.split("Head: ")[1]


def test_a_team_sqlite_file_of_schema_3_is_taken_over_and_verifies(tmp_path, orders_file):
    with sqlite3.connect(tmp_path / "runs.db") as made:
        made.executescript((THEN / "sqlite.sql").read_text(encoding="utf-8"))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    intact = run("audit", "--verify", "--runs", url)
    assert intact.exit_code == 0 and "intact: 9 entries" in intact.output, intact.output
    assert sqlite3.connect(tmp_path / "runs.db").execute("SELECT version FROM run_schema").fetchall() == [
        (SCHEMA_VERSION,)
    ]
    [waiting] = json.loads(run("approvals", "--runs", url, "--json").stdout)
    approved = run("approvals", "approve", waiting["run_id"], "--runs", url, "--orders", str(orders_file))
    assert approved.exit_code == 0, approved.output
    intact = run("audit", "--verify", "--runs", url)
    assert intact.exit_code == 0 and "intact: 11 entries" in intact.output, intact.output
