"""Helpers for the security regressions (tests/security): tamper with a stored record the way another
tool (or a person with an editor) would, with or without the state directory's key."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from orderbot.cli import app

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def state_dir() -> Path:
    return Path(os.environ["ORDERBOT_STATE_DIR"])


def runs_dir() -> Path:
    return state_dir() / "runs"


def record_path(run_id: str) -> Path:
    return runs_dir() / f"{run_id}.json"


def read_doc(run_id: str) -> dict:
    return json.loads(record_path(run_id).read_bytes())


def write_doc(run_id: str, doc: dict, *, sign: bool, path: Path | None = None) -> Path:
    """Write an edited record; `sign` re-tags it with the state directory's key, as only
    someone who can read that key could."""
    from orderbot.runs.record import TAG  # here, so the tests still run (and fail) on older code
    from orderbot.runs.store import RunStore

    doc = {k: v for k, v in doc.items() if k != "integrity"}
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
    data = RunStore(state_dir()).tag(body) if sign else body
    if sign:
        assert TAG.search(data)
    target = path or record_path(run_id)
    target.write_bytes(data)
    return target


def statuses(orders_file: Path) -> dict[str, str]:
    """Each order's status, read straight from the JSON file."""
    return {o["order_id"]: o["status"] for o in json.loads(Path(orders_file).read_text("utf-8"))["orders"]}
