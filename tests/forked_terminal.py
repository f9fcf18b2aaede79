"""`orderbot` in a pseudo-terminal, forked from the test process instead of started afresh.

A new `orderbot` process spends ~0.4 s of CPU importing its libraries before it does
anything (over 1 s with the openai SDK), and the terminal tests start dozens. Here the child
is a fork of the test process, which has imported them already. Everything else is what
pexpect's own child gets: pty.fork() makes it a session leader with the pseudo-terminal as
its controlling terminal and as descriptors 0, 1 and 2 (so Ctrl-C, Ctrl-D, the window size
and line editing behave the same), then the child takes the environment, directory and
arguments it was given and runs `orderbot.cli.main()` with fresh standard streams, default
signal handlers and no exit handlers of the test process; it ends as the console script's
process ends (exit code, exit handlers, an uncaught exception's traceback). The test talks
to it through the same pexpect object as before.

Not for the REPL: its line editing is readline, which pytest imports at start-up, so a
fork's readline is set up for the test process's terminal, not for the one the test gives.
The REPL tests, the tests about signals sent to a process or about what a process imports,
and the crash tests start real processes. tests/ui/test_forked_terminal.py checks that a
forked `ask` prints what the installed command prints in a terminal.
"""

from __future__ import annotations

import atexit
import fcntl
import gc
import os
import pty
import signal
import struct
import sys
import termios
import time

import pexpect
import ptyprocess
from warm_orderbot import ended


def orderbot_in_a_terminal(
    args: list[str],
    *,
    env: dict[str, str],
    dimensions: tuple[int, int] = (24, 80),
    timeout: float = 30,
    cwd: str | None = None,
) -> pexpect.spawn:
    """`orderbot ARGS` running in a new pseudo-terminal of `dimensions` (rows, columns)."""
    return _Forked(sys.executable, list(args), env=env, dimensions=dimensions, timeout=timeout, cwd=cwd,
                   encoding="utf-8")  # fmt: skip


def orderbot_process_in_a_terminal(
    args: list[str], *, env: dict[str, str], dimensions: tuple[int, int] = (24, 80), timeout: float = 30
) -> pexpect.spawn:
    """The same, as a new process (`python -m orderbot ARGS`): for the REPL (see above)."""
    return _Spawned(sys.executable, ["-m", "orderbot", *args], env=env, encoding="utf-8", dimensions=dimensions,
                    timeout=timeout)  # fmt: skip


class _Spawned(pexpect.spawn):
    """pexpect's child, without its sleeps where nothing is waited for: `close()` after the
    end of the output waits for the process to end instead of sleeping 0.1 s and hoping it
    has (a few hundred closes add up to tens of seconds). It starts with Ctrl-C and Ctrl-\\
    at their defaults, as a terminal's shell starts a command in the foreground, whatever
    the test process inherited: a suite started in the background of a script ignores
    SIGINT, and Python keeps that ignored (Ctrl-C would do nothing)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, preexec_fn=_as_in_the_foreground, **kwargs)

    def close(self, force: bool = True) -> None:
        if self.flag_eof and not self.closed:
            self.ptyproc.wait()  # the terminal is closed on its side: the process is ending
            self.ptyproc.delayafterclose = 0
        super().close(force)


def _as_in_the_foreground() -> None:
    for name in ("SIGINT", "SIGQUIT"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


class _Forked(_Spawned):
    """Its input is read whole lines at a time (no REPL: see above), so a line typed before the
    child reads it waits in the terminal as a person's would: no need to wait 0.05 s before each
    send as pexpect does by default."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.delaybeforesend = None

    def _spawnpty(self, args, *, env, cwd, dimensions=(24, 80), **_):
        pid, fd = pty.fork()
        if pid == 0:
            _become_orderbot([a.decode() if isinstance(a, bytes) else a for a in args[1:]], env, cwd, dimensions)
        return ptyprocess.PtyProcess(pid, fd)


def _become_orderbot(args: list[str], env: dict[str, str], cwd: str | None, dimensions: tuple[int, int]) -> None:
    code = 1
    try:
        # The test process's objects are out of this child's collector's sight: collecting them
        # would write to (and so copy) every page the child shares with its parent.
        gc.freeze()
        rows, columns = dimensions
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        if cwd is not None:
            os.chdir(cwd)
        # What a new Python process starts with, not what the test process has set.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH", "SIGCHLD", "SIGALRM", "SIGUSR1", "SIGUSR2"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        atexit._clear()
        # Python's own streams on a terminal: UTF-8 here (the tests' terminals are), line
        # buffered, stderr with backslashreplace.
        sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1,  # noqa: SIM115
                                           closefd=False)  # fmt: skip
        sys.argv = ["orderbot", *args]
        from orderbot import i18n
        from orderbot.cli import main

        i18n.set_language(None)  # chosen afresh from this environment, as at start-up
        code = ended(main)
    finally:
        os._exit(code)
