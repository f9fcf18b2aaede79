"""The bearer tokens of orderbot mcp in a team's PostgreSQL store, set up as docs/team.md says:
no desk reads run_tokens (the hashes a token could be looked up by) or writes it but through
the owner's functions, no desk mints a token that acts as another desk or revokes another
desk's token, and what a desk is told about a token is only what the token it holds names.
The token itself is in no table, file or output but the one line `tokens add` prints."""

from __future__ import annotations

import json

import psycopg
import pytest
from teamkit import make_team, run

from orderbot.errors import ExitCode
from orderbot.runs.tokens import token_hash


@pytest.fixture
def team(postgres_server, tmp_path):
    database = f"tokens_{tmp_path.name[-20:].replace('-', '_').lower()}"
    yield make_team(postgres_server, database)
    postgres_server.drop_database(database)


def test_no_desk_reads_the_hashes_mints_for_another_desk_or_revokes_anothers_token(team):
    desk1, desk2, owner = team("desk1"), team("desk2"), team("runs_owner")
    made = run("mcp", "tokens", "add", "--customer", "C001", "--runs", desk1)
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    token_id = made.stderr.split("Token ", 1)[1].split()[0]
    own = run("mcp", "tokens", "add", "--operator", "desk1", "--runs", desk1)
    assert own.exit_code == 0, own.output
    other = run("mcp", "tokens", "add", "--operator", "desk2", "--runs", desk1)
    assert other.exit_code == ExitCode.REFUSED and "only in its own name" in other.stderr
    with psycopg.connect(desk1, autocommit=True) as connection:
        for statement in (
            "SELECT hash FROM run_tokens",
            "SELECT * FROM run_tokens",
            "INSERT INTO run_tokens (id, hash, operator, created_by, created_at) "
            "VALUES ('x', 'y', 'desk2', 'desk2', '2026-01-01T00:00:00Z')",
            "UPDATE run_tokens SET revoked_at = NULL",
            "DELETE FROM run_tokens",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connection.execute(statement)
        # Asked about the token it holds, a desk learns whom it names, never a hash.
        (row,) = connection.execute("SELECT * FROM run_token_check(%s)", (token_hash(secret),)).fetchall()
        assert row[:3] == (token_id, "C001", None) and token_hash(secret) not in json.dumps(row)
        listed = connection.execute("SELECT * FROM run_tokens_listed()").fetchall()
        assert token_hash(secret) not in json.dumps(listed) and secret not in json.dumps(listed)
    theirs = run("mcp", "tokens", "revoke", token_id, "--runs", desk2)
    assert theirs.exit_code == ExitCode.REFUSED and "only a token it made" in theirs.stderr
    states = {t["id"]: t["state"] for t in json.loads(run("mcp", "tokens", "list", "--json", "--runs", desk2).stdout)}
    assert states[token_id] == "active"
    assert run("mcp", "tokens", "revoke", token_id, "--runs", owner).exit_code == 0  # the owner may
    with psycopg.connect(owner, autocommit=True) as connection:  # the owner reads hashes; the secret is nowhere
        everything = json.dumps(connection.execute("SELECT * FROM run_tokens").fetchall())
        assert token_hash(secret) in everything and secret not in everything
