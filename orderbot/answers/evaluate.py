"""`orderbot eval`: measure a model on a suite of cases before trusting it.

A suite is a JSON file (without --suite, the default shop's: orderbot/shops/sample/eval_suite.json):

    {"orders": "orders.json",                  # optional, relative to the suite file
     "cases": [{"name": "status-zh",
                "question": "请查询订单 ORD-1001 的状态。",
                "user": "C001",                   # optional: anonymous without it
                "calls": [{"name": "get_order_status", "arguments": {"order_id": "ORD-1001"}}],
                "stop_reason": "answered",        # the default
                "refused": ["no_access"],         # error codes some call must get back
                "facts": ["已发货"],               # text the answer must contain
                "limits": {"max_steps": 4}}]}     # optional, over the command's limits

Each case is one run through orderbot.runner, under its own limits, over its own scratch
copy of the orders source: nothing is ever written to the real one (a cancel is expected
to pause for approval, and nobody approves it). A case passes when every check holds:

    tools    the calls proposed (run, refused or waiting) are exactly the expected ones;
             expected arguments must match, others (a cancel's reason) are free
    refused  each expected error code came back from some call
    stop     the run stopped for the expected reason (awaiting_approval: a pause on cancel)
    claims   the claim check found nothing unsupported in the answer (orderbot.answers.claims)
    facts    the answer contains each expected text
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orderbot.errors import ConfigError, OrderbotError, Phrase
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.limits import SPEC_OF
from orderbot.loop.state import RunState, describe_call
from orderbot.settings import USER_ID
from orderbot.shops.choice import store_type
from orderbot.shops.session import DEFAULT_SHOP, open_session
from orderbot.shops.source import parse_source
from orderbot.text import cut, first_error, invalid_json

if TYPE_CHECKING:
    from orderbot.shops.source import Source

DEFAULT_SUITE = DEFAULT_SHOP.eval_suite  # with the orders it is about (DEFAULT_SHOP.sample)
MAX_CASES = 1000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectedCall(_Strict):
    name: str
    arguments: dict[str, Any] = {}


class Case(_Strict):
    name: str = Field(min_length=1, max_length=80)
    question: str = Field(min_length=1, max_length=4000)
    user: str | None = Field(None, pattern=f"^(?:{USER_ID.pattern})$")  # as --user takes it: outside input
    calls: list[ExpectedCall] | None = None  # None: any calls will do
    stop_reason: StopReason = StopReason.ANSWERED
    refused: list[str] = []
    facts: list[str] = []
    limits: dict[str, float] = {}
    note: str | None = None  # for the person reading the suite


class Suite(_Strict):
    description: str = ""
    orders: str | None = None
    cases: list[Case] = Field(min_length=1, max_length=MAX_CASES)


def load_suite(path: Path | None = None) -> tuple[Suite, Path]:
    """The suite at `path` (the default one without it), and the file it came from."""
    path = path or DEFAULT_SUITE
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError("eval.suite_unreadable", path=path, reason=exc.strerror or exc) from None
    try:
        suite = Suite.model_validate_json(raw)
    except ValidationError as exc:
        not_json = invalid_json(exc)  # the JSON parser's own words on where it broke
        if not_json is not None:
            raise ConfigError("error.not_json", path=path, error=not_json) from None
        where, why = first_error(exc)
        raise ConfigError("eval.suite_invalid", path=path, where=where or Phrase("eval.the_suite"), why=why) from None
    for index, case in enumerate(suite.cases):
        check_limits(path, index, case)
    names = [case.name for case in suite.cases]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ConfigError("eval.name_twice", path=path, name=repr(twice))
    return suite, path


def check_limits(path: Path, index: int, case: Case) -> None:
    """A case's limits are limits orderbot has, with values they may take: a suite is outside
    input, and a misspelt limit would otherwise be ignored and the case run without it."""
    unknown = [name for name in case.limits if name not in SPEC_OF]
    if unknown:
        known = ", ".join(SPEC_OF)
        raise ConfigError("eval.unknown_limit", path=path, index=index, name=cut(unknown[0], 40), known=known)
    try:
        Limits(**case.limits)
    except ValidationError as exc:
        where, why = first_error(exc)
        raise ConfigError("eval.bad_limit", path=path, index=index, where=where, why=why) from None


def orders_source(suite: Suite, suite_path: Path, override: str | None) -> Source:
    """--orders, else the suite's own orders file (relative to the suite), else the default
    shop's sample. Only a file can be copied for each case: a PostgreSQL source is refused. A suite may
    name only orders in its own folder (a suite from elsewhere must not point the model at
    any file this user can read); --orders names any. The orders are read once here, so a
    file that holds no orders is one sentence before any case runs."""

    if override is not None:
        source = parse_source(override)
    elif suite.orders:
        source = parse_source(_beside(suite_path, suite.orders))
    else:
        source = parse_source(DEFAULT_SHOP.sample)
    if source.path is None:
        raise ConfigError("eval.cannot_copy", source=source.shown)
    store_type("sample", source.kind).open(source, writable=False).close()
    return source


def _beside(suite_path: Path, orders: str) -> Path:
    folder = suite_path.parent.resolve()
    found = (folder / orders).resolve()
    if "://" in orders or not found.is_relative_to(folder):
        raise ConfigError("eval.orders_outside", path=suite_path, orders=cut(orders, 80))
    return found


def scratch_locator(source: Source, copy: Path) -> str:
    """The --orders value for a scratch copy of `source`."""
    return f"sqlite:///{copy.resolve()}" if source.kind == "sqlite" else str(copy)


def case_limits(base: Limits, case: Case) -> Limits:
    try:
        return Limits(**{**base.model_dump(), **case.limits})
    except (ValidationError, TypeError) as exc:
        raise ConfigError("eval.case_limits", name=repr(case.name), error=exc.__class__.__name__) from None


# ---- scoring: pure ----------------------------------------------------------------------


# One reason a check failed: a catalogue message (`eval.reason.*`) and its values, said where
# it is shown (orderbot.ui.evaluation); --json keeps its id and values.
Reason = Phrase


@dataclass(frozen=True)
class Check:
    name: str  # tools, refused, stop, claims, facts
    ok: bool
    reasons: tuple[Reason, ...] = ()  # why it failed, in a few words


@dataclass
class CaseResult:
    name: str
    question: str
    checks: list[Check]
    stop_reason: str | None
    calls: list[str]  # name(arguments) as proposed
    claims: list[dict]
    answer: str | None
    seconds: float
    tokens: int
    run_id: str | None = None
    error: Phrase | None = None  # why the case could not run at all

    @property
    def passed(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "passed": self.passed,
            "question": self.question,
            "run_id": self.run_id,
            "stop_reason": self.stop_reason,
            "calls": self.calls,
            "checks": [{"name": c.name, "ok": c.ok, "reasons": [r.as_json() for r in c.reasons]} for c in self.checks],
            "claims": self.claims,
            "answer": self.answer,
            "seconds": round(self.seconds, 3),
            "tokens": self.tokens,
            "error": None if self.error is None else self.error.as_json(),
        }


def proposed_calls(state: RunState) -> list[tuple[str, dict]]:
    """Every call the model proposed in the run, whatever became of it, with parsed arguments."""
    out = []
    for record in [*state.calls, *state.pending]:
        try:
            arguments = json.loads(record.arguments)
        except ValueError:
            arguments = {"_raw": record.arguments[:200]}
        out.append((record.name, arguments if isinstance(arguments, dict) else {"_raw": arguments}))
    return out


def score(case: Case, state: RunState, claims: list[dict]) -> list[Check]:
    checks = []
    proposed = proposed_calls(state)
    if case.calls is not None:
        checks.append(_check_calls(case.calls, proposed))
    if case.refused:
        codes = {str((c.result or {}).get("code")) for c in state.calls if not (c.result or {}).get("ok", True)}
        missing = [code for code in case.refused if code not in codes]
        reasons = (Reason("eval.reason.not_refused", {"codes": missing}),) if missing else ()
        checks.append(Check("refused", not missing, reasons))
    stop = str(state.stop_reason) if state.stop_reason else None
    wrong_stop = Reason("eval.reason.stop", {"stop": str(stop), "expected": str(case.stop_reason)})
    checks.append(Check("stop", stop == case.stop_reason, () if stop == case.stop_reason else (wrong_stop,)))
    checks.append(Check("claims", not claims, tuple(_claim_reason(c) for c in claims)))
    if case.facts:
        answer = (state.answer or "").casefold()
        missing = [fact for fact in case.facts if fact.casefold() not in answer]
        reasons = (Reason("eval.reason.lacks", {"facts": missing}),) if missing else ()
        checks.append(Check("facts", not missing, reasons))
    return checks


def _claim_reason(claim: dict) -> Reason:
    """A finding of the claim check, by its kind (every kind has its words: tests/test_message_ids.py)."""
    return Reason(f"eval.reason.claim.{claim['kind']}", {"order_id": claim["order_id"], "said": claim["said"]})


def _check_calls(expected: list[ExpectedCall], proposed: list[tuple[str, dict]]) -> Check:
    left = list(proposed)
    missing = []
    for want in expected:
        match = next(
            (p for p in left if p[0] == want.name and all(p[1].get(k) == v for k, v in want.arguments.items())), None
        )
        if match is None:
            missing.append(_describe(want.name, want.arguments))
        else:
            left.remove(match)
    problems = [Reason("eval.reason.missing_call", {"call": m}) for m in missing]
    problems += [Reason("eval.reason.unexpected_call", {"call": _describe(n, a)}) for n, a in left]
    return Check("tools", not problems, tuple(problems))


def _describe(name: str, arguments: dict) -> str:

    return describe_call(name, arguments, 80)


@dataclass
class Report:
    results: list[CaseResult]
    provider: str
    model: str
    orders: str
    orders_unchanged: bool
    min_pass: float  # percent
    suite: str

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def rate(self) -> float:
        return 100.0 * self.passed / len(self.results) if self.results else 0.0

    @property
    def ok(self) -> bool:
        return self.orders_unchanged and self.rate >= self.min_pass

    def totals(self) -> dict:
        seconds = [r.seconds for r in self.results] or [0.0]
        tokens = [r.tokens for r in self.results] or [0]
        return {
            "cases": len(self.results),
            "passed": self.passed,
            "failed": len(self.results) - self.passed,
            "pass_rate": round(self.rate, 1),
            "min_pass": self.min_pass,
            "median_seconds": round(statistics.median(seconds), 3),
            "worst_seconds": round(max(seconds), 3),
            "median_tokens": statistics.median(tokens),
            "worst_tokens": max(tokens),
            "total_tokens": sum(tokens),
            "orders_unchanged": self.orders_unchanged,
        }

    def as_dict(self) -> dict:
        return {
            "suite": self.suite,
            "provider": self.provider,
            "model": self.model,
            "orders": self.orders,
            "ok": self.ok,
            "totals": self.totals(),
            "cases": [r.as_dict() for r in self.results],
        }


# ---- running: each case through the runner, on a scratch copy ------------------------------


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_suite(
    suite: Suite,
    source: Source,
    run_case: Callable[[Case, str], CaseResult],
    *,
    jobs: int = 1,
) -> tuple[list[CaseResult], bool]:
    """Run every case on its own scratch copy of `source`; (results in suite order,
    whether `source` is byte for byte what it was before)."""
    path = source.path
    try:
        before = file_hash(path)
    except OSError as exc:
        raise ConfigError("eval.orders_unreadable", path=path, reason=exc.strerror or exc) from None
    with tempfile.TemporaryDirectory(prefix="orderbot-eval-") as scratch:
        root = Path(scratch)

        def one(indexed: tuple[int, Case]) -> CaseResult:
            index, case = indexed
            folder = root / f"case-{index:04d}"
            folder.mkdir()
            copy = folder / path.name
            shutil.copyfile(path, copy)
            return run_case(case, scratch_locator(source, copy))

        cases = list(enumerate(suite.cases))
        if jobs <= 1:
            results = [one(c) for c in cases]
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                results = list(pool.map(one, cases))
    return results, file_hash(path) == before


def case_runner(settings, *, make_model, make_runner) -> Callable[[Case, str], CaseResult]:
    """A function that runs one case: settings for the case (its user, its scratch orders,
    a scratch state directory beside them), a fresh model, and one run through the runner."""

    base_limits = settings.limits

    def run(case: Case, orders: str) -> CaseResult:
        limits = case_limits(base_limits, case)
        folder = Path(orders.removeprefix("sqlite:///")).parent
        case_settings = settings.model_copy(update={"orders": orders, "user": case.user, "state_dir": folder / "state"})
        state = RunState.start(case.question, user=case.user)
        began = time.monotonic()
        try:
            session = open_session(case_settings)
            model = make_model(case_settings, session.shop)
            result = make_runner(session, model, case_settings).start(state, limits, kind="eval")
        except OrderbotError as exc:
            return CaseResult(
                case.name, case.question, [], None, [], [], None, time.monotonic() - began, 0, error=exc.phrase
            )
        seconds = time.monotonic() - began
        claims = [c.as_dict() for c in result.claims]
        return CaseResult(
            name=case.name,
            question=case.question,
            checks=score(case, state, claims),
            stop_reason=str(state.stop_reason) if state.stop_reason else None,
            calls=[_describe(name, arguments) for name, arguments in proposed_calls(state)],
            claims=claims,
            answer=state.answer,
            seconds=seconds,
            tokens=(state.input_tokens or 0) + (state.output_tokens or 0),  # None: not reported
            run_id=state.run_id,
        )

    return run
