"""Per-step views of a run: the `--trace` panels and the REPL's one line per step.

`trace_steps()` (orderbot.ui.document) turns the engine's transitions into one plain record per
step (what was sent, what the model proposed, what dispatch decided for each call and why,
each result, the time of each phase, the budget left). The same records go into
`--json --trace`, are drawn as Rich panels by `format_step_panel()`, and as one line by
`format_step_line()`.
`TraceView` and `StepLines` are engine observers that print a step as soon as it ends.
Nothing here decides anything about a run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from orderbot.errors import Phrase
from orderbot.i18n import counted, say
from orderbot.i18n import t as _t
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import Phase, RunState, describe_call
from orderbot.loop.transitions import Transition
from orderbot.text import cut
from orderbot.ui.describe import decision_words, describe, stop_words
from orderbot.ui.document import STOPPED_BEFORE, ends_step, trace_steps
from orderbot.ui.layout import flow, flow_dots, wrap_cell
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK, STYLE_PHASE, STYLE_WARN

MAX_SHOWN_CHARS = 1500  # of one pretty-printed argument or result block
ONE_LINE_CHARS = 80  # shorter JSON stays on one line

# Every decision has its words in the catalogue: `decision.<name>` (the --trace panel) and
# `decision_short.<name>` (one-line views). Refusals come from Toolbox.prepare or a tool's check.
DECISIONS = (
    "executed",
    "approved",
    "rejected",
    "unknown_tool",
    "invalid_arguments",
    "no_access",
    "sign_in_required",
    "needs_approval",
    "not_executed",
)
# ---- records -> text (pure) -----------------------------------------------------------


def format_call(call: dict) -> str:
    """`name(key="value", ...)`, one line."""
    return describe_call(str(call.get("name")), call.get("arguments"), 200)


def decision_text(call: dict) -> str:
    decision = call.get("decision", "")
    text = _t(f"decision.{decision}") if decision in DECISIONS else _t("decision.refused", code=decision)
    if decision == "not_executed" and call.get("why"):
        why = _t("trace.stopped_before") if call["why"] == STOPPED_BEFORE else call["why"]  # the stop reason
        text += _t("decision.because", reason=why)
    return text


def decision_style(decision: str) -> str:
    if decision in ("executed", "approved"):
        return STYLE_OK
    if decision in ("needs_approval", "not_executed", "rejected"):
        return STYLE_WARN
    return STYLE_ERROR


def pretty(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """JSON on one line when it is short, indented when it is not."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > ONE_LINE_CHARS:
            text = json.dumps(value, ensure_ascii=False, indent=2)
    return cut(text, limit)


def format_result(call: dict) -> str:
    """The envelope the model got, as it got it: a refusal's message is the model's own English
    (orderbot.loop.model_text), shown as the data it is; the decision row says it in words."""
    return pretty(call["result"])


def format_sent(rec: dict) -> str:
    sent = rec.get("sent")
    if not sent:
        return _t("trace.nothing_sent")
    usage = rec.get("usage")
    tokens = _t("trace.tokens", input=usage["input_tokens"], output=usage["output_tokens"]) if usage else None
    return _t(
        "trace.sent_value",
        items=counted(sent["items"], "item"),
        chars=counted(sent["chars"], "character"),
        tokens=tokens or _t("trace.not_reported"),
        tools=", ".join(sent.get("tools", [])) or _t("trace.no_tools"),
    )


def format_budget_left(budget: dict | None) -> str:
    if not budget:
        return _t("trace.unknown")
    return _t(
        "trace.budget_value",
        steps=counted(budget["steps"], "step"),
        calls=counted(budget["tool_calls"], "tool_call"),
        seconds=budget["seconds"],
    )


def format_times(rec: dict) -> str:
    parts = []
    if rec.get("request_ms") is not None:
        parts.append(_t("trace.time_request", ms=f"{rec['request_ms']:g}"))
    call_ms = [c["ms"] for c in rec["calls"] if c.get("ms") is not None]
    if call_ms:
        parts.append(_t("trace.time_tools", ms=f"{sum(call_ms):.1f}"))
    if rec.get("ms") is not None:
        parts.append(_t("trace.time_step", ms=f"{rec['ms']:g}"))
    return " · ".join(parts) or "-"


def step_label(rec: dict) -> str:
    """`step N`; a stop that came between model requests (the clock, Ctrl-C while
    waiting for the model) belongs to no step of its own."""
    return _t("trace.step", step=rec["step"]) if rec.get("sent") or rec["calls"] else _t("trace.run")


def phase_path(pairs: list[list[str]]) -> str:
    """The phases a step went through, each from → to joined where one ends as the next
    begins (`plan → act → observe → plan`), in the UI language."""
    pairs = [pair for index, pair in enumerate(pairs) if index == 0 or pairs[index - 1] != pair]  # a call each
    path = ""
    for index, (source, target) in enumerate(pairs):
        if index == 0 or pairs[index - 1][1] != source:
            path += (", " if path else "") + _t(f"phase.{source}")
        path += f" → {_t(f'phase.{target}')}"
    return path


def format_step_line(rec: dict, limits: Limits, *, before: list[list[str]] = ()) -> list[tuple[str, Text]]:
    """The REPL's default view: one line per step, as parts that orderbot.ui.layout.flow
    breaks between (a call, the stop and the budget each stay whole where they fit): the
    step, the phases it went through (after `before`, the start of the run), its calls, its
    stop and the budget used."""
    parts: list[tuple[str, Text]] = [("", Text(step_label(rec), style=STYLE_PHASE))]
    path = phase_path([*before, *rec.get("phases", [])])
    if path:
        parts.append((" · ", Text(path, style=STYLE_PHASE)))
    for call in rec["calls"]:
        decision = call.get("decision", "")
        part = Text(format_call(call))
        part.append(" → ")
        part.append(decision_words(decision), style=decision_style(decision))
        parts.append((" · ", part))
    stop = rec.get("stop")
    if stop:
        reason = stop["reason"]
        answered = reason == StopReason.ANSWERED
        words = _t("event.finished.answered") if answered else _t("trace.stopped", reason=reason)
        parts.append((" · ", Text(words, style=STYLE_OK if answered else STYLE_ERROR)))
    budget = _t(
        "trace.budget_used",
        steps=rec["steps_used"],
        max_steps=limits.max_steps,
        calls=rec["calls_used"],
        max_calls=limits.max_tool_calls,
        seconds=rec["elapsed"],
    )
    parts.append(("  ", Text(budget, style=STYLE_DIM)))
    return parts


def format_step_panel(rec: dict, *, plain: bool = False, width: int | None = None) -> Panel:
    """The `--trace` view of one step: a panel of labelled rows, `width` cells wide at most.
    A value breaks between words, ids and JSON members (layout.pieces), never inside one."""
    rows: list[tuple[str, Text]] = []
    rows.append((_t("table.transition"), Text(phase_path(rec.get("phases", [])), style=STYLE_PHASE)))
    rows.append((_t("trace.sent"), Text(format_sent(rec))))  # Text everywhere: the model wrote much of this
    if rec.get("proposed"):
        rows.append((_t("trace.proposed"), counted(len(rec["proposed"]), "tool_call")))
    elif rec.get("text"):
        rows.append((_t("trace.answered"), Text(rec["text"])))
    for index, call in enumerate(rec["calls"], 1):
        rows.append(
            (_t("trace.call", index=index), Text(f"{call.get('name')}  ({call.get('call_id')})", style=STYLE_PHASE))
        )
        rows.append(("  " + _t("trace.arguments"), Text(pretty(call.get("arguments")))))
        decision = Text(decision_text(call), style=decision_style(call.get("decision", "")))
        asked = Phrase.from_json(call.get("why"))  # what a person is asked to approve, in their words
        if asked is not None:
            decision.append(_t("trace.why", why=say(asked)))
        elif call.get("decision") == "not_executed":
            stop = rec.get("stop")
            decision.append(
                f": {stop_detail(stop) if stop and call['why'] != STOPPED_BEFORE else _t('trace.stopped_before')}"
            )
        if call.get("ms") is not None:
            decision.append(_t("trace.ms", ms=f"{call['ms']:g}"), style=STYLE_DIM)
        rows.append(("  " + _t("trace.decision"), decision))
        if call.get("result") is not None:
            rows.append(("  " + _t("trace.result"), Text(format_result(call))))
    stop = rec.get("stop")
    if stop:
        if stop["reason"] == StopReason.ANSWERED:  # the answer is already shown above
            rows.append((_t("trace.finish"), Text(_t("event.finished.answered"), style=STYLE_OK)))
        else:
            rows.append((_t("trace.finish"), Text(f"{stop['reason']}: {stop_detail(stop)}", style=STYLE_ERROR)))
    rows.append((_t("trace.time"), Text(format_times(rec))))
    rows.append((_t("trace.budget_left"), Text(format_budget_left(rec.get("budget_left")))))
    labels = max(cell_len(label) for label, _ in rows)
    values = max(10, (width or 1 << 16) - 4 - labels - 2)  # the panel's edges and padding, the grid's gap
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold" if not plain else "", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, wrap_value(value, values))
    return Panel(
        grid,
        title=step_label(rec),
        title_align="left",
        box=box.ASCII if plain else box.ROUNDED,
        border_style="" if plain else STYLE_PHASE,
    )


def wrap_value(value: str | Text, width: int) -> Text:
    """A panel's value in lines of `width` cells, broken where a table cell breaks
    (layout.wrap_cell), each line keeping its indent (pretty JSON) and its styles."""
    text = value if isinstance(value, Text) else Text(value)
    measure = Console(width=max(width, 1))  # measures only: never prints
    lines: list[Text] = []
    start = 0
    for line in text.plain.split("\n"):
        body = line.lstrip(" ")
        lead = len(line) - len(body)
        original = text[start + lead : start + len(line)]
        start += len(line) + 1
        cursor = 0
        for piece in wrap_cell(measure, body, max(1, width - lead)).plain.split("\n"):
            # The piece is the body's text from here, but for runs of spaces it made one.
            while cursor < len(body) and body[cursor] == " ":
                cursor += 1
            begin = cursor
            for char in piece:
                cursor += 1
                while char == " " and cursor < len(body) and body[cursor] == " ":
                    cursor += 1
            lines.append(Text(" " * lead) + original[begin:cursor])
    return Text("\n").join(lines)


def stop_detail(stop: dict) -> str:
    """A stop's detail in the UI language when the record names its sentence, else as written."""
    return stop_words(stop.get("message"), stop["detail"])


def format_limits(limits: Limits) -> str:
    return _t(
        "limits.line",
        steps=counted(limits.max_steps, "step"),
        calls=counted(limits.max_tool_calls, "tool_call"),
        per_step=limits.max_calls_per_step,
        seconds=f"{limits.timeout:g}",
    )


# ---- observers ------------------------------------------------------------------------


class _StepPrinter:
    """Collects transitions and prints each step once it has ended."""

    def __init__(self, console: Console, limits: Limits) -> None:
        self.console = console
        self.limits = limits
        self.transitions: list[Transition] = []
        self._printed = 0

    def __call__(self, transition: Transition, state: RunState) -> None:
        self.transitions.append(transition)
        if transition.from_ == Phase.START:
            self.started(transition)
        elif ends_step(transition):
            steps = trace_steps(self.transitions)
            for rec in steps[self._printed :]:
                self.print_step(rec)
            self._printed = len(steps)

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield  # nothing live to stop: each step is printed whole

    def close(self) -> None:
        pass

    def started(self, transition: Transition) -> None:
        pass

    def print_step(self, rec: dict) -> None:
        raise NotImplementedError


class TraceView(_StepPrinter):
    """`--trace`: the limits once, then one panel per step."""

    def started(self, transition: Transition) -> None:
        path = phase_path([[str(transition.from_), str(transition.to)]])
        line = f"{path} · {describe(transition).event} · {format_limits(self.limits)}"
        self.console.print(flow_dots(self.console, line, STYLE_DIM), soft_wrap=True)

    def print_step(self, rec: dict) -> None:
        console = self.console
        console.print(format_step_panel(rec, plain=not console.is_terminal, width=console.width))


class StepLines(_StepPrinter):
    """The REPL's compact view: one line per step; the first also shows how the run started."""

    def started(self, transition: Transition) -> None:
        self._start = [[str(transition.from_), str(transition.to)]]

    def print_step(self, rec: dict) -> None:
        before, self._start = getattr(self, "_start", []), []
        # Broken only between a step's parts, never inside a word (orderbot.ui.layout).
        self.console.print(flow(self.console, format_step_line(rec, self.limits, before=before)), soft_wrap=True)


def print_trace(console: Console, transitions: list[Transition]) -> None:
    """All steps of a finished run at once (for `runs show --trace`)."""
    for rec in trace_steps(transitions):
        console.print(format_step_panel(rec, plain=not console.is_terminal, width=console.width))


__all__ = ["StepLines", "TraceView", "format_step_line", "format_step_panel", "print_trace", "trace_steps"]
