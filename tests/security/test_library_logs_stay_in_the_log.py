"""The libraries under orderbot log too, and their lines quote outside text: psycopg logs a
database's error message (`error ignored in rollback on <connection>: <the server's text>`),
httpx, openai and urllib3 a server's. Only orderbot's own logger had a handler, so such a
line fell through to Python's last resort and reached stderr as it was, escapes and all.
Every library's line goes where orderbot's own go, the state directory's orderbot.log; one
logged before a command knows where that is (while its settings load) is held, then
written there."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import warm_orderbot
from clikit import cli

from orderbot.models.scripted import ScriptedModel, call, calls, text

HOSTILE = "\x1b]0;owned\x07\x1b[2J"  # a window title and a cleared screen, from a hostile server


def log_text() -> str:
    path = Path(os.environ["ORDERBOT_STATE_DIR"]) / "orderbot.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def assert_not_shown(*outputs: str) -> None:
    for shown in outputs:
        assert "\x1b" not in shown and "\x07" not in shown and "owned" not in shown, repr(shown)


def root_logger_of_a_process(monkeypatch) -> None:
    """The root logger as orderbot's own process has it, from here to the test's end:
    pytest's capturing handlers (added as each test's call begins, so not in a fixture)
    would otherwise take a library's line before Python's last resort could print it."""
    monkeypatch.setattr(logging.getLogger(), "handlers", [])


@pytest.mark.parametrize("library", ["psycopg", "httpx", "openai", "urllib3.connectionpool"])
def test_a_library_warning_during_a_run_is_logged_not_shown(use_model, monkeypatch, library):
    def rollback_failed(request):
        logging.getLogger(library).warning("error ignored in rollback on %s: %s", "<connection>", HOSTILE)
        return text("订单 ORD-1001 的状态是：已发货。")

    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), rollback_failed]))

    root_logger_of_a_process(monkeypatch)
    result = cli("ask", "--provider", "scripted", "查询 ORD-1001")

    assert result.exit_code == 0, result.output
    assert_not_shown(result.stdout, result.stderr)
    assert f"WARNING error ignored in rollback on <connection>: {HOSTILE}" in log_text()


@pytest.mark.slow  # a process of its own
def test_a_library_line_logged_before_the_log_is_set_up_is_written_there_later(tmp_path):
    """python-dotenv logs a .env line it cannot parse while the settings load: before any
    command knows its state directory. It must not reach stderr, and the log keeps it."""
    Path(".env").write_text('ORDERBOT_USER=C001\n"never closed\n', encoding="utf-8")

    result = subprocess.run(
        [warm_orderbot.command(), "ask", "查询 ORD-1001"], capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr
    assert "dotenv" not in result.stderr and "dotenv" not in result.stdout, result.stderr
    assert "python-dotenv could not parse statement starting at line 2" in log_text()


def test_no_log_file_means_nowhere_not_stderr(use_model, monkeypatch, tmp_path):
    """A state directory whose log cannot be opened: the line is dropped, as orderbot's own are."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "orderbot.log").symlink_to(tmp_path / "elsewhere.log")

    def noisy(request):
        logging.getLogger("psycopg").warning("server said: %s", HOSTILE)
        return text("订单 ORD-1001 的状态是：已发货。")

    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), noisy]))

    root_logger_of_a_process(monkeypatch)
    result = cli("ask", "--provider", "scripted", "查询 ORD-1001")

    assert_not_shown(result.stdout, result.stderr)
    assert not (tmp_path / "elsewhere.log").exists()


@pytest.mark.slow  # a process of its own
def test_a_python_warning_is_logged_not_shown(tmp_path):
    """A library's warning (pydantic's serializer names the value it got) goes through
    Python's warnings module, which prints on stderr as it is unless it is logged: from the
    moment the command line starts, not from an import."""
    code = (
        "import sys, warnings\n"
        "from orderbot import models\n"
        "from orderbot.models.scripted import ScriptedModel, text\n"
        "def warned(request):\n"
        f"    warnings.warn({HOSTILE!r})\n"
        "    return text('好的。')\n"
        "models.FACTORIES['scripted'] = lambda settings, shop: ScriptedModel([warned])\n"
        "from orderbot.cli import main\n"
        "sys.argv = ['orderbot', 'ask', '--provider', 'scripted', '查询 ORD-1001']\n"
        "main()\n"
    )

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr
    assert_not_shown(result.stdout, result.stderr)
    assert f"UserWarning: {HOSTILE}" in log_text()
