"""The runs index: one line per recorded run, so `orderbot runs`, filtered or not, reads one
small file instead of every record.

`<state_dir>/runs.index` starts with a header line naming its format; then one line per run,
newest first: the run id, the inode number of its record file, and as JSON what a listing
shows (when it started, the user, how it stopped and how each segment ended, steps, tool
calls, the head of the question; or why the record could not be read).

It is a cache of the records, never the truth:
- RunStore rewrites a run's line right after writing its record;
- a listing reads the directory of records (names and inode numbers come with the listing
  itself, no file is opened) and trusts a line only while its record file is the same
  file: a record replaced since (records are always replaced whole, so the inode number
  changes), added or removed without the index, by a writer killed in between, another
  process racing, another tool, is re-read or dropped, and the index written back;
- resume, replay and `runs show` read the record itself and check it: the index only ever
  decides what a listing shows.
The index is not fsynced and takes no lock: a lost or torn update costs one re-read.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

INDEX_FILE = "runs.index"  # in the state directory, next to runs/
HEADER = "orderbot-runs-index 1"
QUESTION_HEAD = 200  # characters of the question kept per line: a listing shows fewer


@dataclass(frozen=True)
class RunSummary:
    """One line of `orderbot runs`; `error` is set when the record could not be read."""

    run_id: str
    created_at: str = ""
    user: str | None = None
    status: str = ""
    steps: int = 0
    tool_calls: int = 0
    question: str = ""
    history: tuple[str, ...] = ()  # how each segment ended, when the run was resumed
    decisions: tuple[str, ...] = ()  # "approved" and/or "rejected": what a person decided, if asked
    error: str | None = None

    def as_dict(self) -> dict:
        doc = {k: v for k, v in self.__dict__.items() if v is not None or k == "user"}
        doc["history"] = list(self.history)
        doc["decisions"] = list(self.decisions)
        return doc


@dataclass(frozen=True)
class Entry:
    """One run's line: its id, the inode of the record it was read from, the summary as JSON."""

    run_id: str
    inode: int
    summary_json: str

    @classmethod
    def of(cls, summary: RunSummary, inode: int) -> Entry:
        doc = summary.as_dict()
        del doc["run_id"]
        return cls(summary.run_id, inode, json.dumps(doc, ensure_ascii=False, separators=(",", ":")))

    @classmethod
    def parse(cls, line: str) -> Entry:
        run_id, inode, summary_json = line.split(" ", 2)
        return cls(run_id, int(inode), summary_json)

    def line(self) -> str:
        return f"{self.run_id} {self.inode} {self.summary_json}"

    def summary(self) -> RunSummary:
        doc = json.loads(self.summary_json)
        doc["history"] = tuple(doc.get("history") or ())
        return RunSummary(run_id=self.run_id, **doc)

    def holds(self, key: str, value: str) -> bool:
        """False when the summary surely has another `key` (no parsing); True when it may."""
        return f'"{key}":{json.dumps(value, ensure_ascii=False)}' in self.summary_json


class RunIndex:
    """The index of the records in `runs_dir`, kept in `path`. `run_id_of` names the run a
    file name in runs/ is the record of (None: not a record); `summarize` reads one record
    file (None when it vanished meanwhile)."""

    def __init__(
        self,
        runs_dir: Path,
        path: Path,
        *,
        run_id_of: Callable[[str], str | None],
        summarize: Callable[[Path, str], RunSummary | None],
    ) -> None:
        self.runs_dir = runs_dir
        self.path = path
        self.run_id_of = run_id_of
        self.summarize = summarize

    def saved(self, summary: RunSummary, record: Path) -> None:
        """The record of `summary` was just written to `record`: rewrite its line. A missing
        or unreadable index is left for the next listing to rebuild."""
        entries = self._read()
        if entries is None:
            return
        with contextlib.suppress(FileNotFoundError):
            entries[summary.run_id] = Entry.of(summary, record.stat().st_ino)
            self._write(entries)

    def entries(self) -> list[Entry]:
        """One entry per record in runs/, newest first, each checked against its file; the
        index is written back when a record had to be read."""
        indexed = self._read() or {}
        current: dict[str, Entry] = {}
        changed = False
        for run_id, inode in self._records():
            entry = indexed.get(run_id)
            if entry is None or entry.inode != inode:
                summary = self.summarize(self.runs_dir / f"{run_id}.json", run_id)
                if summary is None:
                    continue  # removed meanwhile
                entry = Entry.of(summary, inode)
                changed = True
            current[run_id] = entry
        if changed or len(current) != len(indexed):
            with contextlib.suppress(OSError):  # a read-only state directory: list without it
                self._write(current)
        return sorted(current.values(), key=lambda e: e.run_id, reverse=True)

    def _records(self) -> Iterator[tuple[str, int]]:
        try:
            entries = list(os.scandir(self.runs_dir))
        except FileNotFoundError:
            return
        for entry in entries:
            run_id = self.run_id_of(entry.name)
            if run_id is not None:
                yield run_id, entry.inode()

    def _read(self) -> dict[str, Entry] | None:
        """Entries by run id; None when the index is missing, torn or not ours."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        head, _, body = text.partition("\n")
        if head != HEADER or not text.endswith("\n"):
            return None
        try:
            return {entry.run_id: entry for entry in map(Entry.parse, body.splitlines())}
        except ValueError:
            return None

    def _write(self, entries: dict[str, Entry]) -> None:
        from orderbot.atomic import atomic_write

        lines = [HEADER, *(e.line() for e in sorted(entries.values(), key=lambda e: e.run_id, reverse=True))]
        atomic_write(self.path, ("\n".join(lines) + "\n").encode(), durable=False)
