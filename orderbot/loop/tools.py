"""Tools: one declaration gives both the spec the model sees and the entry dispatch allows.

A tool has two halves that must not drift apart: what the model is told (its spec) and what
the program will actually run (its dispatch entry, orderbot.loop.dispatch). Here both come
from one `Tool`, whose version is a hash of its spec. A tool that asks the model for an
identity is refused when it is declared (orderbot.loop.identity).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel

from orderbot.errors import Phrase
from orderbot.loop import identity


class ToolContext(NamedTuple):
    """What a tool may know about the session: who is asking and under which run. A named
    tuple, as the engine's other values made for every call (orderbot.loop.model)."""

    user: str | None
    run_id: str
    # Set by dispatch for the call being checked or run: lets a side effect recognise a
    # repeat of the call it already carried out (at most once per approved call).
    call_id: str | None = None
    # Seconds left of the run, so a store can bound a database statement by it.
    time_left: Callable[[], float] | None = None
    # The step the call was proposed at: with the call id, what names one call of the run
    # (servers that number their calls call_0, call_1, ... in every turn reuse ids).
    step: int | None = None

    def for_call(self, call_id: str) -> ToolContext:
        return ToolContext(
            user=self.user, run_id=self.run_id, call_id=call_id, time_left=self.time_left, step=self.step
        )


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Any, ToolContext], Any]
    side_effect: bool = False
    needs_user: bool = False
    # Runs before execution (and before asking for approval): permissions and preconditions.
    check: Callable[[Any, ToolContext], None] | None = None
    # One sentence saying exactly what a side-effecting call will do, for the approval prompt:
    # a Phrase (orderbot.errors), said in the language of whoever is asked.
    describe: Callable[[Any, ToolContext], Phrase | str] | None = None
    # A sign-in lookup: the arguments that are the customer's credentials (an e-mail address,
    # a name and zip code), which the identity check lets it take. Its `run` returns
    # SignedIn, and the customer found becomes the run's customer (see Toolbox.run).
    sign_in_with: tuple[str, ...] = ()
    # A successful call ends the run, handed to a person: its `run` returns HandedOff.
    hands_off: bool = False
    spec: dict = field(init=False, repr=False)
    version: str = field(init=False)

    def __post_init__(self) -> None:
        spec, version = _declared(
            self.name,
            self.description,
            self.args,
            self.sign_in_with,
            self.side_effect or self.needs_user or self.hands_off,
        )
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "version", version)


@functools.cache
def _declared(
    name: str, description: str, args: type[BaseModel], sign_in_with: tuple[str, ...], does_more: bool
) -> tuple[dict, str]:
    """A declaration checked (orderbot.loop.identity) and its spec and version, made once per
    process: a shop declares its tools anew for every session it opens (they close over its
    store), and the JSON schema, the checks and the hash cost more than a short run's loop.
    A refused declaration raises, and is not kept. The spec is shared: read, never changed."""
    schema = _json_schema(args)
    identity.check_arguments(name, args, schema, sign_in_with)
    identity.check_sign_in(name, args, sign_in_with, does_more=does_more)
    spec = {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": strict_schema(schema),
        "strict": True,
    }
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return spec, digest[:12]


@functools.cache
def _json_schema(args: type[BaseModel]) -> dict:
    """An arguments model's JSON schema, once per process (~1 ms each; two tools may share a
    model). Shared: read, never changed."""
    return args.model_json_schema()


class SignedIn(NamedTuple):
    """What a sign-in tool returns: the customer its credentials name, who becomes the run's
    customer, and the data the model sees."""

    customer: str
    data: Any


class HandedOff(NamedTuple):
    """What a hand-off tool returns: the run ends here, handed to a person, with this summary."""

    summary: str
    data: Any


def strict_schema(schema: dict) -> dict:
    """The JSON schema for strict function calling, from a model's JSON schema: every
    field required, nothing extra.

    Length and pattern limits stay in the pydantic model, where dispatch enforces them;
    strict mode on the API side does not accept every keyword, so they are left out here.
    """
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        clean = {k: v for k, v in prop.items() if k in ("type", "description", "enum", "items")}
        if isinstance(clean.get("items"), dict):  # a list's items: the same keywords only
            clean["items"] = {k: v for k, v in clean["items"].items() if k in ("type", "description", "enum")}
        properties[name] = clean
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
