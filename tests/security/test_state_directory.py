"""The state directory is orderbot's (orderbot.runs.statedir): it is made private, nothing
planted in it is followed or waited on, and a state directory that cannot be used is one
sentence with exit 6, before anything runs, orders untouched.

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
    return sorted((state_dir() / "runs").glob("*.json"))[-1].stem


# ---- made private ---------------------------------------------------------------------------


def test_the_state_directory_and_the_parents_it_makes_are_private(tmp_path, orders_file):
    where = tmp_path / "new" / "deeper" / "state"
    assert cli("ask", "--state-dir", str(where), "--orders", str(orders_file), QUESTION).exit_code == 0
    for made in (tmp_path / "new", tmp_path / "new" / "deeper", where, where / "runs"):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made
    for private in (where / "orderbot.log", where / "record.key", *(where / "runs").glob("*.json")):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600, private


# ---- runs.index: a cache, never followed or waited on ----------------------------------------


def test_an_index_linked_to_another_file_leaves_that_file_alone(tmp_path, orders_file):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    state_dir().mkdir(mode=0o700)
    (state_dir() / "runs.index").symlink_to(victim)
    assert cli("ask", "--orders", str(orders_file), QUESTION).exit_code == 0
    listed = cli("runs")
    assert listed.exit_code == 0 and "查询 ORD-1001" in listed.output, listed.output
    assert victim.read_text() == "keep me\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    index = state_dir() / "runs.index"
    assert not index.is_symlink() and index.is_file()  # rebuilt in its place, a file of orderbot's own


def test_an_index_linked_to_a_device_never_replaces_the_device(tmp_path, orders_file):
    device = tmp_path / "null-device"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a null device of the test's own
    except PermissionError:
        pytest.skip("making a device node needs root (CI runs as root)")
    state_dir().mkdir(mode=0o700)
    index = state_dir() / "runs.index"
    index.symlink_to(device)
    assert cli("ask", "--orders", str(orders_file), QUESTION).exit_code == 0
    assert cli("runs").exit_code == 0
    assert stat.S_ISCHR(device.stat().st_mode), "the device the index linked to was replaced"
    assert stat.S_ISREG(os.lstat(index).st_mode)


@pytest.mark.slow
def test_an_index_that_is_a_fifo_is_never_waited_on(orders_file):
    state_dir().mkdir(mode=0o700)
    os.mkfifo(state_dir() / "runs.index")
    for args in (["runs"], ["ask", "--orders", str(orders_file), QUESTION], ["runs"]):
        done = orderbot(*args, timeout=30)  # a wait on the FIFO would hang here until killed
        assert done.returncode == 0, done.stderr
    assert "查询 ORD-1001" in done.stdout
    assert stat.S_ISREG(os.lstat(state_dir() / "runs.index").st_mode)


@pytest.mark.slow
def test_a_record_that_is_a_fifo_is_listed_as_unreadable_not_waited_on(orders_file):
    assert cli("ask", "--orders", str(orders_file), QUESTION).exit_code == 0
    os.mkfifo(state_dir() / "runs" / "261130-050026-1a2b.json")
    done = orderbot("runs", timeout=30)
    assert done.returncode == 0, done.stderr
    shown = orderbot("runs", "show", "261130-050026-1a2b", timeout=30)
    assert shown.returncode == 6 and "not a regular file" in one_sentence(shown.stderr), shown.stderr


@pytest.mark.slow
def test_an_index_in_a_directory_orderbot_cannot_write_does_not_stop_a_run(orders_file):
    """Another user's index in a state directory only they can write: the index is a cache,
    so the run answers and its record is written (runs/ is orderbot's own)."""
    assert cli("ask", "--orders", str(orders_file), QUESTION).exit_code == 0  # the key and runs/
    assert cli("runs").exit_code == 0  # the index
    nobody = 65534
    os.chown(state_dir() / "runs.index", nobody, nobody)
    os.chown(state_dir(), nobody, nobody)
    state_dir().chmod(0o755)
    try:
        done = as_a_user("ask", "--orders", str(orders_file), QUESTION)
        assert done.returncode == 0, done.stderr
        assert "已发货" in done.stdout
        assert len(list((state_dir() / "runs").glob("*.json"))) == 2
        listed = as_a_user("runs")
        assert listed.returncode == 0 and listed.stdout.count("查询 ORD-1001") == 2, listed.stdout + listed.stderr
    finally:
        os.chown(state_dir(), os.getuid(), os.getgid())


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
    """A state directory of this kind, and whether it also needs file modes to bite."""
    where = state_dir()
    if kind == "runs is a file":
        where.mkdir(mode=0o700)
        (where / "runs").write_text("not a folder\n")
    elif kind == "state dir links to a file":
        (tmp_path / "a-file").write_text("x\n")
        where.symlink_to(tmp_path / "a-file")
    elif kind == "state dir is a file":
        where.write_text("x\n")
    elif kind == "state dir under a file":
        where.write_text("x\n")
        return where / "deeper"
    return where


KINDS = ["runs is a file", "state dir links to a file", "state dir is a file", "state dir under a file"]


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
    assert "not a directory" in line, line
    assert "orderbot resume" not in result.output
    assert statuses(orders_file)["ORD-1002"] == "处理中"


def test_doctor_names_an_unusable_state_directory_in_one_line(tmp_path):
    where = unusable("runs is a file", tmp_path)
    result = cli("doctor", "--state-dir", str(where))
    assert result.exit_code == 6 and "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if "not a directory" in line] != []


@pytest.mark.slow
def test_an_unreadable_runs_folder_is_one_sentence_and_exit_6(orders_file):
    run_id = paused_run(orders_file)
    (state_dir() / "runs").chmod(0)
    try:
        for args in (["runs"], ["runs", "show", run_id], ["ask", "--orders", str(orders_file), QUESTION],
                     ["resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file)]):  # fmt: skip
            done = as_a_user(*args)
            assert done.returncode == 6, (args, done.stdout, done.stderr)
            one_sentence(done.stderr)
            assert "orderbot resume" not in done.stdout
    finally:
        (state_dir() / "runs").chmod(0o700)
    assert statuses(orders_file)["ORD-1002"] == "处理中"


@pytest.mark.slow
@pytest.mark.parametrize("decision", ["--approve", "--reject"])
def test_resume_in_a_read_only_state_directory_changes_nothing(decision, orders_file):
    run_id = paused_run(orders_file)
    record = (state_dir() / "runs" / f"{run_id}.json").read_bytes()
    for folder in (state_dir() / "runs", state_dir()):
        folder.chmod(0o500)
    try:
        done = as_a_user("resume", run_id, decision, "--user", "C001", "--orders", str(orders_file))
    finally:
        for folder in (state_dir(), state_dir() / "runs"):
            folder.chmod(0o700)
    assert done.returncode == 6, (done.stdout, done.stderr)
    line = one_sentence(done.stderr)
    assert "nothing was done" in line, line
    assert "orderbot resume" not in done.stdout + done.stderr  # no hint for a pause that was not recorded
    assert statuses(orders_file)["ORD-1002"] == "处理中"
    assert (state_dir() / "runs" / f"{run_id}.json").read_bytes() == record


# ---- the record key, the audit log and the lock files: the same rule ---------------------------


@pytest.mark.slow
def test_a_record_key_that_is_a_fifo_is_one_sentence_not_a_hang(orders_file):
    state_dir().mkdir(mode=0o700)
    os.mkfifo(state_dir() / "record.key")
    done = orderbot("ask", "--orders", str(orders_file), QUESTION, timeout=30)
    assert done.returncode == 6, done.stderr
    assert "record key" in one_sentence(done.stderr)


def test_a_lock_or_audit_log_linked_to_another_file_leaves_that_file_alone(tmp_path, orders_file):
    run_id = paused_run(orders_file)
    victims = []
    for name in (f"runs/{run_id}.lock", "audit.log.lock"):
        victim = tmp_path / f"victim-{len(victims)}.txt"
        victim.write_text("keep me\n")
        planted = state_dir() / name
        planted.unlink(missing_ok=True)
        planted.symlink_to(victim)
        victims.append(victim)
    result = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    assert result.exit_code == 0, result.output  # the locks are orderbot's: made again in place
    assert [v.read_text() for v in victims] == ["keep me\n"] * 2  # not emptied through the link
    assert statuses(orders_file)["ORD-1002"] == "已取消"


def test_an_audit_log_planted_as_a_link_is_not_appended_to(tmp_path, orders_file):
    run_id = paused_run(orders_file)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (state_dir() / "audit.log").unlink()
    (state_dir() / "audit.log").symlink_to(victim)
    result = cli("resume", run_id, "--approve", "--user", "C001", "--orders", str(orders_file))
    assert result.exit_code == 6 and "Traceback" not in result.output, result.output
    assert "audit" in result.output and "not a regular file" in result.output
    assert victim.read_text() == "keep me\n"
    assert statuses(orders_file)["ORD-1002"] == "处理中"  # refused before the cancel: nothing was done
