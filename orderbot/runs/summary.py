"""What `orderbot runs` shows of a run (RunSummary), and how run ids and starts sort: shared by
the record, which makes its summary, and every run store, which lists them."""

from __future__ import annotations

import re
from typing import NamedTuple

RUN_ID = re.compile(r"^\d{6}-\d{6}-[0-9a-f]{4}$")  # when the run started, to the second, then 4 random hex digits
QUESTION_HEAD = 200  # characters of the question kept per line: a listing shows fewer


class RunSummary(NamedTuple):
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
        doc = {k: v for k, v in self._asdict().items() if v is not None or k in ("user", "operator")}
        doc["history"] = list(self.history)
        doc["decisions"] = list(self.decisions)
        return doc


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
