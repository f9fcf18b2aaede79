"""The runs index: one line per recorded run, so `orderbot runs`, filtered or not, reads one
small file instead of every record.

`<state_dir>/runs.index` starts with a header line naming its format, then the inode number
of each run's record file (one JSON object), then one line per run, newest first: when the
run started (to the microsecond, as text that sorts by time: `started_key`), the run id and
as JSON what a listing shows (when it started, the user, how it stopped and how each segment
ended, steps, tool calls, the head of the question; or why the record could not be read).
Lines sort by their start, then by id, so "newest first" holds for runs started within one
second too.

It is a cache of the records, never the truth:
- RunStore rewrites a run's line right after writing its record;
- a listing reads the directory of records (names and inode numbers come with the listing
  itself, no file is opened) and trusts a line only while its record file is the same
  file: a record replaced since (records are always replaced whole, so the inode number
  changes), added or removed without the index (by a writer killed in between, another
  process racing, another tool) is re-read or dropped, and the index written back;
- resume, replay and `runs show` read the record itself and check it: the index only ever
  decides what a listing shows.
The index is not fsynced and takes no lock: a lost or torn update costs one re-read. Nor
is it trusted as a file: only a regular file is read (a link, FIFO or device in its place
is never followed, opened or waited on), and the next write replaces whatever is there.
A state directory the index cannot be written in (read-only, owned by another user) costs
each listing a re-read, never a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from orderbot.atomic import atomic_write
from orderbot.runs.statedir import read_regular

INDEX_FILE = "runs.index"  # in the state directory, next to runs/
HEADER = "orderbot-runs-index 2"  # another header: the index is rebuilt from the records
RUN_ID = re.compile(r"^\d{6}-\d{6}-[0-9a-f]{4}$")  # when the run started, to the second, then 4 random hex digits
QUESTION_HEAD = 200  # characters of the question kept per line: a listing shows fewer


@dataclass(frozen=True)
class RunSummary:
    """One line of `orderbot runs`; `error` is set when the record could not be read."""

    run_id: str
    created_at: str = ""
    user: str | None = None  # the customer the run is about
    operator: str | None = None  # who ran orderbot (orderbot.runs.base.operator_name); None in older records
    status: str = ""
    steps: int = 0
    tool_calls: int = 0
    question: str = ""
    history: tuple[str, ...] = ()  # how each segment ended, when the run was resumed
    decisions: tuple[str, ...] = ()  # "approved" and/or "rejected": what a person decided, if asked
    pruned_at: str | None = None  # when its conversation was dropped (orderbot runs prune)
    error: str | None = None

    def as_dict(self) -> dict:
        doc = {k: v for k, v in self.__dict__.items() if v is not None or k in ("user", "operator")}
        doc["history"] = list(self.history)
        doc["decisions"] = list(self.decisions)
        return doc


class Entry(NamedTuple):
    """One run's line: its id and what a listing shows of it, as JSON."""

    run_id: str
    summary_json: str

    def summary(self) -> RunSummary:
        doc = json.loads(self.summary_json)
        doc["history"] = tuple(doc.get("history") or ())
        return RunSummary(run_id=self.run_id, **doc)


STARTED_WIDTH = len("2026-12-01T20:20:08.123456Z")  # every started_key is this wide


def started_key(created_at: str, run_id: str) -> str:
    """When a run started as fixed-width text that sorts by time, to the microsecond
    (`2026-12-01T20:20:08.123456Z`). A record written before starts were kept to the
    microsecond has its second; one that could not be read, the second its id names."""
    if len(created_at) == STARTED_WIDTH:
        return created_at
    if len(created_at) == 20:  # ...T20:20:08Z
        return created_at[:19] + ".000000Z"
    if RUN_ID.fullmatch(run_id):  # 261201-202008-ff23
        d, h = run_id[:6], run_id[7:13]
        return f"20{d[:2]}-{d[2:4]}-{d[4:]}T{h[:2]}:{h[2:4]}:{h[4:]}.000000Z"
    return "0" * STARTED_WIDTH


def newest_first(lines: list[str]) -> list[str]:
    # A line starts with its started_key, then its run id: sorting the text sorts by both.
    return sorted(lines, reverse=True)


def index_line(summary: RunSummary) -> str:
    doc = summary.as_dict()
    del doc["run_id"]
    key = started_key(summary.created_at, summary.run_id)
    return f"{key} {summary.run_id} {json.dumps(doc, ensure_ascii=False, separators=(',', ':'))}"


def _split(line: str) -> tuple[str, str]:
    """A line's run id and its summary JSON, past the started_key and its space."""
    run_id, _, summary_json = line[STARTED_WIDTH + 1 :].partition(" ")
    return run_id, summary_json


def field_text(key: str, value: str) -> str:
    """How `key: value` reads inside a line's JSON: a line without it cannot match."""
    return f'"{key}":{json.dumps(value, ensure_ascii=False)}'


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
        index = self._read()
        if index is None:
            return
        with contextlib.suppress(OSError):  # a cache: the next listing mends it
            entries = _by_run(*index)
            entries[summary.run_id] = (record.stat().st_ino, index_line(summary))
            self._write(entries)

    def entries(self, containing: Sequence[str] = ()) -> Iterator[Entry]:
        """One entry per record in runs/, newest first; only those whose line holds every
        text in `containing` (see `field_text`), found without parsing the others."""
        try:  # names and inode numbers come with the directory listing: no file is opened
            files = {e.name[:-5]: e.inode() for e in os.scandir(self.runs_dir) if e.name.endswith(".json")}
        except FileNotFoundError:
            files = {}
        index = self._read()
        # Usually every record is the very file its line was made from: the lines as they are.
        lines = index[1] if index is not None and index[0] == files else self._refresh(files, index)
        for line in lines:
            if all(text in line for text in containing):
                yield Entry(*_split(line))

    def _refresh(self, files: dict[str, int], index: tuple[dict[str, int], list[str]] | None) -> list[str]:
        """Lines for the records in `files`: an indexed line while its record is the same
        file, else the record read again; written back when the state directory allows."""
        known = _by_run(*index) if index is not None else {}
        current: dict[str, tuple[int, str]] = {}
        for run_id, inode in files.items():
            if run_id in known and known[run_id][0] == inode:
                current[run_id] = known[run_id]
            elif self.run_id_of(run_id + ".json") is not None:
                summary = self.summarize(self.runs_dir / f"{run_id}.json", run_id)
                if summary is not None:  # else removed meanwhile
                    current[run_id] = (inode, index_line(summary))
        with contextlib.suppress(OSError):  # a read-only state directory: list without it
            self._write(current)
        return newest_first([line for _, line in current.values()])

    # -- the file: a header, the record files' inode numbers by run id, then the lines --

    def _read(self) -> tuple[dict[str, int], list[str]] | None:
        """(inode number by run id, the lines); None when missing, torn or not ours."""
        raw = read_regular(self.path)
        try:
            text = raw.decode("utf-8") if raw is not None else None
        except UnicodeDecodeError:
            return None
        if text is None:
            return None
        head, _, rest = text.partition("\n")
        inodes_json, _, body = rest.partition("\n")
        try:
            inodes = json.loads(inodes_json)
        except ValueError:
            return None
        lines = body.splitlines()
        if head != HEADER or not text.endswith("\n") or not isinstance(inodes, dict) or len(inodes) != len(lines):
            return None
        return inodes, lines

    def _write(self, entries: dict[str, tuple[int, str]]) -> None:
        inodes = json.dumps({run_id: inode for run_id, (inode, _) in entries.items()}, separators=(",", ":"))
        text = "\n".join([HEADER, inodes, *newest_first([line for _, line in entries.values()])]) + "\n"
        atomic_write(self.path, text.encode(), durable=False, follow_links=False)


def _by_run(inodes: dict[str, int], lines: list[str]) -> dict[str, tuple[int, str]]:
    """(inode number, line) by run id; lines whose id has no inode number are dropped."""
    out = {}
    for line in lines:
        run_id = _split(line)[0]
        if run_id in inodes:
            out[run_id] = (inodes[run_id], line)
    return out
