"""What every fault test checks, in one place.

A fault run goes through the real command line (typer's CliRunner on orderbot.cli.app)
with a recognisable API key in the environment and explicit limits. `check()` then asserts
the invariants the fault suite exists for: the stop reason and its exit code, nothing
written without approval (the orders file is byte for byte the same), no traceback and no
key in anything printed, and no limit overrun (model requests <= max steps, executed calls
<= the caps, wall time <= timeout + 1 s).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from clikit import cli, on_time

from orderbot.commands.common import EXIT_CODES
from orderbot.loop.engine import StopReason

KEY = "sk-fault-KEY-0f1e2d3c4b5a69788796a5b4"
SIDE_EFFECTS = frozenset({"cancel_order"})


@dataclass(frozen=True)
class Caps:
    max_steps: int = 3
    max_tool_calls: int = 6
    max_calls_per_step: int = 3
    timeout: float = 5.0

    def flags(self) -> list[str]:
        return [
            "--max-steps",
            str(self.max_steps),
            "--max-tool-calls",
            str(self.max_tool_calls),
            "--max-calls-per-step",
            str(self.max_calls_per_step),
            "--timeout",
            f"{self.timeout:g}",
        ]


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    exception: BaseException | None
    caps: Caps
    doc: dict = field(default_factory=dict)

    @property
    def calls(self) -> list[dict]:
        return self.doc.get("calls", [])

    def decisions(self) -> list[str]:
        return [c["decision"] for c in self.calls]

    def codes(self) -> list[str | None]:
        return [(c.get("result") or {}).get("code") for c in self.calls]


def run(
    question: str,
    *,
    orders: Path,
    caps: Caps = Caps(),
    provider: str = "scripted",
    user: str | None = "C001",
    json_out: bool = True,
    extra: tuple[str, ...] = (),
    env: dict | None = None,
) -> Outcome:
    args = ["ask", "--provider", provider, "--orders", str(orders), *caps.flags(), *extra]
    if user:
        args += ["--user", user]
    if json_out:
        args.append("--json")
    began = time.monotonic()
    result = cli(*args, question, env={"OPENAI_API_KEY": KEY, **(env or {})})
    outcome = Outcome(result.exit_code, result.stdout, result.stderr, time.monotonic() - began, result.exception, caps)
    if json_out and result.stdout.strip().startswith("{"):
        outcome.doc = json.loads(result.stdout)
    return outcome


def check(outcome: Outcome, *, stop: StopReason, orders: Path, before: bytes, requests: int | None = None) -> None:
    """The invariants every fault run must keep, whatever the model or the server did."""
    printed = outcome.stdout + outcome.stderr
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), repr(outcome.exception)
    assert "Traceback" not in printed
    assert KEY not in printed and KEY[9:] not in printed
    assert outcome.code == EXIT_CODES[stop], (outcome.code, printed[-2000:])
    if outcome.doc:
        assert outcome.doc["stop_reason"] == stop
        assert outcome.doc["steps"] <= outcome.caps.max_steps
        executed = [c for c in outcome.calls if c["decision"] == "executed"]
        assert len(executed) <= outcome.caps.max_tool_calls
        for step in {c["step"] for c in executed}:
            assert sum(c["step"] == step for c in executed) <= outcome.caps.max_calls_per_step
        assert not [c for c in executed if c["name"] in SIDE_EFFECTS], "a side effect ran without approval"
    if requests is not None:
        assert requests <= outcome.caps.max_steps
    assert on_time(outcome.seconds, outcome.caps.timeout), f"{outcome.seconds:.2f} s, deadline {outcome.caps.timeout} s"
    assert orders.read_bytes() == before, "the orders file changed without approval"
