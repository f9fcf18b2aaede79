"""Taking over a state directory an earlier orderbot wrote: its JSON records (`runs/`, with
`runs.index` beside them) and its audit log (`audit.log`) come into the state directory's
database (orderbot.runs.sqlite) on its first use, once, whole or not at all.

- **Once.** The import is one transaction, which also notes it in `run_imports`; a second
  orderbot started at the same moment waits for the database's write lock, finds the note,
  and imports nothing.
- **Whole or not at all.** Every record and every entry goes in that one transaction: a
  failure (a full disk) rolls it all back and leaves the old files where they were, for the
  next start to try again.
- **Nothing lost.** A record comes in as the bytes it was, its integrity tag unchanged (the
  key, `record.key`, stays where it was); a run that waits for approval gets its queue row
  for the same call. The audit log's entries keep their numbers and links, so
  `orderbot audit --verify` finds the chain it found before.
- **Nothing trusted.** A record that is not a regular file, is not JSON, is not a record,
  does not verify with the state directory's key, is not the run its name says or whose id
  is already taken is left out and named in the report; so is an audit line that is not an
  entry, or whose number is taken. The rest still comes over.
- **Never deleted.** Afterwards the old files are moved, as they are, into `json-runs.old/`
  in the state directory (`json-runs.old.2/`, ... when that name is taken), where whatever
  was left out stays.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path
from urllib.parse import quote

from orderbot.errors import Phrase, RecordError
from orderbot.runs import statedir
from orderbot.runs.audit import FIELDS, AuditEntry
from orderbot.runs.base import Takeover
from orderbot.runs.record import KEY_FILE, utc_iso
from orderbot.runs.sql import SqlRunStore
from orderbot.runs.summary import RUN_ID
from orderbot.runs.tagged import parse_record, read_or_create_key, tag_problem

RECORDS, AUDIT_LOG = "runs", "audit.log"
ASIDE = "json-runs.old"
MAX_RECORD_BYTES = 16 << 20  # records are bounded at ~3 MB: anything far larger is not one
IMPORTS = (
    "CREATE TABLE IF NOT EXISTS run_imports (at TEXT NOT NULL, runs INTEGER NOT NULL, "
    "entries INTEGER NOT NULL, left_out INTEGER NOT NULL, aside TEXT)"
)


def take_over(store: SqlRunStore, state_dir: Path) -> Takeover | None:
    """Bring what an earlier orderbot kept in `state_dir` into `store`, then move it aside;
    None when there is nothing to take over, or another process did (or does) it."""
    if not statedir.holds_old_files(state_dir):
        return None
    brought: Takeover | None = None
    with store._transaction():
        store._tx_change(IMPORTS)
        if not store._tx_rows("SELECT 1 FROM run_imports"):
            brought = _bring_over(store, state_dir)
            store._tx_change(
                "INSERT INTO run_imports (at, runs, entries, left_out) VALUES (?, ?, ?, ?)",
                (utc_iso(time.time()), brought.runs, brought.entries, len(brought.left)),
            )
    # Moved in a second transaction, once the import is safe: a crash in between leaves the
    # old files in place and the import noted, and the next start only moves them.
    with store._transaction():
        aside = _move_aside(state_dir)
        if aside is not None:
            store._tx_change("UPDATE run_imports SET aside = ? WHERE aside IS NULL", (str(aside),))
    if brought is None:
        return None
    return Takeover(brought.runs, brought.entries, aside, brought.left)


def noted(database: Path) -> list[dict]:
    """The takeovers noted in the state directory's database (when, how many runs and
    entries, how many left out, where the old files went), read without changing anything:
    what `orderbot doctor` shows. Empty when there is no database or nothing was taken over."""
    if statedir.is_planted(database) or not database.exists():
        return []
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{quote(str(database.absolute()))}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT at, runs, entries, left_out, aside FROM run_imports ORDER BY at").fetchall()
    except sqlite3.Error:  # no such table: nothing was ever taken over
        return []
    return [dict(zip(("at", "runs", "entries", "left", "aside"), row, strict=True)) for row in rows]


def _bring_over(store: SqlRunStore, state_dir: Path) -> Takeover:
    key = read_or_create_key(state_dir / KEY_FILE, create=False)
    left: list[tuple[str, Phrase]] = []
    runs = 0
    for name, raw in _records(state_dir / RECORDS, left):
        why = _import_record(store, key, name, raw)
        if why is None:
            runs += 1
        else:
            left.append((f"{RECORDS}/{name}", why))
    entries = _import_log(store, state_dir / AUDIT_LOG, left)
    return Takeover(runs, entries, None, tuple(left))


def _records(folder: Path, left: list[tuple[str, Phrase]]):
    """(file name, bytes) of each record file in `folder`, oldest first; a name that is not a
    run id's is not a record (a lock, a temporary file, a note) and stays with the folder."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            left.append((RECORDS, Phrase("takeover.not_a_folder")))
            return
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RecordError("state.cannot_list", path=folder, reason=statedir.reason(exc)) from None
    for name in names:
        if not (name.endswith(".json") and RUN_ID.fullmatch(name[:-5])):
            continue
        path = folder / name
        try:
            if os.lstat(path).st_size > MAX_RECORD_BYTES:
                left.append((f"{RECORDS}/{name}", Phrase("takeover.too_large")))
                continue
            yield name, statedir.read_own(path)  # no link followed, no FIFO waited on
        except FileNotFoundError:
            continue
        except OSError as exc:
            left.append((f"{RECORDS}/{name}", Phrase("takeover.unreadable", {"why": statedir.reason(exc)})))


def _import_record(store: SqlRunStore, key: bytes | None, name: str, raw: bytes) -> Phrase | None:
    """Why the record file `name` was not brought over, or None when it was."""
    run_id = name[:-5]
    try:
        record = parse_record(Path(name), raw)
    except RecordError as exc:
        return exc.phrase
    why = tag_problem(key, raw, elsewhere=Phrase("runs.elsewhere_state_dir"))
    if why is None and (record.run_id != run_id or record.state.run_id != run_id):
        why = Phrase("runs.other_run_inside", {"found": repr(record.state.run_id[:40]), "run_id": run_id})
    if why is not None:
        return why
    try:
        store._import(raw, record)
    except RecordError as exc:  # the id is already another run's
        return exc.phrase
    return None


def _import_log(store: SqlRunStore, path: Path, left: list[tuple[str, Phrase]]) -> int:
    """The old log's entries, as they were; how many. A line that is not an entry, or whose
    number an earlier line took, is left out (and `--verify` shows the gap it leaves)."""
    if not os.path.lexists(path):
        return 0
    try:
        raw = statedir.read_own(path)
    except OSError as exc:
        left.append((AUDIT_LOG, Phrase("takeover.unreadable", {"why": statedir.reason(exc)})))
        return 0
    if store._tx_rows("SELECT 1 FROM run_audit LIMIT 1"):  # a log of its own already: two chains do not mix
        left.append((AUDIT_LOG, Phrase("takeover.log_exists")))
        return 0
    seen: set[int] = set()
    count = 0
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        entry = parse_line(line)
        where = f"{AUDIT_LOG}:{number}"
        if entry is None:
            left.append((where, Phrase("takeover.not_an_entry")))
        elif entry.seq in seen:
            left.append((where, Phrase("takeover.entry_repeated", {"seq": entry.seq})))
        else:
            seen.add(entry.seq)
            store._import_entry(entry)
            count += 1
    return count


TEXT_FIELDS = ("at", "event", "run_id", "call_id", "tool", "arguments", "prev", "hash")
OPTIONAL_FIELDS = ("customer", "requested_by", "decided_by", "result", "reason")


def parse_line(raw: bytes) -> AuditEntry | None:
    """One line of an earlier orderbot's audit.log as an entry, its fields of the types an
    entry has; None for anything else."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not all(name in doc for name in (*FIELDS, "prev", "hash")):
        return None
    seq = doc["seq"]
    if type(seq) is not int or seq < 1:
        return None
    if not all(isinstance(doc[name], str) for name in TEXT_FIELDS):
        return None
    if not all(doc[name] is None or isinstance(doc[name], str) for name in OPTIONAL_FIELDS):
        return None
    return AuditEntry(**{name: doc[name] for name in (*FIELDS, "prev", "hash")})


def _move_aside(state_dir: Path) -> Path | None:
    """The old files, moved as they are into a folder of their own; None when none is left
    (another process moved them)."""
    present = [name for name in statedir.OLD_FILES if os.path.lexists(state_dir / name)]
    if not present:
        return None
    aside, number = state_dir / ASIDE, 1
    while True:
        try:
            aside.mkdir(mode=0o700)
            break
        except FileExistsError:
            number += 1
            aside = state_dir / f"{ASIDE}.{number}"
        except OSError as exc:
            raise RecordError("takeover.cannot_move", path=state_dir, reason=statedir.reason(exc)) from None
    for name in present:
        try:
            os.rename(state_dir / name, aside / name)  # a link moves as the link, never its target
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise RecordError("takeover.cannot_move", path=state_dir, reason=statedir.reason(exc)) from None
    return aside
