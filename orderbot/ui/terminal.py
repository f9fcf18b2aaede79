"""Reading from the person at the terminal: lines with editing and history, single keys.

Line editing and history come from the stdlib `readline` module where it exists; without
it (or without a terminal) plain `input()` still works.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from orderbot.errors import ExitCode
from orderbot.runs.statedir import is_planted

HISTORY_LINES = 1000


def read_line(prompt: str, *, interactive: bool = True) -> str | None:
    """The next line, stripped; None to leave (Ctrl-D, or Ctrl-C with nothing typed).
    Piped input is echoed after the prompt, so the output reads like a session."""
    try:
        line = input(prompt) if interactive else input()
    except EOFError:
        if interactive:
            print()  # end the prompt's line
        return None
    except KeyboardInterrupt:
        print()
        return "" if _typed() else None
    if not interactive:
        print(prompt + line, flush=True)
    elif line.strip() and not line.startswith(" "):
        _remember(line)
    return line.strip()


def read_key() -> str:
    """One keypress without Enter in a terminal; Ctrl-C or end of input count as no."""
    try:
        import termios
        import tty
    except ImportError:  # no POSIX terminal control (Windows): a line instead of a key
        try:
            return input()[:1]
        except (EOFError, KeyboardInterrupt):
            return ""

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        return os.read(fd, 8).decode("utf-8", "replace")[:1]
    except (KeyboardInterrupt, OSError):
        return ""
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@contextmanager
def line_history(path: Path, *, enabled: bool) -> Iterator[None]:
    """Line editing and a bounded history file, through the stdlib readline module."""
    # In the state directory nothing planted is followed: a link, FIFO or device where the
    # history should be means no history (reading a FIFO would hang the REPL).
    readline = _readline() if enabled and not is_planted(path) else None
    if readline is not None:
        readline.set_auto_history(False)  # approval answers are not worth recalling
        readline.set_history_length(HISTORY_LINES)
        with suppress(OSError):
            readline.read_history_file(path)
    try:
        yield
    finally:
        if readline is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if not is_planted(path):  # planted while the REPL ran: still not written through
                    readline.write_history_file(path)
                    path.chmod(0o600)  # questions may name orders and people
            except OSError:
                pass


def _readline():
    try:
        import readline
    except ImportError:  # e.g. Windows without pyreadline: plain input() still works
        return None
    return readline


def _typed() -> bool:
    readline = sys.modules.get("readline")
    return bool(readline and readline.get_line_buffer().strip())


def _remember(line: str) -> None:
    readline = sys.modules.get("readline")
    if readline is not None:
        readline.add_history(line)


class WholeWrites:
    """Standard output that notices a reader that went away, however much is written at once.

    A write of more than a pipe holds returns short when the reader leaves midway, and
    CPython's buffered writer then reports the short count instead of the error, which a
    text stream drops: the rest of the output vanishes and the process exits 0 (`orderbot
    runs --limit 10000 | head -1`). Written in pieces, the piece after that raises
    BrokenPipeError, and the command ends quietly with 141 as for any other write."""

    PIECE = 1 << 15  # characters

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        stream = self._stream
        if len(text) <= self.PIECE:
            return stream.write(text)
        for start in range(0, len(text), self.PIECE):
            stream.write(text[start : start + self.PIECE])
            stream.flush()
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def end_quietly_on_closed_pipe() -> None:
    """The reader of our output went away (`orderbot ask ... | head -1`): no traceback, no
    BrokenPipeError message at exit, exit code 141 (not 1, which `replay` uses for "differs")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # later writes, and the flush at exit, go nowhere
    raise SystemExit(ExitCode.PIPE_CLOSED)
