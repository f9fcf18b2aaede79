"""A bad base URL is one line and no traceback wherever it comes
from, and an echoed input in an error message is bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from clikit import cli
from runkit import run_ids

KEY = "sk-test-" + "k" * 40
BAD_URLS = ["http://[::1", "http://localhost:abc/v1", "http://local\rhost/v1", "http://localhost/v1\nX: y", "ftp://x"]


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("command", [["ask", "查询 ORD-1001"], ["doctor"], ["repl"]])
@pytest.mark.parametrize("where", ["env", "dotenv", "flag"])
def test_a_bad_base_url_is_one_line(url, command, where, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    args = [*command, "--provider", "chat"]
    if where == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
    elif where == "dotenv":
        (tmp_path / "work" / ".env").write_text(f"OPENAI_BASE_URL={url!r}\n".replace("'", '"'))
    else:
        args += ["--base-url", url]
    result = cli(*args)
    assert result.exit_code == (2 if where == "flag" else 6), result.output  # typed: a usage error
    assert "Traceback" not in result.output and KEY not in result.output and KEY[8:] not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "base" in result.output.lower()


def test_a_long_run_id_is_not_echoed_whole():
    result = cli("runs", "show", "a" * 5000)
    assert result.exit_code == 6 and len(result.output) < 200, len(result.output)


def test_error_lines_are_bounded(tmp_path):
    result = cli("ask", "--orders", str(tmp_path / ("x" * 200) / ("y" * 5000)), "查询 ORD-1001")
    assert result.exit_code == 6 and len(result.output) < 2100


@pytest.mark.slow  # a process of its own
def test_a_question_with_bytes_that_are_not_utf8_is_answered_and_recorded(tmp_path):
    """A shell passes undecodable bytes as lone surrogates; the record must still be written."""
    done = subprocess.run(
        [sys.executable, "-m", "orderbot", "ask", "--json", b"\xff\xfe ORD-1001".decode("utf-8", "surrogateescape")],
        capture_output=True,
        env={**os.environ, "ORDERBOT_STATE_DIR": str(tmp_path / "state")},
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    doc = json.loads(done.stdout)
    assert doc["question"].startswith("\ufffd\ufffd") and doc["stop_reason"] == "answered"
    assert run_ids(tmp_path / "state") == [doc["run_id"]]
