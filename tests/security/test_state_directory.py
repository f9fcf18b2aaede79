"""The state directory is orderbot's (orderbot.runs.statedir): it is made private, nothing
planted in it is followed or waited on (the run store's database and its journal, the key,
the log, an earlier orderbot's files being taken over), and a state directory that cannot be
used is one sentence with exit 6, before anything runs, orders untouched, nothing half-written.

The tests run as root (as CI does), whom file modes do not stop: the cases about modes run
orderbot in a process without root's power to read and write anything (securitykit.as_a_user)."""

from __future__ import annotations

import logging
import os
import stat
import subprocess

import pytest
import warm_orderbot
from clikit import cli
from runkit import only_run, record_bytes, run_ids
from securitykit import as_a_user, state_dir, statuses

from orderbot.runs.statedir import LogFile

QUESTION = "查询 ORD-1001"
CANCEL = "取消订单 ORD-1002，不想要了"


def orderbot(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """orderbot in its own process (a warm one), so a hang is a failed test rather than a stuck suite."""
    return subprocess.run(
        [warm_orderbot.command(), *args], capture_output=True, text=True, timeout=timeout, env=os.environ
    )


def one_sentence(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert "Traceback" not in output and "Error:" not in output, output
    return lines[0]


def paused_run(orders_file) -> str:
    """A run waiting for approval of ORD-1002's cancellation; its id."""
    result = cli("ask", "--user", "C001", "--orders", str(orders_file), CANCEL)
    assert result.exit_code == 4, result.output
    return only_run()


# ---- made private ---------------------------------------------------------------------------


def test_the_state_directory_and_the_parents_it_makes_are_private(tmp_path, orders_file):
    where = tmp_path / "new" / "deeper" / "state"
    assert cli("ask", "--state-dir", str(where), "--orders", str(orders_file), QUESTION).exit_code == 0
    for made in (tmp_path / "new", tmp_path / "new" / "deeper", where):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made
    assert sorted(p.name for p in where.iterdir()) == ["orderbot.log", "record.key", "runs.db"]  # no runs/, no index
    for private in where.iterdir():
        assert stat.S_IMODE(private.stat().st_mode) == 0o600, private


def test_a_database_made_readable_by_hand_is_made_private_again(orders_file):
    assert cli("ask", "--orders", str(orders_file), QUESTION).exit_code == 0
    (state_dir() / "runs.db").chmod(0o644)
    assert cli("runs").exit_code == 0
    assert stat.S_IMODE((state_dir() / "runs.db").stat().st_mode) == 0o600


# ---- the database and its journal: never opened through a link, never waited on --------------


@pytest.mark.parametrize("name", ["runs.db", "runs.db-wal", "runs.db-shm"])
def test_a_database_or_journal_linked_to_another_file_is_refused_and_that_file_left_alone(name, tmp_path, orders_file):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    state_dir().mkdir(mode=0o700)
    (state_dir() / name).symlink_to(victim)
    for args in (["ask", "--orders", str(orders_file), QUESTION], ["runs"]):
        done = cli(*args)
        assert done.exit_code == 6, done.output
        assert name in one_sentence(done.output) and "not a regular file" in done.output
    assert victim.read_text() == "keep me\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert statuses(orders_file)["ORD-1002"] == "处理中"


@pytest.mark.slow
def test_a_database_that_is_a_fifo_is_never_waited_on(orders_file):
    state_dir().mkdir(mode=0o700)
    os.mkfifo(state_dir() / "runs.db")
    for args in (["runs"], ["ask", "--orders", str(orders_file), QUESTION]):
        done = orderbot(*args, timeout=30)  # a wait on the FIFO would hang here until killed
        assert done.returncode == 6, done.stderr
        assert "runs.db" in one_sentence(done.stderr)


@pytest.mark.slow
def test_the_old_files_taken_over_are_never_followed_and_move_aside_as_links(tmp_path, orders_file):
    """An earlier orderbot's files, planted as links: nothing they point to is read, changed or
    moved; the links themselves are moved aside as they are."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "runs").mkdir(parents=True)
    (elsewhere / "runs" / "261101-000000-0000.json").write_text("{}")
    (elsewhere / "audit.log").write_text("keep me\n")
    state_dir().mkdir(mode=0o700)
    (state_dir() / "runs").symlink_to(elsewhere / "runs")
    (state_dir() / "audit.log").symlink_to(elsewhere / "audit.log")
    os.mkfifo(state_dir() / "runs.index")
    done = orderbot("runs", timeout=30)
    assert done.returncode == 0, done.stderr
    assert "0 runs and 0 audit entries" in done.stderr and "runs was not taken over" in done.stderr
    assert "audit.log was not taken over" in done.stderr
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["261101-000000-0000.json", "audit.log", "runs"]
    assert (elsewhere / "audit.log").read_text() == "keep me\n"
    aside = state_dir() / "json-runs.old"
    assert (aside / "runs").is_symlink() and (aside / "audit.log").is_symlink()
    assert stat.S_ISFIFO(os.lstat(aside / "runs.index").st_mode)


# ---- orderbot.log: never written through a link -----------------------------------------------


def test_a_log_linked_to_another_file_is_not_written_and_doctor_says_so(tmp_path, orders_file):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    state_dir().mkdir(mode=0o700)
    (state_dir() / "orderbot.log").symlink_to(victim)
    assert cli(
        "ask",
        "--orders",
        str(orders_file),
        "--provider",
        "chat",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--timeout",
        "1",
        QUESTION,
    ).exit_code in (3, 5)  # fmt: skip - retried, so logged
    assert victim.read_text() == "keep me\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    doctor = cli("doctor")
    lines = [line for line in doctor.output.splitlines() if "orderbot.log" in line]
    assert len(lines) == 1 and "symbolic link" in lines[0], doctor.output


@pytest.mark.parametrize("then", ["linked", "gone"])
def test_a_log_that_becomes_a_link_or_loses_its_folder_after_the_start_drops_lines_quietly(tmp_path, then):
    """The log is opened at its first line: what sits there by then is not followed, and a
    folder removed meanwhile is not an error that reaches the person."""
    folder = tmp_path / "state"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    handler = LogFile(folder / "orderbot.log")
    if then == "linked":
        (folder / "orderbot.log").symlink_to(victim)
    else:
        folder.rmdir()
    line = logging.LogRecord("orderbot", logging.ERROR, __file__, 1, "a line for the log", None, None)
    handler.emit(line)
    handler.emit(line)  # dropped from now on, without trying again
    assert handler.broken and victim.read_text() == "keep me\n"
    handler.close()


# ---- a state directory that cannot be used: one sentence, exit 6 -------------------------------


def unusable(kind: str, tmp_path):
    """A state directory of this kind."""
    where = state_dir()
    if kind == "runs.db is a folder":
        (where / "runs.db").mkdir(parents=True)
    elif kind == "state dir links to a file":
        (tmp_path / "a-file").write_text("x\n")
        where.symlink_to(tmp_path / "a-file")
    elif kind == "state dir is a file":
        where.write_text("x\n")
    elif kind == "state dir under a file":
        where.write_text("x\n")
        return where / "deeper"
    return where


KINDS = {
    "runs.db is a folder": "not a regular file",
    "state dir links to a file": "not a directory",
    "state dir is a file": "not a directory",
    "state dir under a file": "not a directory",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "command",
    [
        ["ask", QUESTION],
        ["runs"],
        ["runs", "show", "last"],
        ["repl"],
        ["resume", "last", "--approve", "--user", "C001"],
    ],
    ids=["ask", "runs", "runs show", "repl", "resume"],
)
def test_an_unusable_state_directory_is_one_sentence_and_exit_6(kind, command, tmp_path, orders_file):
    where = unusable(kind, tmp_path)
    result = cli(*command, "--state-dir", str(where), *([] if command[0] == "runs" else ["--orders", str(orders_file)]))
    assert result.exit_code == 6, result.output
    line = one_sentence(result.output)
    assert KINDS[kind] in line, line
    assert "orderbot resume" not in result.output
    assert statuses(orders_file)["ORD-1002"] == "处理中"


@pytest.mark.parametrize("kind", KINDS)
def test_doctor_names_an_unusable_state_directory_in_one_line(kind, tmp_path):
    where = unusable(kind, tmp_path)
    result = cli("doctor", "--state-dir", str(where))
    assert result.exit_code == 6 and "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if KINDS[kind] in line] != []


@pytest.mark.slow
def test_an_unreadable_database_is_one_sentence_and_exit_6(orders_file):
    run_id = paused_run(orders_file)
    (state_dir() / "runs.db").chmod(0)
    try:
        for args in (["runs"], ["runs", "show", run_id], ["ask", "--orders", str(orders_file), QUESTION],
                     ["resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file)]):  # fmt: skip
            done = as_a_user(*args)
            assert done.returncode == 6, (args, done.stdout, done.stderr)
            assert "runs.db" in one_sentence(done.stderr)
            assert "orderbot resume" not in done.stdout
    finally:
        (state_dir() / "runs.db").chmod(0o600)
    assert statuses(orders_file)["ORD-1002"] == "处理中"


@pytest.mark.slow
@pytest.mark.parametrize("decision", ["--approve", "--reject"])
def test_resume_in_a_read_only_state_directory_changes_nothing(decision, orders_file):
    run_id = paused_run(orders_file)
    record = record_bytes(run_id)
    state_dir().chmod(0o500)
    try:
        done = as_a_user("resume", run_id, decision, "--user", "C001", "--orders", str(orders_file))
    finally:
        state_dir().chmod(0o700)
    assert done.returncode == 6, (done.stdout, done.stderr)
    line = one_sentence(done.stderr)
    assert "runs.db" in line, line
    assert "orderbot resume" not in done.stdout + done.stderr  # no hint for a pause that was not recorded
    assert statuses(orders_file)["ORD-1002"] == "处理中"
    assert record_bytes(run_id) == record and run_ids() == [run_id]


# ---- the record key: the same rule ----------------------------------------------------------------


@pytest.mark.slow
def test_a_record_key_that_is_a_fifo_is_one_sentence_not_a_hang(orders_file):
    state_dir().mkdir(mode=0o700)
    os.mkfifo(state_dir() / "record.key")
    done = orderbot("ask", "--orders", str(orders_file), QUESTION, timeout=30)
    assert done.returncode == 6, done.stderr
    assert "record key" in one_sentence(done.stderr)
