"""Where log lines go: never the terminal. cli.main holds them from the start
(`hold_lines`); a command that knows its state directory sends them to its log file
(`setup_logging`). Nothing happens when this module is imported: logging is configured by
the command line that runs, never by an import (a library or a test importing orderbot
keeps its own logging)."""

from __future__ import annotations

import collections
import logging
from pathlib import Path

from orderbot.errors import OrderbotError, Phrase, RecordError
from orderbot.i18n import say
from orderbot.runs import statedir


class _HeldLines(logging.Handler):
    """Where every log line goes until a command sets up its log file (setup_logging): kept,
    the last LIMIT of them, and written there once it is known (a .env line python-dotenv
    could not parse is logged while the settings that name the state directory load). With
    no handler at all Python would print a line on stderr as it is, and log lines quote
    outside data (a store's rows, a server's error text). Lines no log file ever takes
    (`runs`, say, sets none up) go nowhere."""

    LIMIT = 100

    def __init__(self) -> None:
        super().__init__()
        self.lines: collections.deque[logging.LogRecord] = collections.deque(maxlen=self.LIMIT)
        self.orderbot_log = None  # replaced by the log file, as an older log file is

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record)


_held = _HeldLines()


class EnglishFormatter(logging.Formatter):
    """Log lines in English whatever the UI language: a Phrase (or one of orderbot's errors)
    among a line's values is said in English, as a person reading the log reads it, not as
    its id and values."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, tuple) and any(_speaks(arg) for arg in record.args):
            record = logging.makeLogRecord(record.__dict__)
            record.args = tuple(say(arg, "en") if _speaks(arg) else arg for arg in record.args)
        return super().format(record)


def _speaks(value: object) -> bool:
    return isinstance(value, Phrase | OrderbotError)


def hold_lines() -> None:
    """Hold every log line until a command names its log file: on the root logger, so that
    orderbot's own lines reach it until setup_logging, every library's always; and Python's
    warnings too (a library's warning can quote a value it was given), which would
    otherwise be printed on stderr as they are. Once a log file is set up (an in-process
    caller runs many commands), its handler stays."""
    root = logging.getLogger()
    if not any(hasattr(handler, "orderbot_log") for handler in root.handlers):
        root.addHandler(_held)
    logging.captureWarnings(True)


def setup_logging(state_dir: Path) -> None:
    """Tool failures and other internals go to a log file, never to the terminal; so do the
    log lines of every library underneath (the root logger's), which quote outside text
    too: psycopg logs a database's error message, httpx and openai a server's."""

    path = (state_dir / statedir.LOG_FILE).absolute()
    loggers = (logging.getLogger("orderbot"), logging.getLogger())
    loggers[0].propagate = False
    # Only our own handlers count (pytest, say, may add its own); one for another state
    # directory is replaced, so each run logs where its records are.
    if all(any(getattr(h, "orderbot_log", None) == path for h in logger.handlers) for logger in loggers):
        return
    try:
        statedir.make(state_dir)
        # Created private, like the runs folder: the log names base URLs and orders files. A
        # link or a FIFO in its place is not written (orderbot.runs.statedir), nor a full disk.
        statedir.open_private_append(path).close()
        handler: logging.Handler = statedir.LogFile(path)
        handler.setFormatter(EnglishFormatter("%(asctime)s %(levelname)s %(message)s"))
    except (OSError, RecordError):  # the run's record says why in one sentence; doctor, about the log
        handler = logging.NullHandler()
    handler.orderbot_log = path  # type: ignore[attr-defined]
    for logger in loggers:
        for old in [h for h in logger.handlers if hasattr(h, "orderbot_log")]:
            logger.removeHandler(old)
            if old is not _held:
                old.close()
        logger.addHandler(handler)
    while _held.lines:
        handler.handle(_held.lines.popleft())
