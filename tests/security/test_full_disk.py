"""A file system that fills up, on a real (small) file system the test mounts:

- the log's: its lines are dropped silently (no `--- Logging error ---` on the screen of
  every retry), and `orderbot doctor` says so, once;
- the state directory's, after an approved cancellation ran: the message says the order
  WAS cancelled and what to check, never that nothing happened;
- the state directory's, before a pause could be recorded: one sentence, and no resume
  command for a pause that is not on disk.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from clikit import cli
from fakeapi import WIRES, FakeAPI, error
from securitykit import bind_mount, fill, small_file_system, statuses, unmount

from orderbot.models.scripted import ScriptedModel, call, calls

pytestmark = pytest.mark.slow  # each test mounts a small file system (a second or so)

CANCEL = "取消订单 ORD-1002，不想要了"


def test_a_full_log_is_dropped_silently_and_doctor_says_so_once(tmp_path, monkeypatch, orders_file):
    with small_file_system(tmp_path / "full", "64k") as full:
        (full / "orderbot.log").touch()
        fill(full)
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        (state / "orderbot.log").touch(mode=0o600)
        bind_mount(full / "orderbot.log", state / "orderbot.log")  # the log alone is on the full file system
        try:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 40)
            with FakeAPI() as api:
                wire = WIRES["chat"]
                api.enqueue(wire.route, error(503, "busy"))  # a retry, which is logged
                api.enqueue(wire.route, error(503, "busy"))
                api.enqueue(wire.route, wire.text("ORD-1001 已发货。"))
                result = cli("ask", "--provider", "chat", "--base-url", api.url, "--orders", str(orders_file),
                             "查询 ORD-1001")  # fmt: skip
            assert result.exit_code == 0, result.output
            assert "Logging error" not in result.output and "Traceback" not in result.output, result.output
            assert len(api.requests) == 3  # it did retry, and so tried to log
            doctor = cli("doctor")
            about_the_log = [line for line in doctor.output.splitlines() if "orderbot.log" in line]
            assert len(about_the_log) == 1, doctor.output
            assert "No space left on device" in about_the_log[0]
            assert "Logging error" not in doctor.output
        finally:
            unmount(state / "orderbot.log")


def fill_disk_when_cancelled(connection, directory) -> None:
    """A trigger that fills `directory`'s file system while the cancellation is written:
    the approved cancel goes through, and no record can be written after it."""
    connection.execute(f"""
        CREATE FUNCTION fill_the_disk() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            COPY (SELECT 1) TO PROGRAM
                'cat >/dev/null; dd if=/dev/zero of={directory}/filler bs=4096 2>/dev/null; true';
            RETURN NEW;
        END $$;
        CREATE TRIGGER fill_the_disk AFTER UPDATE ON orders FOR EACH ROW
            WHEN (NEW.status = '已取消') EXECUTE FUNCTION fill_the_disk();
    """)


def test_a_cancel_that_ran_before_the_disk_filled_says_it_was_done(
    tmp_path, monkeypatch, postgres_server, postgres_template
):
    import psycopg

    database = postgres_server.new_database(postgres_template)
    url = postgres_server.url(database)
    reachable = Path(tempfile.mkdtemp(prefix="orderbot-full-"))  # the server's user must reach it: not under
    reachable.chmod(0o755)  # pytest's private tmp_path
    try:
        with small_file_system(reachable / "small", "2m") as small:
            monkeypatch.setenv("ORDERBOT_STATE_DIR", str(small / "state"))
            filler = small / "filler"
            filler.mkdir()
            filler.chmod(0o777)  # the database server's own user writes it
            assert cli("ask", "--user", "C001", "--orders", url, CANCEL).exit_code == 4
            with psycopg.connect(url, autocommit=True) as connection:
                fill_disk_when_cancelled(connection, filler)

            result = cli("resume", "last", "--approve", "--user", "C001", "--orders", url)

            assert result.exit_code == 6, result.output
            lines = [line for line in result.output.splitlines() if line.startswith("orderbot:")]  # after the table
            assert len(lines) == 1 and "Traceback" not in result.output, result.output
            assert "WAS carried out" in lines[0] and "Cancel ORD-1002" in lines[0], lines[0]
            assert "No space left on device" in lines[0]
            assert "nothing was" not in lines[0] and "orderbot resume" not in lines[0]
            with psycopg.connect(url) as connection:
                status = connection.execute("SELECT status FROM orders WHERE order_id = 'ORD-1002'").fetchone()[0]
            assert status == "已取消"  # it was: the message says so
            assert (filler / "filler").stat().st_size > 0  # and it was the full disk that stopped the record
    finally:
        postgres_server.drop_database(database)
        shutil.rmtree(reachable, ignore_errors=True)


@pytest.mark.parametrize("json_out", [False, True])
def test_a_pause_that_could_not_be_recorded_prints_no_resume_command(json_out, tmp_path, monkeypatch, use_model):
    with small_file_system(tmp_path / "small", "1m") as small:
        monkeypatch.setenv("ORDERBOT_STATE_DIR", str(small / "state"))
        orders = tmp_path / "orders.json"
        from orderbot.shops.sample.model import SAMPLE_PATH

        orders.write_bytes(SAMPLE_PATH.read_bytes())

        def fill_then_propose(request):
            fill(small)  # the record of the run's start is on disk; its pause will not fit
            return calls(call("cancel_order", {"order_id": "ORD-1002", "reason": "不想要了"}))

        use_model(ScriptedModel([fill_then_propose]))
        args = ["ask", "--provider", "scripted", "--user", "C001", "--orders", str(orders), CANCEL]
        result = cli(*args, *(["--json"] if json_out else []))

        assert result.exit_code == 6, result.output
        assert "orderbot resume" not in result.output and "resume_command" not in result.output, result.output
        error_lines = [line for line in result.output.splitlines() if line.startswith("orderbot:")]
        assert len(error_lines) == 1 and "No space left on device" in error_lines[0], result.output
        assert "nothing was changed" in error_lines[0]
        if json_out:
            assert not result.stdout.strip() or json.loads(result.stdout) is None
        assert statuses(orders)["ORD-1002"] == "处理中"
