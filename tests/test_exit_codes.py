"""Exit codes by meaning: the README's table is ExitCode, a value typed on the command line
that is refused is a usage error (2) wherever it is checked, and a refusal because of who
asks or because someone else got there first has its own code (9), apart from a broken
setting or record (6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clikit import cli
from runkit import only_run

from orderbot.errors import ConfigError, ExitCode, OperatorRefused, RecordError, UsageError
from orderbot.runs.base import RunConflict

ROOT = Path(__file__).resolve().parents[1]


def readme_exit_codes() -> dict[int, str]:
    """The rows of the README's exit-code table: code -> meaning."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", table, re.M)
    return {int(code): meaning for code, meaning in rows}


def test_the_readme_table_lists_exactly_the_exit_codes_orderbot_has():
    assert sorted(readme_exit_codes()) == sorted(code.value for code in ExitCode)


def test_the_table_walk_sees_a_missing_row(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (tmp_path / "README.md").write_text(re.sub(r"^\| 9 \|.*\n", "", readme, flags=re.M), encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert 9 not in readme_exit_codes() and 6 in readme_exit_codes()


def test_each_error_says_its_code_by_meaning():
    assert UsageError.exit_code == ExitCode.USAGE and ConfigError.exit_code == ExitCode.CONFIG
    assert not issubclass(RecordError, ConfigError)  # a record is not a setting
    assert RecordError.exit_code == ExitCode.CONFIG
    assert issubclass(RunConflict, OperatorRefused) and OperatorRefused.exit_code == ExitCode.REFUSED
    assert ExitCode.REFUSED not in (ExitCode.CONFIG, ExitCode.DIFFERS)


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["ask", "--base-url", "notaurl", "x"], {"OPENAI_BASE_URL": "notaurl"}, "invalid base URL"),
        (["ask", "--orders", "mysql://x@y/z", "x"], {"ORDERBOT_ORDERS": "mysql://x@y/z"}, "unknown kind of orders"),
        (["runs", "--runs", "mysql://x@y/z"], {"ORDERBOT_RUNS": "mysql://x@y/z"}, "unknown kind of run store"),
    ],
    ids=["base-url", "orders", "runs"],
)
def test_a_refused_value_is_a_usage_error_typed_and_a_config_error_from_the_environment(args, env, says):
    typed = cli(*args)
    assert typed.exit_code == ExitCode.USAGE and says in typed.stderr, typed.output
    flag = next(a for a in args if a.startswith("--"))
    from_env = cli(*[a for a in args if a != flag and a not in env.values()], env=env)
    assert from_env.exit_code == ExitCode.CONFIG and says in from_env.stderr, from_env.output


def test_a_run_id_that_is_not_one_is_a_usage_error():
    result = cli("runs", "show", "not-an-id")
    assert result.exit_code == ExitCode.USAGE and "'not-an-id' is not a run id" in result.stderr


def paused(orders_file: Path) -> str:
    result = cli("ask", "--user", "C001", "--orders", str(orders_file), "取消订单 ORD-1002")
    assert result.exit_code == ExitCode.AWAITING_APPROVAL, result.output
    return only_run()


def test_resume_of_a_paused_run_without_approve_or_reject_is_a_usage_error(orders_file):
    run_id = paused(orders_file)
    result = cli("resume", run_id, "--user", "C001")
    assert result.exit_code == ExitCode.USAGE and "--approve" in result.stderr


def test_who_asks_and_who_came_first_are_refusals_not_configuration(orders_file):
    run_id = paused(orders_file)
    own = cli("resume", run_id, "--approve", "--user", "C001", env={"ORDERBOT_FOUR_EYES": "1"})
    assert own.exit_code == ExitCode.REFUSED and "four eyes" in own.stderr, own.output

    assert cli("resume", run_id, "--reject", "--user", "C001").exit_code == ExitCode.OK
    late = cli("approvals", "approve", run_id)  # from the queue, after another operator rejected it
    assert late.exit_code == ExitCode.REFUSED and "already rejected by" in late.stderr, late.output
