"""Resume acts on the orders source the run used, and empty settings are
unset. A run paused in directory A and resumed from directory B (with its own orders.json
and a .env copied from .env.example) must cancel the order in A's file, never B's."""

from __future__ import annotations

import shutil

import pytest
from clikit import cli
from runkit import only_run, run_ids
from securitykit import statuses

from orderbot.shops.sample.model import SAMPLE_PATH

ENV_EXAMPLE = "ORDERBOT_ORDERS=\nORDERBOT_USER=\nORDERBOT_PROVIDER=\nORDERBOT_TIMEOUT=\nOPENAI_BASE_URL=\n"


def status(path, order_id="ORD-1002") -> str:
    return statuses(path)[order_id]


@pytest.fixture
def two_dirs(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        shutil.copyfile(SAMPLE_PATH, d / "orders.json")
    (b / ".env").write_text(ENV_EXAMPLE)
    monkeypatch.chdir(a)
    result = cli("ask", "--user", "C001", "取消订单 ORD-1002")  # ./orders.json of A
    assert result.exit_code == 4, result.output
    run_id = only_run()
    monkeypatch.chdir(b)
    return a, b, run_id


def test_resume_from_another_directory_acts_on_the_recorded_file(two_dirs):
    a, b, run_id = two_dirs
    b_before = (b / "orders.json").read_bytes()
    result = cli("resume", run_id, "--approve", "--user", "C001")
    assert result.exit_code == 0, result.output
    assert status(a / "orders.json") == "已取消"
    assert (b / "orders.json").read_bytes() == b_before


def test_orderbot_orders_in_the_environment_does_not_redirect_a_resume(two_dirs, monkeypatch):
    a, b, run_id = two_dirs
    monkeypatch.setenv("ORDERBOT_ORDERS", str(b / "orders.json"))
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    assert status(a / "orders.json") == "已取消" and status(b / "orders.json") == "处理中"


def test_a_gone_source_is_refused_in_one_sentence(two_dirs):
    a, b, run_id = two_dirs
    shutil.rmtree(a)
    result = cli("resume", run_id, "--approve", "--user", "C001")
    assert result.exit_code == 6 and "is gone" in result.output and "--orders" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert status(b / "orders.json") == "处理中"


def test_a_different_file_at_the_same_path_is_refused_unless_named(two_dirs):
    a, b, run_id = two_dirs
    a.rename(a.with_name("a-old"))  # another tree at the same path: a new checkout, a copy
    a.mkdir()
    shutil.copyfile(SAMPLE_PATH, a / "orders.json")
    result = cli("resume", run_id, "--approve", "--user", "C001")
    assert result.exit_code == 6 and "is not the orders file" in result.output, result.output
    assert status(a / "orders.json") == "处理中" and status(b / "orders.json") == "处理中"
    named = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(a / "orders.json"))
    assert named.exit_code == 0, named.output
    assert status(a / "orders.json") == "已取消" and status(b / "orders.json") == "处理中"


def test_orderbots_own_rewrite_keeps_the_identity(two_dirs, monkeypatch):
    """Another run cancelling another order rewrites the file (a new inode): still the same source."""
    a, b, run_id = two_dirs
    monkeypatch.chdir(a)
    assert cli("ask", "--user", "C001", "取消订单 ORD-1013").exit_code == 4
    [other] = set(run_ids()) - {run_id}
    assert cli("resume", other, "--approve", "--user", "C001").exit_code == 0
    monkeypatch.chdir(b)
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    assert status(a / "orders.json") == "已取消"


@pytest.mark.parametrize("name", ["ORDERBOT_TIMEOUT", "ORDERBOT_MAX_STEPS", "ORDERBOT_PROVIDER", "ORDERBOT_KEEP_RUNS"])
def test_an_empty_setting_is_unset(name, monkeypatch, tmp_path):
    (tmp_path / "work" / ".env").write_text(f"{name}=\n")
    assert cli("ask", "查询 ORD-1001").exit_code == 0
    monkeypatch.setenv(name, "")
    assert cli("ask", "查询 ORD-1001").exit_code == 0


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity"])
@pytest.mark.parametrize("name", ["ORDERBOT_APPROVAL_TTL_HOURS", "ORDERBOT_TIMEOUT"])
def test_every_float_setting_is_finite(name, value, monkeypatch):
    monkeypatch.setenv(name, value)
    result = cli("ask", "查询 ORD-1001")
    assert result.exit_code == 6, result.output
    assert "finite" in result.output and "Traceback" not in result.output
