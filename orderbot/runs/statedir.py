"""The state directory is orderbot's: made private, checked before it is used, and nothing
planted in it is followed or waited on.

    <state dir>/          0700 when orderbot makes it (parents it makes too)
      runs.db             0600: the run store, a SQLite database (orderbot.runs.sqlite): runs,
                          the approval queue and the audit log; with -wal and -shm beside it
                          while it is open. A link, FIFO or folder in its place (or theirs)
                          is refused in one sentence, never opened
      record.key          0600: the key of the records' integrity tags (orderbot.runs.tagged);
                          read only as a regular file
      json-runs.old/      what an earlier orderbot kept here (runs/, runs.index, audit.log),
                          moved aside once it was taken over (orderbot.runs.takeover)
      orderbot.log        0600, appended to; a link or anything but a regular file is not
                          written; when the file system is full, lines are dropped silently
                          (`orderbot doctor` says so)
      repl_history        the REPL's lines: read only while a regular file, and replaced
                          (never followed) when written

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

from orderbot.errors import Phrase, RecordError

PRIVATE = 0o700
LOG_FILE = "orderbot.log"


def make(state_dir: Path) -> None:
    """The state directory, created private when missing (the parents it makes too);
    RecordError when it is there but is not a directory."""
    refuse_unusable(state_dir)
    try:
        for missing in reversed([state_dir, *state_dir.parents]):  # the parents it makes are private too (XDG)
            if not missing.exists():
                missing.mkdir(mode=PRIVATE, exist_ok=True)
    except OSError as exc:
        refuse_unusable(state_dir)  # made meanwhile as something else: say that
        raise RecordError("state.cannot_create", path=state_dir, reason=reason(exc)) from None


DATABASE = "runs.db"  # the run store (orderbot.runs.sqlite)
OLD_FILES = ("runs", "runs.index", "audit.log", "audit.log.lock")  # what an earlier orderbot kept
# What SQLite keeps beside a database while it is open, and what it would open there.
COMPANIONS = ("-wal", "-shm", "-journal")


def holds_old_files(state_dir: Path) -> bool:
    """Whether an earlier orderbot's files are here, to be taken over (orderbot.runs.takeover)."""
    return any(os.path.lexists(state_dir / name) for name in OLD_FILES)


def refuse_unusable(state_dir: Path) -> None:
    """RecordError when the state directory exists and is not a directory (a missing one
    is fine: nothing is recorded yet), or when anything but a regular file sits where the
    run store's database or its journal goes. The state directory may be a link to a
    directory (a dotfiles checkout); what orderbot keeps inside it may not be a link at all."""
    try:
        if not stat.S_ISDIR(os.stat(state_dir).st_mode):
            raise RecordError("state.not_a_directory", path=state_dir)
    except FileNotFoundError:
        return
    except NotADirectoryError:  # a parent is a file
        raise RecordError("state.not_a_directory", path=state_dir) from None
    except OSError as exc:
        raise RecordError("state.unusable", path=state_dir, reason=reason(exc)) from None
    for name in (DATABASE, *(DATABASE + suffix for suffix in COMPANIONS)):
        if is_planted(state_dir / name):
            raise RecordError("state.planted", path=state_dir / name)


NOT_REGULAR = "not a regular file"  # why read_own refuses a FIFO, a device or a folder


def reason(exc: OSError) -> str | Phrase:
    """Why an operation on a file failed, in the system's words (strerror)."""
    if exc.strerror == NOT_REGULAR:
        return Phrase("state.not_a_regular_file")
    return exc.strerror or type(exc).__name__


def read_own(path: Path) -> bytes:
    """The bytes of the regular file at `path`. A link is not followed (OSError ELOOP); a
    FIFO or device is not waited on (O_NONBLOCK) nor read (OSError EINVAL)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def is_planted(path: Path) -> bool:
    """Whether something other than a regular file sits at `path` (a link, a FIFO, a
    device, a directory): orderbot neither reads nor writes through it."""
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


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
            raise OSError(errno.EINVAL, NOT_REGULAR)
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


def log_problem(path: Path) -> Phrase | str | None:
    """Why orderbot.log cannot be written, or None when it can: what `doctor` reports, in
    one line, where a run drops its log lines silently. It writes one line, as a run
    would, so a full file system shows itself."""
    if os.path.islink(path):
        return Phrase("state.log_is_a_link")
    try:
        with open_private_append(path) as handle:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} INFO orderbot doctor checked this log\n")
    except OSError as exc:
        return reason(exc)
    return None
