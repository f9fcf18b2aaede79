"""Help a newcomer can use: a line for every command and flag, an example per command,
commands in the order they are needed, and shell completion."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from clikit import cli

from orderbot.cli import app

NEWCOMER_ORDER = ["ask", "repl", "runs", "resume", "replay", "doctor"]


def commands(group=None, prefix: str = "") -> dict:
    """Every command, sub-commands of groups (such as `runs show`) included, by full name."""
    group = group or typer.main.get_command(app)
    found = {}
    for name in group.list_commands(None):
        command = group.get_command(None, name)
        found[prefix + name] = command
        if hasattr(command, "commands"):
            found.update(commands(command, prefix + name + " "))
    return found


def test_every_command_and_flag_has_a_help_line_and_every_command_an_example():
    cmds = commands()
    assert {"ask", "repl"} <= set(cmds)
    for name, command in cmds.items():
        assert (command.help or "").strip(), f"{name} has no help"
        assert re.search(rf"Examples?: orderbot {name}\b", command.epilog or ""), f"{name} has no example"
        for param in command.params:  # options and arguments alike
            assert (getattr(param, "help", None) or "").strip(), f"{name} {param.opts} has no help"


def test_root_help_lists_commands_in_the_order_a_newcomer_needs_them():
    output = cli("--help", env={"COLUMNS": "120"}).output
    listed = [name for name in NEWCOMER_ORDER if f" {name} " in output]
    assert listed[:2] == ["ask", "repl"]
    assert sorted(listed, key=output.index) == listed  # each appears after the one before it


def test_repl_help_shows_its_flags_and_example():
    output = cli("repl", "--help", env={"COLUMNS": "200"}).output
    for flag in (
        "--max-steps",
        "--timeout",
        "--max-tool-calls",
        "--max-calls-per-step",
        "--orders",
        "--user",
        "--provider",
        "--model",
        "--base-url",
        "--state-dir",
        "--trace",
    ):
        assert flag in output
    assert "Example: orderbot repl --user C001" in output


def complete(words: str) -> list[str]:
    """What bash completion offers, asked the way the installed completion script asks."""
    script = Path(sys.executable).with_name("orderbot")
    env = {
        **os.environ,
        "_ORDERBOT_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=30)
    return result.stdout.split()


@pytest.mark.slow
def test_shell_completion_offers_commands_and_flags():
    assert "repl" in complete("orderbot re")
    assert {"--max-steps", "--max-tool-calls", "--max-calls-per-step"} <= set(complete("orderbot repl --max"))
    # Installing it is Typer's: the options are offered. (Showing the script needs the
    # parent shell to be detectable, which a detached CI process may not have.)
    help_text = cli("--help").output
    assert "--install-completion" in help_text and "--show-completion" in help_text
