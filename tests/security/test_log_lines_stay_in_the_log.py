"""orderbot's log lines quote outside data (a store's rows, a model server's error text),
so they go to the state directory's orderbot.log, never to the terminal: each command
that can log sets the log file up before it opens a store or asks a model (`orders`,
`replay` and `eval` did not), and a line logged before any log file is set up goes
nowhere rather than to stderr as it is. A store holding a row orderbot did not write is
one escaped sentence and exit 6, never a traceback, and an export over it writes nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import warm_orderbot
from clikit import cli
from fakeapi import WIRES, FakeAPI, error

from orderbot.shops.sample.model import SAMPLE_PATH

DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # a window title and a cleared screen, planted in outside data


def log_text() -> str:
    path = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def orderbot_process(*args: str) -> subprocess.CompletedProcess:
    """orderbot as its own process: Python's fallback printing of unhandled log lines is
    per process, and the test runner's own logging handlers are not there."""
    return subprocess.run(
        [warm_orderbot.command(), *args], capture_output=True, text=True, encoding="utf-8", timeout=120
    )


def retail_db_with_a_foreign_row(tmp_path: Path) -> str:
    """tau2's shop in SQLite, one order's row then overwritten by hand with a hostile key."""
    url = f"sqlite:///{tmp_path / 'shop.db'}"
    assert cli("orders", "import", str(DB), "--to", url).exit_code == 0
    with sqlite3.connect(tmp_path / "shop.db") as db:
        db.execute(
            "UPDATE retail_orders SET body = ? WHERE seq = (SELECT min(seq) FROM retail_orders)",
            (json.dumps({HOSTILE: 1, "bogus": 1}),),
        )
    return url


def sample_db_with_a_foreign_row(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'sample.db'}"
    assert cli("orders", "import", str(SAMPLE_PATH), "--to", url).exit_code == 0
    with sqlite3.connect(tmp_path / "sample.db") as db:
        db.execute("UPDATE orders SET status = ?, total = 'abc' WHERE order_id = 'ORD-1001'", (HOSTILE,))
    return url


def assert_one_escaped_sentence(stderr: str) -> None:
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "\x1b" not in stderr and "\x07" not in stderr
    assert "not a valid" not in stderr and "Traceback" not in stderr  # the log line stayed in the log
    assert "orderbot.log" in stderr  # and the sentence says where to look


@pytest.mark.slow  # a process of its own
def test_an_export_over_a_row_orderbot_did_not_write_is_exit_6_and_writes_nothing(tmp_path):
    url = retail_db_with_a_foreign_row(tmp_path)
    out = tmp_path / "out.json"

    result = orderbot_process("orders", "export", "--orders", url, str(out))

    assert result.returncode == 6, result.stderr
    assert_one_escaped_sentence(result.stderr)
    assert "nothing was written to" in result.stderr
    assert "a Order row is not a valid record" in log_text()
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_an_export_over_a_foreign_row_keeps_the_earlier_export_whole(tmp_path):
    url = retail_db_with_a_foreign_row(tmp_path)
    out = tmp_path / "out.json"
    out.write_text("the earlier export\n", encoding="utf-8")

    result = cli("orders", "export", "--orders", url, str(out))

    assert result.exit_code == 6
    assert_one_escaped_sentence(result.stderr)
    assert out.read_text(encoding="utf-8") == "the earlier export\n"
    assert "a Order row is not a valid record" in log_text()


@pytest.mark.parametrize(
    "args",
    [
        ("orders", "list", "--all"),
        ("orders", "list", "--user", "C001"),
        ("orders", "show", "ORD-1001"),
        ("orders", "show", "ORD-1001", "--all"),
        ("orders", "show", "ORD-1001", "--user", "C001"),  # not "no access": the store failed
    ],
)
def test_list_and_show_over_a_row_orderbot_did_not_write_are_one_sentence(tmp_path, args):
    url = sample_db_with_a_foreign_row(tmp_path)

    result = cli(*args, "--orders", url)

    assert result.exit_code == 6, result.output
    assert_one_escaped_sentence(result.stderr)
    assert result.stdout == ""
    assert "order row 'ORD-1001' is not a valid order" in log_text()


@pytest.mark.slow  # a process of its own
def test_a_foreign_row_reaches_neither_the_terminal_nor_a_traceback_in_a_process(tmp_path):
    url = sample_db_with_a_foreign_row(tmp_path)

    result = orderbot_process("orders", "list", "--all", "--orders", url)

    assert result.returncode == 6
    assert_one_escaped_sentence(result.stderr)


def test_evals_model_retries_are_logged_not_shown(tmp_path):
    wire = WIRES["chat"]
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"cases": [{"name": "one", "question": "查询 ORD-1001", "facts": ["已发货"]}]}))
    with FakeAPI() as api:
        api.enqueue(wire.route, error(500, f"busy {HOSTILE}", headers={"Retry-After": "0"}))
        api.enqueue(wire.route, wire.text("订单 ORD-1001 的状态是：已发货。"))

        result = cli(
            "eval", str(suite), "--provider", "chat", "--base-url", api.url, "--timeout", "20", "--min-pass", "0"
        )

    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "model request failed" not in result.output
    assert "model request failed: the model service failed (HTTP 500): busy" in log_text()


@pytest.mark.slow  # a process of its own
def test_replay_sets_up_the_log_where_its_records_are(tmp_path):
    """Replay runs the tools again, and a failing tool is logged: into this state directory's log."""
    assert cli("ask", "查询 ORD-1001").exit_code == 0
    log = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    log.unlink()

    result = orderbot_process("replay", "last")  # its own process: this one's log handler is still open

    assert result.returncode == 0, result.stderr
    assert log.exists()


@pytest.mark.slow  # a process of its own
def test_a_line_logged_before_any_log_file_is_set_up_goes_nowhere():
    """The backstop: a command that logs before it sets up its log file prints nothing raw
    (the command line holds its lines from the start: orderbot.cli.LazyGroup.main)."""
    code = (
        "import logging\n"
        "from orderbot.commands.logs import hold_lines\n"
        "hold_lines()\n"
        f"logging.getLogger('orderbot').error('row: %s', {HOSTILE!r})\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == ""
