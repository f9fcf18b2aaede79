"""`orderbot repl` with its lines piped in, in this process (cheap): the words that leave,
and `/runs` of this session apart from every run in the store."""

from __future__ import annotations

import pytest
from clikit import cli
from runkit import run_ids


def recorded() -> list[str]:
    return run_ids()


@pytest.mark.parametrize("word", ["exit", "quit", ":q", "/exit", "/quit", " EXIT "])
def test_a_word_that_leaves_is_never_a_question(word):
    result = cli("repl", input=f"{word}\n查询 ORD-1001\n")
    assert result.exit_code == 0, result.output
    assert recorded() == [] and "ORD-1001" not in result.output  # nothing after it was read either


def test_runs_shows_this_sessions_runs_and_runs_all_every_run():
    assert cli("ask", "查询 ORD-1003").exit_code == 0  # an earlier run, of another session
    result = cli("repl", input="/runs\n查询 ORD-1001\n/runs\n/runs all\n/runs nope\n")
    assert result.exit_code == 0, result.output
    empty, mine, every = result.stdout.split("orderbot> /runs")[1:4]
    assert "No runs in this session yet" in empty
    assert "查询 ORD-1001" in mine and "查询 ORD-1003" not in mine
    assert "查询 ORD-1001" in every and "查询 ORD-1003" in every
    assert "/runs all every recorded run" in result.stdout.split("orderbot> /runs nope")[1]


def test_help_and_clear_are_the_repls_own_commands_and_piped_clear_writes_no_escape_code():
    result = cli("repl", input="help\nclear\nCLEAR\n")
    assert result.exit_code == 0, result.output
    assert "/trace on|off" in result.stdout and "\x1b" not in result.stdout
    assert recorded() == []  # no word was sent to the model as a question
