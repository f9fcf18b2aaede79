"""Two connections of one process to the state directory's database (what `orderbot mcp --http`
holds: its sessions' and its tokens'), and writers in other processes: each connection still
sees what they committed. Opening the store a second time once closed a descriptor of the
database file by hand, which dropped the SQLite locks the process held on it (POSIX locks
belong to the process, not to a descriptor); the next writer elsewhere, finding nobody else
there, checkpointed the log away under them, and the server read a revoked token as valid."""

from __future__ import annotations

import os
import subprocess
import sys

from orderbot.runs.sqlite import SqliteRunStore
from orderbot.runs.tokens import new_token, token_hash

ELSEWHERE = """
import pathlib, sys
from orderbot.runs.sqlite import SqliteRunStore
store = SqliteRunStore.in_state_dir(pathlib.Path(sys.argv[1]))
if sys.argv[2] == "add":
    print(store.add_token(sys.argv[3], customer="C003", operator=None, expires_at=None).id)
else:
    store.revoke_token(sys.argv[3])
store.close()
"""


def elsewhere(state, *args: str) -> str:
    """A writer in a process of its own, which opens the store, writes and closes it."""
    done = subprocess.run(
        [sys.executable, "-c", ELSEWHERE, str(state), *args], capture_output=True, text=True, timeout=60,
        env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_second_connection_of_the_process_leaves_the_firsts_locks_alone(tmp_path) -> None:
    state = tmp_path / "state"
    made = SqliteRunStore.in_state_dir(state)
    made.add_token(token_hash(new_token()), customer="C001", operator=None, expires_at=None)
    made.close()
    sessions = SqliteRunStore.in_state_dir(state)
    tokens = SqliteRunStore.in_state_dir(state)  # opened second, as the server's token connection is
    try:
        assert sessions.tokens_exist()
        secret = new_token()
        token_id = elsewhere(state, "add", token_hash(secret))
        assert tokens.token(token_hash(secret)).revoked_at is None
        elsewhere(state, "revoke", token_id)
        assert tokens.token(token_hash(secret)).revoked_at is not None
        assert sessions.token(token_hash(secret)).revoked_at is not None
    finally:
        tokens.close()
        sessions.close()
