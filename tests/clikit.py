"""orderbot's command line run in the test process.

`cli("ask", "--json", "查询 ORD-1001")` runs the real Typer app with typer's CliRunner in the
test's own folder and state directory (tests/conftest.py's `isolated`) and returns its
Result. `env` adds to or overrides the environment for that one run, `input` is what stdin
holds. An exception that escapes orderbot fails the test there, with its traceback: a person
would have seen one, and CliRunner would otherwise only have turned it into exit code 1.

A module-level function rather than a fixture: the helpers beside the tests (a paused run,
a listing, tau2's replay in tests/shops/retail/tau2replay.py) call it too."""

from __future__ import annotations

import time
import traceback

from typer.testing import CliRunner, Result

from orderbot.cli import app

_runner = CliRunner()


def cli(*args: str, env: dict[str, str | None] | None = None, input: str | None = None) -> Result:
    result = _runner.invoke(app, list(args), env=env, input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        shown = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else repr(result.exception)
        raise AssertionError(f"orderbot {' '.join(args)} raised:\n{shown}\n{result.output}")
    return result


def on_time(seconds: float, deadline: float, *, slack: float = 1.0) -> bool:
    """Whether a run that took `seconds` ended by its `deadline` give or take `slack`, measured
    against this machine as it is now: past the slack, the time a trivial run takes right now
    (an offline ask, twice) is the margin, so a loaded machine is not taken for a run that
    overran, while a run that waited seconds past its deadline still is."""
    if seconds <= deadline + slack:
        return True
    began = time.monotonic()
    for _ in range(2):
        cli("ask", "--provider", "offline", "--json", "查询 ORD-1001")
    return seconds <= deadline + slack + (time.monotonic() - began)
