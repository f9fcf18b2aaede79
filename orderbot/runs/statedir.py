"""The state directory is orderbot's: made private, checked before it is used, and nothing
planted in it is followed or waited on.

    <state dir>/          0700 when orderbot makes it (parents it makes too)
      runs/               0700: one record per run (orderbot.runs.store); a file, a link or
                          anything but a directory here is refused in one sentence
      runs.index          a cache (orderbot.runs.index): read only while it is a regular
                          file; a link, FIFO or device in its place is replaced, never
                          followed or opened
      record.key          0600 (orderbot.runs.store); read only as a regular file
      audit.log           appended to (orderbot.runs.audit); refused when it is not a regular file
      *.lock              orderbot's own: a link or FIFO in a lock's place is removed first
      orderbot.log        0600, appended to; a link or anything but a regular file is not
                          written; when the file system is full, lines are dropped silently
                          (`orderbot doctor` says so)
      repl_history        the REPL's lines, under the same rule as the index

A refusal is a RecordError (exit 6) whose one sentence names the path and what is wrong.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import sys
import time
from pathlib import Path

from orderbot.errors import RecordError
from orderbot.i18n import t

PRIVATE = 0o700
LOG_FILE = "orderbot.log"


def make(state_dir: Path) -> None:
    """The state directory and its runs/ folder, created private when missing; RecordError
    when either is there but is not a directory."""
    refuse_unusable(state_dir)
    try:
        for missing in reversed([state_dir, *state_dir.parents]):  # the parents it makes are private too (XDG)
            if not missing.exists():
                missing.mkdir(mode=PRIVATE, exist_ok=True)
        (state_dir / "runs").mkdir(mode=PRIVATE, exist_ok=True)
    except OSError as exc:
        refuse_unusable(state_dir)  # made meanwhile as something else: say that
        raise RecordError(t("state.cannot_create", path=state_dir, reason=reason(exc))) from None


def refuse_unusable(state_dir: Path) -> None:
    """RecordError when the state directory or its runs/ folder exists and is not a
    directory (a missing one is fine: nothing is recorded yet). The state directory may
    be a link to a directory (a dotfiles checkout); runs/ may not be a link at all."""
    try:
        if not stat.S_ISDIR(os.stat(state_dir).st_mode):
            raise RecordError(t("state.not_a_directory", path=state_dir))
    except FileNotFoundError:
        return
    except NotADirectoryError:  # a parent is a file
        raise RecordError(t("state.not_a_directory", path=state_dir)) from None
    except OSError as exc:
        raise RecordError(t("state.unusable", path=state_dir, reason=reason(exc))) from None
    runs = state_dir / "runs"
    try:
        if not stat.S_ISDIR(os.lstat(runs).st_mode):
            raise RecordError(t("state.runs_not_a_directory", path=runs))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RecordError(t("state.unusable", path=runs, reason=reason(exc))) from None


def reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def read_own(path: Path) -> bytes:
    """The bytes of the regular file at `path`. A link is not followed (OSError ELOOP); a
    FIFO or device is not waited on (O_NONBLOCK) nor read (OSError EINVAL)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, t("state.not_a_regular_file"))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def read_regular(path: Path) -> bytes | None:
    """As read_own, but None for anything but a regular file that can be read."""
    try:
        return read_own(path)
    except OSError:
        return None


def is_planted(path: Path) -> bool:
    """Whether something other than a regular file sits at `path` (a link, a FIFO, a
    device, a directory): orderbot neither reads nor writes through it."""
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def clear_planted(path: Path) -> None:
    """Remove a link, FIFO or device planted where orderbot keeps a lock file of its own:
    opening the lock (O_TRUNC) through a link would empty the file it points to. The
    link itself goes, never its target."""
    if is_planted(path) and not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def open_private_append(path: Path):
    """`path` opened for appending, created 0600; OSError when it is a link (O_NOFOLLOW)
    or anything but a regular file (a FIFO would otherwise block the open)."""
    fd = os.open(
        path,
        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
        0o600,
    )
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.fchmod(fd, 0o600)  # one an older version left readable becomes private too
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


class LogFile(logging.FileHandler):
    """orderbot.log: opened without following a link, and dropped silently when it cannot
    be written (a full disk must not put `--- Logging error ---` on the screen of every
    retry). `broken` keeps why it was dropped, for `orderbot doctor`."""

    def __init__(self, path: Path) -> None:
        self.broken: str | None = None
        super().__init__(path, encoding="utf-8", delay=True)

    def _open(self):
        return open_private_append(Path(self.baseFilename))

    def emit(self, record: logging.LogRecord) -> None:
        if self.broken is not None:
            return
        if self.stream is None:
            # Opened at the first line (delay=True), outside logging's own error handling:
            # a log that became a link, or a directory that went, must drop lines, not crash.
            try:
                self.stream = self._open()
            except OSError:
                self.handleError(record)
                return
        super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        exc = sys.exc_info()[1]
        self.broken = reason(exc) if isinstance(exc, OSError) else type(exc).__name__
        stream, self.stream = self.stream, None
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def log_problem(path: Path) -> str | None:
    """Why orderbot.log cannot be written, or None when it can: what `doctor` reports, in
    one line, where a run drops its log lines silently. It writes one line, as a run
    would, so a full file system shows itself."""
    if os.path.islink(path):
        return t("state.log_is_a_link")
    try:
        with open_private_append(path) as handle:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} INFO orderbot doctor checked this log\n")
    except OSError as exc:
        return reason(exc)
    return None
