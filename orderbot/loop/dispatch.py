"""Dispatch: the whitelist of a run's tools, and each call checked, then run, as an envelope.

A call is looked up by exact name in a dict: dispatch never imports, evals or builds queries
from what the model sent. `prepare` does every check that needs no running (name, JSON
arguments, sign-in, the tool's own permission check); `run` runs a prepared call and never
raises: a `ToolError` is the tool's message for the model, anything else is logged here and
reaches the model only as `internal_error`.
"""

from __future__ import annotations

import json
import logging
from typing import NamedTuple

from pydantic import BaseModel, ValidationError

from orderbot.errors import ConfigError, ToolError
from orderbot.loop.envelope import fail, ok
from orderbot.loop.items import FunctionCall
from orderbot.loop.model_text import to_model
from orderbot.loop.tools import HandedOff, SignedIn, Tool, ToolContext

log = logging.getLogger("orderbot")

INTERNAL_ERROR = to_model("internal")
ONE_CUSTOMER = to_model("one_customer")


class Outcome(NamedTuple):
    """What running a call came to: the envelope the model gets, and whether the call signed
    a customer in or handed the run off (the engine acts on both; no tool changes the run)."""

    envelope: dict
    signed_in: str | None = None
    handed_off: str | None = None


class Prepared(NamedTuple):
    """A call that passed every check dispatch can make without running it."""

    call: FunctionCall
    tool: Tool
    args: BaseModel

    @property
    def canonical_arguments(self) -> str:
        return json.dumps(self.args.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


class Refused(NamedTuple):
    """A call dispatch will not run, with the envelope the model gets instead."""

    call: FunctionCall
    decision: str  # unknown_tool, invalid_arguments, sign_in_required, no_access, ...
    envelope: dict


class Toolbox:
    """The whitelist: the tools a run may use, looked up by exact name."""

    def __init__(self, tools: list[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ConfigError("error.tool_twice", tool=tool.name)
            self._tools[tool.name] = tool
        self.specs = [tool.spec for tool in tools]
        self.versions = {tool.name: tool.version for tool in tools}
        lookups = [tool.name for tool in tools if tool.sign_in_with]
        self._sign_in_hint = (
            to_model("sign_in_or_find", lookups=" or ".join(lookups)) if lookups else to_model("sign_in")
        )

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def prepare(self, call: FunctionCall, ctx: ToolContext) -> Prepared | Refused:
        """Name, arguments, identity and permission: everything checked before running."""
        tool = self._tools.get(call.name)
        if tool is None:
            return Refused(
                call,
                "unknown_tool",
                fail("unknown_tool", to_model("unknown_tool", name=repr(call.name[:40]))),
            )
        try:
            args = tool.args.model_validate_json(call.arguments or "{}")
        except ValidationError as exc:
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                return Refused(call, "invalid_arguments", fail("invalid_json", to_model("invalid_json")))
            return Refused(call, "invalid_arguments", fail("invalid_arguments", field_errors(exc)))
        if tool.needs_user and ctx.user is None:
            return Refused(call, "sign_in_required", fail("sign_in_required", self._sign_in_hint))
        if tool.check is not None:
            try:
                tool.check(args, ctx.for_call(call.call_id))
            except ToolError as exc:
                return Refused(call, exc.code, fail(exc.code, str(exc)))
            except Exception:  # noqa: BLE001 - a broken check must refuse, never run or leak
                log.exception("run %s: checking %s failed", ctx.run_id, tool.name)
                return Refused(call, "internal_error", fail("internal_error", INTERNAL_ERROR))
        return Prepared(call, tool, args)

    def execute(self, prepared: Prepared, ctx: ToolContext) -> dict:
        """Run a prepared call and wrap what happened in an envelope; never raises."""
        return self.run(prepared, ctx).envelope

    def run(self, prepared: Prepared, ctx: ToolContext) -> Outcome:
        """Run a prepared call: its envelope, and a sign-in or hand-off it made; never raises.

        A customer found by a sign-in lookup is the run's customer only if the run has none
        yet, or has that one: a lookup that finds someone else is refused, and the model is
        not told who it found (one customer per conversation)."""
        tool = prepared.tool
        try:
            value = tool.run(prepared.args, ctx.for_call(prepared.call.call_id))
        except ToolError as exc:
            return Outcome(fail(exc.code, str(exc)))
        except Exception:  # noqa: BLE001 - anything else is ours to log, not the model's to see
            log.exception("run %s: tool %s failed", ctx.run_id, tool.name)
            return Outcome(fail("internal_error", INTERNAL_ERROR))
        if isinstance(value, SignedIn) and tool.sign_in_with:
            if ctx.user is not None and value.customer != ctx.user:
                return Outcome(fail("other_customer", ONE_CUSTOMER))
            return Outcome(ok(value.data), signed_in=value.customer)
        if isinstance(value, HandedOff) and tool.hands_off:
            return Outcome(ok(value.data), handed_off=value.summary)
        if isinstance(value, SignedIn | HandedOff) or tool.sign_in_with or tool.hands_off:
            log.error("run %s: tool %s returned %s, which it was not declared to", ctx.run_id, tool.name, type(value))
            return Outcome(fail("internal_error", INTERNAL_ERROR))
        return Outcome(ok(value))


def field_errors(exc: ValidationError, limit: int = 3) -> str:
    """A short field-level description of what was wrong, never echoing the input."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:limit]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)
