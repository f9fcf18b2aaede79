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
The REPL's terminal tests take orderbot_process_in_a_terminal(): the warm orderbot
(tests/warm_orderbot.py), a process of its own that has not imported readline, forks the
command onto a terminal this process opened, in a session of its own with that terminal as
its controlling terminal, as above. Tests about signals sent to a process from outside it,
about what a process imports, and the crash tests start real processes.
tests/ui/test_forked_terminal.py checks that both forks print what the installed command
prints in a terminal.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys

import pexpect
import ptyprocess
import warm_orderbot
from warm_orderbot import become_orderbot_on_a_terminal


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
    """The same, forked by the warm orderbot (tests/warm_orderbot.py), which has not imported
    readline: for the REPL (see above). With COLD_ORDERBOT=1, a new `python -m orderbot`."""
    if os.environ.get("COLD_ORDERBOT"):
        return orderbot_started_in_a_terminal(args, env=env, dimensions=dimensions, timeout=timeout)
    return _Warm(sys.executable, list(args), env=env, encoding="utf-8", dimensions=dimensions, timeout=timeout)


def orderbot_started_in_a_terminal(
    args: list[str], *, env: dict[str, str], dimensions: tuple[int, int] = (24, 80), timeout: float = 30
) -> pexpect.spawn:
    """The same, as a new process (`python -m orderbot ARGS`), which the others are checked against."""
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


def _arguments(args: list) -> list[str]:
    """orderbot's arguments from what pexpect hands _spawnpty: the program first, then bytes."""
    return [a.decode() if isinstance(a, bytes) else a for a in args[1:]]


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
            become_orderbot_on_a_terminal(_arguments(args), env, cwd, dimensions)
        return ptyprocess.PtyProcess(pid, fd)


class _Warm(_Spawned):
    """The warm orderbot's command on a terminal this process opened."""

    def _spawnpty(self, args, *, env, cwd, dimensions=(24, 80), **_):
        pid, fd, connection = warm_orderbot.terminal(_arguments(args), env, cwd, dimensions)
        return _WarmPty(pid, fd, connection)


class _WarmPty(ptyprocess.PtyProcess):
    """Not this process's child: how it ended is the wait status the warm orderbot reports,
    read where ptyprocess would call waitpid (blocking once the terminal is closed, as there)."""

    def __init__(self, pid: int, fd: int, connection) -> None:
        super().__init__(pid, fd)
        self._connection = connection

    def isalive(self) -> bool:
        if self.terminated:
            return False
        if not self.flag_eof and not select.select([self._connection], [], [], 0)[0]:
            return True
        self._ended(warm_orderbot.read_line(self._connection))
        return False

    def wait(self) -> int | None:
        if not self.terminated:
            self._ended(warm_orderbot.read_line(self._connection))
        return self.exitstatus

    def close(self, force: bool = True) -> None:
        try:
            super().close(force)
        finally:
            self._connection.close()  # the server kills a command still running

    def _ended(self, reply: str) -> None:
        if not reply:
            raise ptyprocess.PtyProcessError("the warm orderbot went away before its command ended")
        self.status = int(reply)
        self.exitstatus = os.WEXITSTATUS(self.status) if os.WIFEXITED(self.status) else None
        self.signalstatus = os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else None
        self.terminated = True
