"""Helpers for the security regressions (tests/security): a process without root's powers, a small
file system that fills up. Tampering with a stored record (with or without the state
directory's key) is tests/runkit.py's."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def state_dir() -> Path:
    return Path(os.environ["ORDERBOT_STATE_DIR"])


def statuses(orders_file: Path) -> dict[str, str]:
    """Each order's status, read straight from the JSON file."""
    return {o["order_id"]: o["status"] for o in json.loads(Path(orders_file).read_text("utf-8"))["orders"]}


# What lets root read, write and chmod any file whatever its mode: taken away in as_a_user.
ROOT_POWERS = "-dac_override,-dac_read_search,-fowner"


def as_a_user(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """orderbot in a new process that file modes apply to, as they do to any user. Tests and
    CI run as root, whom a mode 000 folder does not stop: then the process runs without the
    capabilities that let root ignore modes (setpriv drops them from its bounding set)."""
    command = [sys.executable, "-m", "orderbot", *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            if os.environ.get("CI") == "true":
                pytest.fail("CI=true: these tests need setpriv (util-linux) to run as root without its powers")
            pytest.skip("running as root without setpriv: file modes cannot be made to apply")
        command = ["setpriv", "--bounding-set", ROOT_POWERS, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=os.environ)


@contextmanager
def small_file_system(path: Path, size: str = "1m") -> Iterator[Path]:
    """A real file system of `size` (tmpfs) mounted at `path`, unmounted afterwards, for the
    cases of a disk that fills up. Mounting needs root, as CI runs; elsewhere the test is
    skipped (under CI=true it fails)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        why = f"cannot mount a small tmpfs here ({mounted.stderr.strip() or 'mount failed'})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {why}")
        pytest.skip(why)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def bind_mount(source: Path, target: Path) -> None:
    """`source` (a file) seen at `target`: writes to `target` go to `source`'s file system."""
    subprocess.run(["mount", "--bind", str(source), str(target)], check=True, capture_output=True)


def unmount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True)


def fill(directory: Path) -> None:
    """Write zeros into `directory` until its file system has no room left."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
