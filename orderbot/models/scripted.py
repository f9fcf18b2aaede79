"""A model that plays back a script: for tests, benchmarks and `orderbot replay`.

Each entry is a Turn, an exception to raise, or a function of the request that returns a
Turn (to advance a fake clock, or to look at what was sent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from itertools import count

from orderbot.errors import ModelResponseError
from orderbot.loop.items import FunctionCall, assistant
from orderbot.loop.model import ModelRequest, Turn, Usage

Step = Turn | BaseException | Callable[[ModelRequest], Turn]

_ids = count(1)


def call(name: str, arguments: dict | str | None = None, call_id: str | None = None) -> FunctionCall:
    """A function call item; `arguments` may be a dict or raw (possibly broken) JSON text."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)
    return FunctionCall(call_id=call_id or f"call_{next(_ids)}", name=name, arguments=raw)


def calls(*items: FunctionCall, usage: Usage | None = None) -> Turn:
    return Turn(tuple(items), usage)


def text(content: str, usage: Usage | None = None) -> Turn:
    return Turn((assistant(content),), usage)


class ScriptedModel:
    provider = "scripted"

    def __init__(self, steps: Iterable[Step], name: str = "scripted") -> None:
        self.name = name
        self._steps = list(steps)
        self.requests: list[ModelRequest] = []

    def respond(self, request: ModelRequest) -> Turn:
        self.requests.append(request)
        if not self._steps:
            raise ModelResponseError("model.script_ended")
        step = self._steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step(request)
        return step

    def assert_complete(self) -> None:
        assert not self._steps, f"{len(self._steps)} scripted turns were never requested"
