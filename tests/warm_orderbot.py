"""A warm `orderbot` for the docs test: one process imports orderbot once, then forks per command.

Starting Python and importing orderbot's libraries costs ~0.5 s of CPU per command, and the
docs hold dozens of commands. So the docs test starts this server once and puts a small
`orderbot` shim first on PATH. bash runs the shim as it would run the installed console
script; the shim hands the server its arguments, environment, working directory and its
standard input, output and error (the file descriptors themselves, over a Unix socket) and
exits with the code the server sends back. For each command the server forks a worker,
which takes those descriptors as its own 0, 1 and 2 and runs `orderbot.cli.main()`, then
ends the way the console script's process ends (exit code, atexit, uncaught traceback).
The worker is a real process writing to the real pipe or file, so what is printed, whether
stdout is a terminal, and the exit code are what the installed command gives; only the
imports were done before. tests/test_docs.py checks that against the real console script.

    python tests/warm_orderbot.py SOCKET    # serve; prints "ready" once listening

A terminal's commands come here too (tests/forked_terminal.py): the test opens a
pseudo-terminal and hands the server its other end, and the worker makes that its
controlling terminal in a session of its own, as pexpect's child does. The server has not
imported readline (pytest has), so the REPL's line editing is set up for that terminal
alone, as in a fresh process; the server reports the worker's pid, then its wait status.

Tests that need `orderbot` as a process of its own (a hang must be a failed test, not a stuck
suite; file modes; what a piped process prints) take `command()`: the shim of this process's
warm orderbot, started on first use and stopped when the session ends (tests/conftest.py).
With COLD_ORDERBOT=1 it is the installed console script instead. A shim that is killed (a
test's timeout) takes its command with it. Not for what only a fresh process shows: signals
sent to it, what it imports, interpreter flags, resource limits set before it starts.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import json
import os
import pkgutil
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import traceback

# The shim: stdlib only, started with -IS so it costs a few milliseconds.
SHIM = """#!{python} -IS
import json, os, socket, sys
with socket.socket(socket.AF_UNIX) as server:
    server.connect({socket!r})
    umask = os.umask(0o022)
    os.umask(umask)
    request = {{"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask}}
    socket.send_fds(server, [json.dumps(request).encode()], [0, 1, 2])
    code = server.recv(16)
sys.exit(int(code) if code else 70)
"""


def write_shim(directory: str, socket_path: str) -> str:
    path = os.path.join(directory, "orderbot")
    with open(path, "w", encoding="utf-8") as file:
        file.write(SHIM.format(python=sys.executable, socket=socket_path))
    os.chmod(path, 0o755)
    return path


def preload() -> None:
    """Import what a command would import; nothing runs, so no setting or language is read yet."""
    import orderbot

    for module in pkgutil.walk_packages(orderbot.__path__, "orderbot."):
        if module.name.endswith("__main__"):  # that one runs the CLI
            continue
        with contextlib.suppress(ImportError):  # an optional extra that is not installed
            importlib.import_module(module.name)
    with contextlib.suppress(ImportError):
        import openai  # noqa: F401  (the providers import it when they are used: ~1 s each time)


def serve(socket_path: str) -> None:
    preload()
    # What was imported stays for the server's life: out of the collector's sight, a worker's
    # collections and its exit do not write to (and so copy) every page it shares with the
    # server, which cost ~0.4 s a command (0.5 s against 0.1 s).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path)
    listener.listen(64)  # the approval race starts a score of commands at once
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters below reap themselves
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:  # a waiter: forks the worker, waits for it, reports its exit code
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            request = json.loads(message)
            on_a_terminal = "terminal" in request  # from terminal() below, else from the shim
            worker = os.fork()
            if worker == 0:
                connection.close()
                if on_a_terminal:
                    become_a_terminal_command(request, fds[0])
                os._exit(become_the_command(request, fds))
            for fd in fds:
                os.close(fd)
            if on_a_terminal:
                connection.sendall(f"{worker}\n".encode())
            ended = os.pidfd_open(worker)
            ready, _, _ = select.select([ended, connection], [], [])
            if ended not in ready:  # the shim or test is gone (a timeout killed it): so is its command
                os.kill(worker, signal.SIGKILL)
            _, status = os.waitpid(worker, 0)
            code = os.waitstatus_to_exitcode(status)
            reply = f"{status}\n" if on_a_terminal else str(code if code >= 0 else 128 - code)
            with contextlib.suppress(OSError):
                connection.sendall(reply.encode())
            os._exit(0)
        connection.close()


def become_the_command(request: dict, fds: list[int]) -> int:
    """Take over the shim's descriptors, directory and environment, run the CLI, and end as
    the console script's process ends; the exit code.

    sys.stdin, sys.stdout and sys.stderr stay the objects Python opened at start-up (on a
    pipe, with the same PYTHONIOENCODING as the commands get): after dup2 they read and write
    the shim's descriptors, exactly as the console script's own streams would.
    """
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    sys.argv = request["argv"]
    from orderbot import i18n
    from orderbot.cli import main

    i18n.set_language(None)  # chosen from this environment, as at start-up
    return ended(main)


def become_a_terminal_command(request: dict, tty: int) -> None:
    """Make `tty` the controlling terminal of a new session and descriptors 0, 1 and 2, then
    run the command as a new Python process on that terminal runs it; never returns."""
    os.setsid()
    fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
    for target in (0, 1, 2):
        os.dup2(tty, target)
    os.close(tty)
    become_orderbot_on_a_terminal(request["argv"], request["env"], request["cwd"], request["terminal"])


def become_orderbot_on_a_terminal(
    args: list[str], env: dict[str, str], cwd: str | None, dimensions: tuple[int, int]
) -> None:
    """`orderbot ARGS` on the terminal that is already descriptors 0, 1 and 2, as a new
    Python process starts there (its environment, directory, signal handlers, streams), in
    a fork of a process that imported it; ends the process as the console script's ends."""
    code = 1
    try:
        # The parent's objects are out of this child's collector's sight: collecting them
        # would write to (and so copy) every page the child shares with its parent.
        gc.freeze()
        rows, columns = dimensions
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        if cwd is not None:
            os.chdir(cwd)
        # What a new Python process starts with, not what the parent has set.
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


def ended(main) -> int:
    """What Python does when `main` ends the program, up to the point where tearing down the
    interpreter would only cost time (~0.06 s a command, every module of the server's freed):
    the exit code of SystemExit, a traceback and 1 for anything else (an uncaught Ctrl-C ends
    the process by SIGINT, as Python's own does), other threads joined, exit handlers run,
    the standard streams flushed (120 when that fails, as Python says). For os._exit; also
    how a forked terminal's orderbot ends (tests/forked_terminal.py)."""
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except KeyboardInterrupt:
        traceback.print_exc()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 128 + signal.SIGINT  # not reached
    except BaseException:
        traceback.print_exc()
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    return code & 0xFF


class _Server:
    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="ob-")  # short: a Unix socket path has at most ~100 bytes
        self.bin = os.path.join(self.folder, "bin")
        os.mkdir(self.bin)
        self.socket = socket_path = os.path.join(self.folder, "s")
        self.process = subprocess.Popen(
            [sys.executable, __file__, socket_path],
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            self.stop()
            raise RuntimeError("the warm orderbot did not start")
        self.shim = write_shim(self.bin, socket_path)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_server: _Server | None = None


def command() -> str:
    """What to run as `orderbot`: this process's warm one, or with COLD_ORDERBOT=1 the installed one."""
    if os.environ.get("COLD_ORDERBOT"):
        return shutil.which("orderbot", path=os.path.dirname(sys.executable)) or "orderbot"
    return _the_server().shim


def _the_server() -> _Server:
    """This process's warm orderbot, started on first use."""
    global _server
    if _server is None:
        _server = _Server()
    return _server


def terminal(args: list[str], env: dict[str, str], cwd: str | None, dimensions: tuple[int, int]):
    """`orderbot ARGS` forked by this process's warm orderbot on a new pseudo-terminal of
    `dimensions` (rows, columns): its pid, the terminal's side for the test, and the
    connection its wait status will come on (closing it kills the command)."""
    server = _the_server()
    ours, theirs = os.openpty()
    connection = socket.socket(socket.AF_UNIX)
    try:
        connection.connect(server.socket)
        request = {"argv": list(args), "cwd": cwd, "env": env, "terminal": list(dimensions)}
        socket.send_fds(connection, [json.dumps(request).encode()], [theirs])
        pid = int(read_line(connection))
    except BaseException:
        os.close(ours)
        connection.close()
        raise
    finally:
        os.close(theirs)  # the command's own copy is all that is left: its end closes the terminal
    return pid, ours, connection


def read_line(connection: socket.socket) -> str:
    """One line the server sent ("" when it closed the connection first). Read a byte at a
    time: the pid and the wait status of a command that ends at once (`--version`) can come
    in one segment, and a larger read would take the status into the pid's line."""
    line = b""
    while not line.endswith(b"\n"):
        chunk = connection.recv(1)
        if not chunk:
            break
        line += chunk
    return line.decode()


def stop() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None


if __name__ == "__main__":
    serve(sys.argv[1])
