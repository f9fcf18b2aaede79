"""Tools: one declaration gives both the spec the model sees and the entry dispatch allows.

A tool has two halves that must not drift apart: what the model is told (its spec) and what
the program will actually run (its dispatch entry). Here both come from one `Tool`. Dispatch
looks tools up in a dict by exact name: it never imports, evals or builds queries from
what the model sent.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from orderbot.errors import ConfigError, ToolError
from orderbot.loop.items import FunctionCall
from orderbot.loop.limits import MAX_TOOL_RESULT_CHARS
from orderbot.text import one_line

log = logging.getLogger("orderbot")

# Argument names that smell of identity. Identity comes from the session, never from the
# model, so a tool that asks the model for one is refused when it is registered. Names are
# compared without case, "_" or "-", so customerId and customer_id both count.
IDENTITY_WORDS = (
    "user",
    "customer",
    "account",
    "owner",
    "member",
    "identity",
    "login",
    "session",
    "principal",
    "tenant",
    "buyer",
    "caller",
    "requester",
    "email",
    "phone",
)
IDENTITY_TOKENS = frozenset({"uid", "cid", "who", "me"})  # whole words only: "guide" is not "uid"

MAX_ERROR_CHARS = 300
INTERNAL_ERROR = "the tool failed unexpectedly; the error was logged"
ONE_CUSTOMER = (
    "these details are not the signed-in customer's: a conversation is about one customer only; "
    "nothing about anyone else can be shown or changed"
)


class ToolContext(NamedTuple):
    """What a tool may know about the session: who is asking and under which run. A named
    tuple, as the engine's other values made for every call (orderbot.models.base)."""

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
    # One sentence saying exactly what a side-effecting call will do, for the approval prompt.
    describe: Callable[[Any, ToolContext], str] | None = None
    # A sign-in lookup: the arguments that are the customer's credentials (an e-mail address,
    # a name and zip code), which the identity check below lets it take. Its `run` returns
    # SignedIn, and the customer found becomes the run's customer (see Toolbox.run).
    sign_in_with: tuple[str, ...] = ()
    # A successful call ends the run, handed to a person: its `run` returns HandedOff.
    hands_off: bool = False
    spec: dict = field(init=False, repr=False)
    version: str = field(init=False)

    def __post_init__(self) -> None:
        schema = self.args.model_json_schema()  # made once: each costs ~1 ms, for every tool at startup
        for name in argument_names(self.args, schema):
            if is_identity_name(name) and name not in self.sign_in_with:
                raise ConfigError(
                    f"tool {self.name!r} takes {name!r} from the model; identity must come from the session"
                )
        self._check_sign_in()
        spec = {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": strict_schema(schema),
            "strict": True,
        }
        object.__setattr__(self, "spec", spec)
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        object.__setattr__(self, "version", digest[:12])

    def _check_sign_in(self) -> None:
        """A sign-in lookup reads credentials and nothing else: never an id that would let the
        model name the customer, never a side effect, never after sign-in only."""
        for name in self.sign_in_with:
            if name not in self.args.model_fields:
                raise ConfigError(f"tool {self.name!r} signs in with {name!r}, an argument it does not take")
            if "id" in name_tokens(name):
                raise ConfigError(
                    f"tool {self.name!r} signs in with {name!r}: a credential is what the customer knows, never an id"
                )
        if self.sign_in_with and (self.side_effect or self.needs_user or self.hands_off):
            raise ConfigError(f"tool {self.name!r} signs in: it cannot also change data, need a user or hand off")


@dataclass(frozen=True)
class SignedIn:
    """What a sign-in tool returns: the customer its credentials name, who becomes the run's
    customer, and the data the model sees."""

    customer: str
    data: Any


@dataclass(frozen=True)
class HandedOff:
    """What a hand-off tool returns: the run ends here, handed to a person, with this summary."""

    summary: str
    data: Any


class Outcome(NamedTuple):
    """What running a call came to: the envelope the model gets, and whether the call signed
    a customer in or handed the run off (the engine acts on both; no tool changes the run)."""

    envelope: dict
    signed_in: str | None = None
    handed_off: str | None = None


def argument_names(model: type[BaseModel], schema: dict) -> set[str]:
    """Every property name the model could send, aliases and nested models included
    (`schema` is the model's JSON schema)."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return names | set(model.model_fields)


def name_tokens(name: str) -> list[str]:
    """An argument name's words, lower case: customerId and customer_id are both customer, id."""
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())


def is_identity_name(name: str) -> bool:
    tokens = name_tokens(name)
    flat = "".join(tokens)
    return any(word in flat for word in IDENTITY_WORDS) or any(token in IDENTITY_TOKENS for token in tokens)


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


# ---- result envelopes ---------------------------------------------------------------


def ok(data: Any) -> dict:
    return {"ok": True, "data": data}


def fail(code: str, message: str) -> dict:
    return {"ok": False, "error": sanitize(message), "code": code}


# Redaction patterns, applied in this order by `sanitize`. Each replaces the whole match
# with a placeholder, so the model learns that something was there but not what.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\).*", re.S)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.?)", re.S)


@functools.cache  # compiled on the first failure: a run where nothing fails never pays the ~10 ms
def _redactions() -> tuple[tuple[re.Pattern[str], str], ...]:
    return (
        (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
        (re.compile(r"\b(bearer)(\s+)[^\s,;]+", re.I), r"\1\2<redacted>"),
        (re.compile(r"\b(authorization|token|basic|cookie)(\s*[:=]\s*)[^\s,;]+", re.I), r"\1\2<redacted>"),
        (
            re.compile(
                r"\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)(\s*[=:]\s*)[^\s,;]+",
                re.I,
            ),
            r"\1\2<redacted>",
        ),
        (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "<email>"),
        (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<address>"),
        (
            re.compile(
                r"\[[0-9a-f:.%]*:[0-9a-f:.%]*\w*\](?::\d+)?"
                r"|(?<![\w:])(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])"
                r"|(?<![\w:])(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?"
                r"|::[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)(?:%\w+)?(?![\w:])",
                re.I,
            ),
            "<address>",
        ),
        (
            re.compile(
                r"\b(?:localhost|[\w-]+(?:\.[\w-]+)*\.(?:internal|local|localdomain|lan|corp|intranet|home|private|svc|cluster))"
                r"(?::\d+)?\b|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{2,5}\b",
                re.I,
            ),
            "<host>",
        ),
        (re.compile(r"(?:\b[A-Za-z]:|\\\\[\w.$-]+)\\(?:[^\\/:*?\"<>|\r\n]+\\)*[^\\/:*?\"<>|\s]*"), "<path>"),
        (
            re.compile(r"(?<![\w.~-])~?/(?:[\w.~@+%-]+/)*[\w.~@+%-]+/?|\b(?:[\w.-]+[/\\])+[\w.-]+\.[A-Za-z]\w{0,5}\b"),
            "<path>",
        ),
        (
            re.compile(
                r"\b(?:sk|pk|rk|api|key|tok|ghp|gho|ghs|github_pat|glpat|xox[a-z]?)[-_][A-Za-z0-9_-]{6,}"
                r"|\bAKIA[0-9A-Z]{12,}|\beyJ[\w-]+\.[\w-]+(?:\.[\w-]+)?|[A-Za-z0-9_+/=-]{32,}",
                re.I,
            ),
            "<redacted>",
        ),
    )


# Characters that are not text: C0/C1 controls, format characters (bidi overrides,
# zero-width), private use, surrogates, line and paragraph separators.
_NOT_TEXT = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))
_TRAILING_TOKEN = re.compile(r"[\w+/=.:@\\~%-]*$", re.ASCII)


def sanitize(message: object, limit: int = MAX_ERROR_CHARS) -> str:
    """Make any message safe to send to the model: the one place that does it.

    Drops tracebacks, terminal escapes and control characters, keeps the first line,
    replaces URLs, credentials, e-mail and network addresses, internal host names, paths
    and key-like strings with placeholders, and bounds the length.
    """
    text = _TRACEBACK.sub("", str(message))
    text = _ANSI.sub("", text)
    text = next((line for line in text.splitlines() if line.strip()), "")
    bound = max(limit * 4, 1000)  # regexes run on bounded text; a token cut here is dropped whole
    if len(text) > bound:
        text = _TRAILING_TOKEN.sub("", text[:bound])
    text = "".join(" " if unicodedata.category(ch) in _NOT_TEXT else ch for ch in text)
    for pattern, placeholder in _redactions():
        text = pattern.sub(placeholder, text)
    return one_line(text, limit) or "error"


def validation_message(exc: ValidationError, limit: int = 3) -> str:
    """A short field-level description of what was wrong, never echoing the input."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:limit]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


# ---- the whitelist ------------------------------------------------------------------


class Prepared(NamedTuple):
    """A call that passed every check dispatch can make without running it."""

    call: FunctionCall
    tool: Tool
    args: BaseModel

    @property
    def canonical_arguments(self) -> str:
        return json.dumps(self.args.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Refused:
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
                raise ConfigError(f"tool {tool.name!r} is registered twice")
            self._tools[tool.name] = tool
        self.specs = [tool.spec for tool in tools]
        self.versions = {tool.name: tool.version for tool in tools}
        lookups = [tool.name for tool in tools if tool.sign_in_with]
        self._sign_in_hint = (
            "this needs a signed-in customer: sign in with --user, or find the customer first with "
            + " or ".join(lookups)
            if lookups
            else "this needs a signed-in user: sign in with --user"
        )

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def prepare(self, call: FunctionCall, ctx: ToolContext) -> Prepared | Refused:
        """Name, arguments, identity and permission: everything checked before running."""
        tool = self._tools.get(call.name)
        if tool is None:
            return Refused(call, "unknown_tool", fail("unknown_tool", f"tool {call.name[:40]!r} is not available"))
        try:
            args = tool.args.model_validate_json(call.arguments or "{}")
        except ValidationError as exc:
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                return Refused(call, "invalid_arguments", fail("invalid_json", "arguments are not valid JSON"))
            return Refused(call, "invalid_arguments", fail("invalid_arguments", validation_message(exc)))
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


# How a string cut by `capped` ends, in the model's input and everywhere the result is shown.
CUT = "…[cut]"

# The standard library's encoder, made once (json.dumps with options builds one per call).
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    """`value` as compact JSON text, non-ASCII characters kept: how results are sent to the
    model and summarised. pydantic's serializer writes it several times faster than the
    standard library on the small values of every call; the standard library's, which keeps
    a lone surrogate (from an orders file's escapes) where UTF-8 has none, when it cannot."""
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        return _COMPACT.encode(value)


def envelope_text(envelope: dict) -> str:
    return compact_json(envelope)


def capped(envelope: dict, limit: int = MAX_TOOL_RESULT_CHARS) -> tuple[dict, str]:
    """`envelope` and its JSON text, or when that text is longer than `limit` characters, a
    copy that fits and its text (returned with it: the text is what the model is sent, and
    encoding it again would cost every tool call a second pass).

    The cut copy stays a valid envelope (the model reads JSON, and a half string would not
    parse): every string longer than some length is cut to it with a visible `…[cut]`
    ending, and `"truncated": true` with a `note` tells the model what happened. When even
    short strings do not fit (a list of thousands of items), the data becomes the start of
    its own JSON text, as one string, under the same marker."""
    text = envelope_text(envelope)
    if len(text) <= limit:
        return envelope, text
    note = f"this result was cut to {limit:,} characters from {len(text):,}; strings ending in {CUT} were shortened"
    budget = limit - len(note) - 64  # the marker fields and their quotes

    def cut(value: Any, keep: int) -> Any:
        if isinstance(value, str):
            return value if len(value) <= keep else value[:keep] + CUT
        if isinstance(value, dict):
            return {k: cut(v, keep) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v, keep) for v in value]
        return value

    low, high, best = 16, budget, None  # the longest string length that still fits
    while low <= high:
        keep = (low + high) // 2
        candidate = cut(envelope, keep)
        if len(envelope_text(candidate)) <= budget:
            best, low = candidate, keep + 1
        else:
            high = keep - 1
    if best is None:
        body = {k: v for k, v in envelope.items() if k not in ("data", "error")}
        inner = envelope_text(envelope.get("data", envelope.get("error")))
        keep = budget - len(envelope_text(body)) - 16
        while True:  # JSON escapes quotes inside the string: shrink until it fits
            best = {**body, "data": inner[: max(keep, 0)] + CUT}
            over = len(envelope_text(best)) - budget
            if over <= 0 or keep <= 0:
                break
            keep -= over
    best = {**best, "truncated": True, "note": note}
    return best, envelope_text(best)
