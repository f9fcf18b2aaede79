"""The audit log against those who can write its table (docs/team.md, "Who binds whom"), on a
real PostgreSQL set up as the page says: a superuser with the triggers off, or the store's
owner, who may switch its own tables' triggers off.

- A correctly chained entry the queue does not bear out (a rejection of a call still pending)
  and the newest entries removed (a waiting call's proposal) are found, named, exit 1, with
  and without the audit key; `--head` finds a head noted earlier that is gone.
- Without the key, whoever can write the table can rewrite the log and the queue so that they
  agree: --verify then passes. With the key, an entry appended by someone without it is found
  even when the queue was changed to agree; a holder of the key is needed to forge one.
"""

from __future__ import annotations

import json
import secrets

import psycopg
import pytest
from teamkit import make_team, run

from orderbot.runs.audit import FIELDS, from_row

COLUMNS = ", ".join((*FIELDS, "prev", "hash"))
KEY = secrets.token_hex(32)


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


def test_without_a_key_the_owner_can_rewrite_log_and_queue_to_agree_with_a_key_it_cannot(team):
    """The owner may switch its own tables' triggers off: unkeyed, a rejection it chains and
    settles in the queue passes --verify. Keyed, the same forgery is found by the desks' key,
    and only a holder of the key could have made one that passes."""
    run_id = ask(team, "ORD-1002")
    with psycopg.connect(team("runs_owner"), autocommit=True) as owner:
        owner.execute("ALTER TABLE run_audit DISABLE TRIGGER USER")
        owner.execute("ALTER TABLE run_approvals DISABLE TRIGGER USER")
        owner.execute("UPDATE run_audit SET customer = 'C002' WHERE seq = 1")
        changed = verify(team)
        assert changed.exit_code == 1 and "entry 1 was changed" in changed.output  # an edit alone is found
        owner.execute("UPDATE run_audit SET customer = 'C001' WHERE seq = 1")
        forge_rejection(owner, run_id, queue_too=True)
    assert verify(team).exit_code == 0  # what an unkeyed chain cannot tell

    keyed = {"ORDERBOT_AUDIT_KEY": KEY}
    first = ask(team, "ORD-1013", env=keyed)  # the desks take a key: entries from here on are HMACs
    second = ask(team, "ORD-1008", "C002", env=keyed)
    intact = verify(team, env=keyed)
    assert intact.exit_code == 0 and "with the audit key from entry 3 on" in intact.output, intact.output
    assert "Head: hmac:" in intact.output
    with psycopg.connect(team("runs_owner"), autocommit=True) as owner:
        seq = forge_rejection(owner, first, queue_too=True)
    found = verify(team, env=keyed)
    assert found.exit_code == 1 and f"entry {seq} is not linked with the audit key" in found.output, found.output
    unkeyed = verify(team)
    assert unkeyed.exit_code == 1 and "are linked with an audit key: verify them with it" in unkeyed.output
    assert KEY not in found.output + unkeyed.output

    with psycopg.connect(team("runs_owner"), autocommit=True) as owner:  # the forgery and the newest proposal gone
        owner.execute("DELETE FROM run_audit WHERE seq >= %s", (seq - 1,))
        owner.execute("UPDATE run_approvals SET status = 'pending', decided_by = NULL WHERE run_id = %s", (first,))
    removed = verify(team, env=keyed)
    assert removed.exit_code == 1
    assert f"the proposal of call_offline_1 of run {second} is in the queue but missing" in removed.output

    with psycopg.connect(team("runs_owner"), autocommit=True) as owner:  # a holder of the key can forge one
        owner.execute("DELETE FROM run_approvals WHERE run_id = %s", (second,))
        forge_rejection(owner, first, key=KEY.encode(), queue_too=True)
    assert verify(team, env=keyed).exit_code == 0


def test_a_desk_without_the_key_writes_nothing_to_a_keyed_log(team):
    keyed = {"ORDERBOT_AUDIT_KEY": KEY}
    ask(team, "ORD-1002", env=keyed)
    desk1 = team("desk1")
    refused = run("ask", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1013")
    assert refused.exit_code == 6 and "linked with an audit key, and this session has none" in refused.output
    other = {"ORDERBOT_AUDIT_KEY": secrets.token_hex(32)}
    wrong = run("ask", "--runs", desk1, "--orders", desk1, "--user", "C001", "取消订单 ORD-1013", env=other)
    assert wrong.exit_code == 6 and "does not match this session's audit key" in wrong.output
    assert [w["run_id"] for w in json.loads(run("approvals", "--runs", desk1, "--json").stdout)] != []
    assert len(json.loads(run("audit", "--runs", desk1, "--json").stdout)) == 1
