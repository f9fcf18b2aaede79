"""The audit log against those who can write its table (docs/team.md, "Who binds whom"), on a
real PostgreSQL set up as the page says: a superuser with the triggers off, or the store's
owner, who may switch its own tables' triggers off (no desk can write it at all:
test_audit_desk.py).

- A correctly chained entry the queue does not bear out (a rejection of a call still pending)
  and the newest entries removed (a waiting call's proposal) are found, named, exit 1;
  `--head` finds a head noted earlier that is gone.
- Whoever can write the table can also rewrite the log and the queue so that they agree:
  --verify then passes. A link key the store keeps (a log the desks keyed before the server
  wrote it) changes nothing there: the owner's functions read it, so the owner can too.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from teamkit import make_team, make_team_then, run

from orderbot.runs.audit import FIELDS, from_row

COLUMNS = ", ".join((*FIELDS, "prev", "hash"))
OLD_KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"  # team-keyed.sql's (make.py)


@pytest.fixture
def team(postgres_server, tmp_path):
    database = f"forge_{tmp_path.name[-20:].replace('-', '_').lower()}"
    url = make_team(postgres_server, database)
    url.superuser = postgres_server.url(database)
    yield url
    postgres_server.drop_database(database)


def ask(url, order_id: str, user: str = "C001", env: dict | None = None) -> str:
    desk1 = url("desk1")
    asked = run("ask", "--json", "--runs", desk1, "--orders", desk1, "--user", user, f"取消订单 {order_id}", env=env)
    assert asked.exit_code == 4, asked.output
    return json.loads(asked.stdout)["run_id"]


def forge_rejection(connection, run_id: str, *, key: bytes | None = None, queue_too: bool = False) -> int:
    """As someone who can write the tables (triggers off): append a rejection by desk2 of the
    call `run_id` waits for, chained to the last entry (an HMAC only with `key`), and with
    `queue_too` settle its queue row to agree. Returns the forged entry's number."""
    last = from_row(connection.execute(f"SELECT {COLUMNS} FROM run_audit ORDER BY seq DESC LIMIT 1").fetchone())
    proposal = connection.execute(
        f"SELECT {COLUMNS} FROM run_audit WHERE run_id = %s AND event = 'proposed'", (run_id,)
    ).fetchone()
    forged = (
        from_row(proposal)
        .__class__.new(
            **{name: getattr(from_row(proposal), name) for name in FIELDS if name != "seq"}
            | {"event": "rejected", "decided_by": "desk2", "reason": "客户已改主意"}
        )
        .chained(last.seq + 1, last.hash, key)
    )
    connection.execute(
        f"INSERT INTO run_audit ({COLUMNS}) VALUES ({', '.join(['%s'] * (len(FIELDS) + 2))})",
        (*forged.values(), forged.prev, forged.hash),
    )
    if queue_too:
        connection.execute(
            "UPDATE run_approvals SET status = 'rejected', decided_by = 'desk2', decided_at = 'now' WHERE run_id = %s",
            (run_id,),
        )
    return forged.seq


def verify(url, *args: str, env: dict | None = None):
    return run("audit", "--verify", "--runs", url("desk2"), *args, env=env)


def test_a_chained_forgery_and_a_removed_proposal_are_found_without_a_key(team):
    run_id = ask(team, "ORD-1002")
    intact = verify(team)
    assert intact.exit_code == 0, intact.output
    noted = intact.output.split("Head: ")[1].split()[0]
    with psycopg.connect(team.superuser, autocommit=True) as superuser:
        superuser.execute("SET session_replication_role = replica")
        seq = forge_rejection(superuser, run_id)
    forged = verify(team)
    assert forged.exit_code == 1, forged.output
    assert f"entry {seq} says rejected for call_offline_1 of run {run_id}, but the queue says pending" in forged.output

    with psycopg.connect(team.superuser, autocommit=True) as superuser:
        superuser.execute("SET session_replication_role = replica")
        superuser.execute("DELETE FROM run_audit")  # the newest entries: the pending call's proposal too
    removed = verify(team, "--head", noted)
    assert removed.exit_code == 1
    assert f"the proposal of call_offline_1 of run {run_id} is in the queue but missing from the log" in removed.output
    assert f"the head noted earlier ({noted}) is no longer in the log" in removed.output


def test_the_owner_can_rewrite_log_and_queue_to_agree_and_a_link_key_in_the_store_does_not_stop_it(
    team, postgres_server, tmp_path
):
    """The owner may switch its own tables' triggers off: an edit alone is found; a rejection it
    chains and settles in the queue passes --verify. In a log the desks keyed, whose key the
    store keeps for its functions, the owner reads the key and forges a keyed entry just as
    well: what holds against the owner is a head noted where it cannot write."""
    run_id = ask(team, "ORD-1002")
    with psycopg.connect(team("runs_owner"), autocommit=True) as owner:
        owner.execute("ALTER TABLE run_audit DISABLE TRIGGER USER")
        owner.execute("ALTER TABLE run_approvals DISABLE TRIGGER USER")
        owner.execute("UPDATE run_audit SET customer = 'C002' WHERE seq = 1")
        changed = verify(team)
        assert changed.exit_code == 1 and "entry 1 was changed" in changed.output  # an edit alone is found
        owner.execute("UPDATE run_audit SET customer = 'C001' WHERE seq = 1")
        forge_rejection(owner, run_id, queue_too=True)
    assert verify(team).exit_code == 0  # what a chain cannot tell

    database = f"keyed_{tmp_path.name[-20:].replace('-', '_').lower()}"
    then = make_team_then(postgres_server, database, "team-keyed.sql")
    try:
        keyed = {"ORDERBOT_AUDIT_KEY": OLD_KEY}
        assert run("runs", "--runs", then("runs_owner"), env=keyed).exit_code == 0  # the key goes to the store
        [waiting] = json.loads(run("approvals", "--runs", then("desk1"), "--json").stdout)
        with psycopg.connect(then("runs_owner"), autocommit=True) as owner:
            key = bytes(owner.execute("SELECT key FROM run_link_key").fetchone()[0])
            owner.execute("ALTER TABLE run_audit DISABLE TRIGGER USER")
            owner.execute("ALTER TABLE run_approvals DISABLE TRIGGER USER")
            forge_rejection(owner, waiting["run_id"], key=key, queue_too=True)
        forged = run("audit", "--verify", "--runs", then("desk2"))
        assert forged.exit_code == 0 and "with the audit key from entry 2 on" in forged.output, forged.output
        assert OLD_KEY not in forged.output
    finally:
        postgres_server.drop_database(database)
