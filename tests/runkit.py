"""The state directory's run store seen from a test: the runs as orderbot keeps them (a SQLite
database, orderbot.runs.sqlite), and changed behind orderbot's back as another tool would
(sqlite3 on the file, a person with an editor on an exported record).

Every helper opens the database afresh and closes it again, as another process would; the
state directory is the test's own (ORDERBOT_STATE_DIR, tests/conftest.py) unless one is given."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

from orderbot.runs.record import KEY_FILE
from orderbot.runs.sqlite import DB_FILE, SqliteRunStore
from orderbot.runs.tagged import read_or_create_key, tag_record


def state_dir() -> Path:
    return Path(os.environ["ORDERBOT_STATE_DIR"])


def open_store(state: Path | None = None, **options) -> SqliteRunStore:
    """The store as `orderbot` opens it (keep, prune_after_days as keywords)."""
    return SqliteRunStore.in_state_dir(state or state_dir(), **options)


def run_ids(state: Path | None = None) -> list[str]:
    """Every run the store keeps, newest first; none when there is no store yet."""
    if not ((state or state_dir()) / DB_FILE).exists():
        return []
    return [run_id for (run_id,) in sql("SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC", state=state)]


def only_run(state: Path | None = None) -> str:
    [run_id] = run_ids(state)
    return run_id


def record_bytes(run_id: str, state: Path | None = None) -> bytes:
    """The record as kept (what `orderbot runs export` writes)."""
    [(text,)] = sql("SELECT record FROM runs WHERE run_id = ?", (run_id,), state=state)
    return text.encode()


def record_doc(run_id: str, state: Path | None = None) -> dict:
    return json.loads(record_bytes(run_id, state))


def write_record(run_id: str, data: bytes | str, state: Path | None = None) -> None:
    """Replace the record of `run_id` with `data`, as sqlite3 would (nothing else changes):
    bytes that are not UTF-8 go in as they are (a BLOB)."""
    if isinstance(data, bytes):
        with contextlib.suppress(UnicodeDecodeError):
            data = data.decode("utf-8")
    sql("UPDATE runs SET record = ? WHERE run_id = ?", (data, run_id), state=state)


def write_doc(run_id: str, doc: dict, *, sign: bool, state: Path | None = None) -> bytes:
    """An edited record written back; `sign` re-tags it with the state directory's key, as only
    someone who can read that key could. The bytes written."""
    body = json.dumps({k: v for k, v in doc.items() if k != "integrity"}, ensure_ascii=False, separators=(",", ":"))
    data = signed(body.encode(), state) if sign else body.encode()
    write_record(run_id, data, state)
    return data


def signed(body: bytes, state: Path | None = None) -> bytes:
    """`body` (a record without its tag) tagged with the state directory's key."""
    key = read_or_create_key((state or state_dir()) / KEY_FILE, create=True)
    assert key is not None
    return tag_record(key, body)


def sql(statement: str, params: tuple = (), *, state: Path | None = None) -> list[tuple]:
    """One statement on the state directory's database, through sqlite3 as another tool runs it."""
    path = (state or state_dir()) / DB_FILE
    with contextlib.closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as db:
        return db.execute(statement, params).fetchall()


def export_file(run_id: str, folder: Path, state: Path | None = None) -> Path:
    """The record of `run_id` in a file of its own in `folder`, as `orderbot runs export -o` writes it."""
    path = folder / f"{run_id}.json"
    path.write_bytes(record_bytes(run_id, state))
    return path


def copy_run(run_id: str, into: Path, state: Path | None = None) -> None:
    """The row of `run_id` copied into the state directory `into`'s database as it is, the way
    someone with sqlite3 could move a run between two state directories."""
    open_store(into).close()  # its tables
    [row] = sql("SELECT * FROM runs WHERE run_id = ?", (run_id,), state=state)
    sql(f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row, state=into)


def plant_runs(ids: list[str], state: Path | None = None, question: str = "查询 ORD-{n}") -> None:
    """Runs that answered, put straight into the database (a listing reads their summaries, not
    their records, which are empty here): many runs without running them."""
    open_store(state).close()  # its tables
    rows = []
    for n, run_id in enumerate(ids):
        started = f"20{run_id[:2]}-{run_id[2:4]}-{run_id[4:6]}T{run_id[7:9]}:{run_id[9:11]}:{run_id[11:13]}.{n:06d}Z"
        said = question.format(n=1000 + n)
        summary = {"created_at": started, "status": "answered", "steps": 2, "tool_calls": 1, "question": said,
                   "history": ["answered"], "decisions": []}  # fmt: skip
        rows.append((run_id, started, json.dumps(summary, ensure_ascii=False)))
    with contextlib.closing(sqlite3.connect((state or state_dir()) / DB_FILE)) as db, db:
        db.executemany(
            "INSERT INTO runs (run_id, created_at, written, status, summary, record, revision) "
            "VALUES (?, ?, 0, 'answered', ?, '{}', 1)",
            rows,
        )


# A state directory written by orderbot at 7968f11, the last release that kept JSON records
# (tests/runs/test_takeover.py says what it holds), with the orders file as it left them.
PREVIOUS_RELEASE = Path(__file__).parent / "runs" / "fixtures" / "previous-release"


def previous_release(tmp_path: Path) -> Path:
    """The fixture's state directory as the test's own (private, as orderbot made it), and a
    copy of its orders file."""
    shutil.copytree(PREVIOUS_RELEASE / "state", state_dir())
    for folder, _, files in os.walk(state_dir()):
        os.chmod(folder, 0o700)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o600)
    orders = tmp_path / "orders.json"
    shutil.copyfile(PREVIOUS_RELEASE / "orders.json", orders)
    return orders
