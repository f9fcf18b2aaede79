"""Reading from the person at the terminal: lines with editing and history, single keys,
and what becomes of keys typed while a run is going.

Line editing and history come from the stdlib `readline` module where it exists; without
it (or without a terminal) plain `input()` still works.

Keys typed while a run is going are discarded (`keys_held`): the terminal does not echo
them onto the waiting line or the streamed answer, and what was typed is flushed when the
run ends (TCSAFLUSH), so it never becomes the next question. Every question orderbot asks
(the next line, the approval prompt, the offer to continue) takes only what is typed after
it is shown: a key pressed before the person could read the question must not answer it
(a `y` typed ahead must not approve a side effect, nor a `c` spend a larger budget).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
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


def read_key(show: Callable[[], None]) -> str:
    """One keypress without Enter in a terminal, in answer to the question `show` prints;
    Ctrl-C or end of input count as no. What was typed before the question is discarded
    first, then the question shown: a key pressed after it is never lost."""
    try:
        import termios
        import tty
    except ImportError:  # no POSIX terminal control (Windows): a line instead of a key
        show()
        try:
            return input()[:1]
        except (EOFError, KeyboardInterrupt):
            return ""

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSAFLUSH)  # discards what was typed ahead
        show()
        return os.read(fd, 8).decode("utf-8", "replace")[:1]
    except (KeyboardInterrupt, OSError):
        return ""
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


# The terminal while keys are held: its descriptor, its settings before, and without echo.
_held: tuple[int, list, list] | None = None


@contextmanager
def keys_held(*, enabled: bool = True) -> Iterator[None]:
    """While a run is going: keys typed are not echoed, and when it ends, however it ends
    (an answer, an error, Ctrl-C, SIGTERM), the terminal is as it was and what was typed
    meanwhile is discarded. Ctrl-C still interrupts: signals are left on."""
    global _held
    termios = _termios()
    fd = sys.stdin.fileno() if enabled and termios is not None and sys.stdin.isatty() else None
    if fd is None or _held is not None:
        yield
        return
    saved = termios.tcgetattr(fd)
    quiet = [*saved[:3], saved[3] & ~(termios.ECHO | termios.ECHONL), *saved[4:]]
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    _held = (fd, saved, quiet)
    try:
        yield
    finally:
        _held = None
        with suppress(OSError, termios.error):  # a terminal that went away has nothing to restore
            termios.tcsetattr(fd, termios.TCSAFLUSH, saved)


@contextmanager
def answering() -> Iterator[None]:
    """A question asked in a terminal (the approval prompt): echo on while it is answered,
    and what was typed before it was shown discarded, so only a key pressed after it counts.
    Keys held for a run are held again afterwards."""
    termios = _termios()
    if termios is None or not sys.stdin.isatty():
        yield
        return
    fd = sys.stdin.fileno()
    if _held is None:
        termios.tcflush(fd, termios.TCIFLUSH)
        yield
        return
    _, saved, quiet = _held
    termios.tcsetattr(fd, termios.TCSAFLUSH, saved)
    try:
        yield
    finally:
        with suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, quiet)


def _termios():
    try:
        import termios
    except ImportError:  # no POSIX terminal control (Windows): keys are echoed as they are
        return None
    return termios


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
