"""Visible waiting: while a model request is in flight a terminal shows a live line under
the table (spinner, seconds waited, seconds left); piped output and --quiet show none."""

from __future__ import annotations

import os
import re
import threading

import pexpect
import pytest
from clikit import cli
from fakeapi import FakeAPI, error, message, response
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal

pytestmark = pytest.mark.slow  # a terminal watching a model that takes seconds

WAITED = re.compile(r"waiting for the model · (\d+) s · (\d+) s left")
SPINNER = re.compile(r"([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏])(?:\x1b\[[0-9;]*m)* (?:\x1b\[[0-9;]*m)*waiting for the model")


def slow_answer(seconds: float):
    def answer(request):
        threading.Event().wait(seconds)  # the server's own delay: what this test measures
        return response(message("订单 ORD-1001 已发货。"))

    return answer


def environment(api: FakeAPI) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return {**env, "OPENAI_API_KEY": "sk-test-wait", "OPENAI_BASE_URL": api.url, "LANG": "C.UTF-8", "TERM": "xterm"}


def ask_in_terminal(api: FakeAPI, columns: int) -> pexpect.spawn:
    """`orderbot ask` in a pseudo-terminal of 24 rows, run to its end."""
    args = ["ask", "--provider", "openai", "--max-steps", "1", "查询 ORD-1001"]
    child = orderbot_in_a_terminal(args, env=environment(api), dimensions=(24, columns))
    child.expect(pexpect.EOF)
    child.close()
    return child


def test_a_terminal_shows_the_elapsed_time_change_while_the_model_takes_3_seconds():
    with FakeAPI() as api:
        api.enqueue("responses", slow_answer(3.0))
        child = ask_in_terminal(api, columns=80)
    screen = child.before
    before_answer = screen.split("订单 ORD-1001 已发货")[0]
    seconds = {int(m.group(1)) for m in WAITED.finditer(before_answer)}
    assert len(seconds) >= 3, screen[-2000:]  # e.g. 0, 1, 2: the line moved at least twice
    assert len(set(SPINNER.findall(before_answer))) >= 4, screen[-2000:]  # the spinner turns
    assert "订单 ORD-1001 已发货" in screen and child.exitstatus == 0


RETRY = "rate limited (HTTP 429), retrying in 1.0 s, attempt 2 of 6"


def test_a_terminal_shows_each_retry_as_it_happens():
    with FakeAPI() as api:
        api.enqueue("responses", error(429, "slow down", headers={"Retry-After": "1"}), slow_answer(0.0))
        child = ask_in_terminal(api, columns=120)
        assert len(api.requests_for("responses")) == 2
    screen = child.before
    assert RETRY in screen.split("订单 ORD-1001 已发货")[0], screen[-2000:]
    assert "订单 ORD-1001 已发货" in screen and child.exitstatus == 0


def piped(api: FakeAPI, *args: str):
    """`orderbot ask` with its output going to a pipe (CliRunner's streams are not terminals)."""
    env = {"OPENAI_API_KEY": "sk-test-wait", "OPENAI_BASE_URL": api.url}
    return cli("ask", "--provider", "openai", *args, "查询 ORD-1001", env=env)


def test_retries_are_not_shown_in_piped_output_or_json():
    with FakeAPI() as api:
        for _ in range(2):
            api.enqueue("responses", error(429, "slow down", headers={"Retry-After": "0"}), slow_answer(0.0))
        runs = [piped(api), piped(api, "--json")]
        assert len(api.requests_for("responses")) == 4
    for run in runs:
        assert run.exit_code == 0 and "已发货" in run.output
        assert "retrying" not in run.output  # stdout and stderr both


def test_piped_and_quiet_runs_show_no_waiting_line():
    with FakeAPI() as api:
        api.enqueue("responses", slow_answer(0.0), slow_answer(0.0))
        plain = piped(api)
        child = orderbot_in_a_terminal(
            ["ask", "--quiet", "--provider", "openai", "查询 ORD-1001"], env=environment(api), dimensions=(24, 80)
        )
        child.expect(pexpect.EOF)
        child.close()
    assert plain.exit_code == 0 and "已发货" in plain.output and "waiting for the model" not in plain.output
    assert "已发货" in child.before and "waiting for the model" not in child.before


def test_the_repl_shows_the_same_waiting_line_while_the_model_works(tmp_path):
    with FakeAPI() as api:
        api.enqueue("responses", slow_answer(2.0))
        env = environment(api) | {"ORDERBOT_STATE_DIR": str(tmp_path), "HOME": str(tmp_path)}
        child = orderbot_process_in_a_terminal(["repl", "--provider", "openai"], env=env, dimensions=(24, 80))
        child.expect_exact("orderbot> ")
        child.sendline("查询 ORD-1001")
        child.expect_exact("订单 ORD-1001 已发货。")
        shown = child.before
        child.expect_exact("orderbot> ")
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
    seconds = {int(m.group(1)) for m in WAITED.finditer(shown)}
    assert len(seconds) >= 2 and len(set(SPINNER.findall(shown))) >= 3, shown[-2000:]
    assert child.exitstatus == 0
