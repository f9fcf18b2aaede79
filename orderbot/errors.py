"""The one exception family of orderbot.

    OrderbotError                 anything orderbot raises on purpose
    ├── ConfigError               bad settings or input files; exit 6 before a run
    │   ├── UsageError            a value typed on the command line it may not take; exit 2,
    │   │                         as for Typer's own
    │   ├── OrdersFileError       orders.json missing, not JSON, wrong shape, bad field
    │   └── LoginRefused          a database server refused the user name or password
    ├── RecordError               a run record that is corrupt, foreign or may not be resumed; exit 6
    │   ├── RunFinished           answered or handed over: nothing to resume; exit 1
    │   └── OperatorRefused       not this operator, not now: four eyes, not an approver, settled
    │                             first by someone else, busy in another shell; exit 9
    ├── ModelError                the model service failed for good; the run stops as model_error
    │   ├── ModelTimeout          the request outlived the run's deadline; the run stops as time_limit
    │   └── ModelResponseError    the service answered with something that is not a valid turn
    │       ├── EmptyReply        ...with nothing at all (retried once)
    │       └── IncompleteReply   ...a stream that ended before its end marker (retried)
    ├── ToolError                 an expected business failure inside a tool; its message is the
    │                             model's own English (orderbot.loop.model_text), safe to show it,
    │                             and comes back as {"ok": false, ...}
    └── LimitExceeded             a limit check failed (orderbot.loop.budget): the engine turns it
                                  into the run's stop; it never leaves the engine

Each class carries its exit code (`exit_code`, an ExitCode), as Click's exceptions do: the
command line turns any of them into that code at one place (orderbot.commands.common).

Apart from the family, one control signal: `Terminated`, a KeyboardInterrupt raised for
SIGTERM, so that whatever stops a run on Ctrl-C stops it the same way, and the stop can still
say that a signal ended it, not the person at the keyboard.

Provider exceptions (openai, httpx) are translated into ModelError at the adapter boundary,
so nothing from an SDK ever reaches the engine or the command line.

An error says what went wrong as a `Phrase`, a message id of the UI's catalogue and its
parameters, never as words: `raise RecordError("runs.no_such_run", run_id=..., where=...)`.
Only the one who shows it to a person turns it into a sentence, in that person's language
(`orderbot.i18n.say`), so nothing below the screen imports the catalogue.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum


class ExitCode(IntEnum):
    """Every exit code orderbot ends with, defined once (README.md's table lists them).

    One rule: a bad flag, a missing argument or an empty question is a usage error (2); a bad
    value from the environment, .env or a file is a configuration error (6); a refusal for
    who asks, or because someone else got there first, is 9. tests/test_docs.py walks the
    README's table against this enum."""

    OK = 0
    DIFFERS = 1  # `replay` found a step that differs; `orders show` found no such order; any other failure
    USAGE = 2  # what Click uses for a bad flag; orderbot's own flag checks use it too
    LIMIT = 3  # a step, time, tool-call or response limit stopped the run
    AWAITING_APPROVAL = 4
    MODEL_ERROR = 5
    CONFIG = 6
    STRICT_CLAIMS = 7  # --strict-claims: the answer made a claim the tools did not support
    TRANSFERRED = 8  # handed to a person
    REFUSED = 9  # not this operator (four eyes, not an approver) or not now (settled first, busy)
    CANCELLED = 130  # Ctrl-C: 128 + SIGINT
    PIPE_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for a program whose reader went away
    TERMINATED = 143  # 128 + SIGTERM


@dataclass(frozen=True, slots=True)
class Phrase:
    """A sentence not yet said: a message id of the UI's catalogue (orderbot/i18n) and its
    parameters, any of which may be a phrase itself. Code below the screen keeps and passes
    these; the reader's language is chosen where it is shown (`orderbot.i18n.say`).

    `otherwise` is another library's own English for the same thing (pydantic's message for
    an error the phrase rebuilds from its parts): an English reader gets it as it is, and so
    does any reader where the catalogue has no such id. Without it, an id the catalogue
    lacks is shown as it is.

    `as_json()` is how records and `--json` keep one (its id and values), `from_json()` reads
    it back; `as_text()` and `from_text()` do the same where a text field holds it (what an
    approval shows, kept in the record and the team's queue as text)."""

    id: str
    params: Mapping[str, object] = field(default_factory=dict)
    otherwise: str | None = None

    def __str__(self) -> str:
        """For a log line or a traceback, never for a person: the id and its values."""
        if not self.params:
            return self.id
        return f"{self.id}({', '.join(f'{name}={value!r}' for name, value in self.params.items())})"

    def as_json(self) -> dict:
        out: dict = {"id": self.id, "params": {name: _to_json(value) for name, value in self.params.items()}}
        if self.otherwise is not None:
            out["otherwise"] = self.otherwise
        return out

    def as_text(self) -> str:
        return json.dumps(self.as_json(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_text(cls, text: str) -> Phrase | None:
        """The phrase `as_text` wrote; None for any other text (a sentence an older orderbot kept)."""
        if not text.startswith('{"id":'):
            return None
        try:
            return cls.from_json(json.loads(text))
        except ValueError:
            return None

    @classmethod
    def from_json(cls, doc: object) -> Phrase | None:
        """A phrase as `as_json` wrote it; None for anything else (a record from elsewhere)."""
        if not (isinstance(doc, dict) and isinstance(doc.get("id"), str) and isinstance(doc.get("params"), dict)):
            return None
        otherwise = doc.get("otherwise")
        params = {name: _from_json(value) for name, value in doc["params"].items()}
        return cls(doc["id"], params, otherwise if isinstance(otherwise, str) else None)


_PLAIN = (str, int, float, bool, type(None))  # JSON values as they are: most values of a phrase


def _to_json(value: object) -> object:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Phrase):
        return value.as_json()
    if isinstance(value, OrderbotError):
        return value.phrase.as_json()
    if isinstance(value, list | tuple):  # a list of phrases: said one by one, joined
        return [_to_json(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)  # another library's error, a path: kept as the words it says


def _from_json(value: object) -> object:
    if isinstance(value, dict):
        return Phrase.from_json(value) or value
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    return value


class Terminated(KeyboardInterrupt):  # noqa: N818 - a signal, named for what happened, as KeyboardInterrupt
    """SIGTERM arrived (`kill`, a service manager, a closing terminal): stop as for Ctrl-C."""


class OrderbotError(Exception):
    """Base of every error orderbot raises on purpose: what went wrong as a `Phrase` (a message
    id and its parameters; a phrase may also be passed whole)."""

    exit_code: ExitCode = ExitCode.DIFFERS

    def __init__(self, message: str | Phrase = "", /, **params: object) -> None:
        self.phrase = message if isinstance(message, Phrase) else Phrase(message, params)
        super().__init__(self.phrase)  # str() of it only when a log or a traceback asks


class ConfigError(OrderbotError):
    """Settings or input files are unusable; nothing has run yet."""

    exit_code = ExitCode.CONFIG


class UsageError(ConfigError):
    """A flag or argument on the command line has a value it may not take (exit 2, the
    code Typer uses for the usage errors it finds itself): wherever the check is made, a
    value that was typed is a usage error, and the same value from the environment or
    .env a configuration error."""

    exit_code = ExitCode.USAGE


class OrdersFileError(ConfigError):
    """The orders file cannot be read or does not hold valid orders."""


class LoginRefused(ConfigError):
    """A database server refused the user name or password of the orders' URL (a resume
    that used the record's URL then says to give this operator's own)."""


class RecordError(OrderbotError):
    """A run record is corrupt, foreign, or fails a re-check before resuming."""

    exit_code = ExitCode.CONFIG


class RunFinished(RecordError):
    """The run has finished (answered, handed to a person): there is nothing to resume. The
    record is sound and nothing was configured wrong, so not exit 6: the command could not do
    what it was asked, exit 1."""

    exit_code = ExitCode.DIFFERS


class OperatorRefused(RecordError):
    """The run may be settled, but not by this operator or not now: four eyes (the operator
    whose run asked may not approve it), the store's approvers leave this operator out,
    another operator settled it first, or another shell holds it. Nothing was changed;
    another person, or the same one later, can still act."""

    exit_code = ExitCode.REFUSED


class ModelError(OrderbotError):
    """The model service failed for good (auth, bad request, retries spent)."""


class ModelTimeout(ModelError):
    """The model did not answer before the run's deadline.

    `cause` is the last failure that was being retried when time ran out (e.g. a rate
    limit), already free of secrets, so the person learns why and not only that.
    """

    def __init__(self, message: str | Phrase, /, cause: str | None = None, **params: object) -> None:
        super().__init__(message, **params)
        self.cause = cause


class ModelResponseError(ModelError):
    """The model service answered, but not with a usable turn."""


class EmptyReply(ModelResponseError):
    """The service answered HTTP 200 with no text and no tool call: worth one more try."""


class IncompleteReply(ModelResponseError):
    """A stream ended before the event that says the response is whole (`finish_reason`,
    `[DONE]`, `response.completed`): what arrived is a fragment, never an answer."""


class ToolError(OrderbotError):
    """An expected failure inside a tool, e.g. an unknown order or no access.

    `code` is a short machine-readable word; the message is what the model reads
    (orderbot.loop.model_text's fixed English, not a phrase of the catalogue), shown to it as
    is, so it must never contain paths, keys, addresses or other customers' data.
    """

    def __init__(self, message: str | Phrase, /, code: str = "tool_error", **params: object) -> None:
        super().__init__(message, **params)
        self.code = code
