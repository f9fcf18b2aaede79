"""Everything a person sees: Rich views of transitions, answers and stops.

Pure `format_*` functions build strings and tables; the few functions that print take a
Console. Rich decides colour by itself: none when stdout is not a terminal or NO_COLOR is
set. Nothing here decides anything about a run.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING

from pydantic_core import to_json
from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from orderbot.answers.claims import Claim
from orderbot.answers.facts import Fact
from orderbot.i18n import counted, language
from orderbot.i18n import t as _t
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import PHASES, Event, PendingCall, RunState, describe_call, summarize_result
from orderbot.loop.transitions import Called, Transition
from orderbot.runs.record import utc_iso
from orderbot.text import cut
from orderbot.ui.describe import describe, result_words, stop_words
from orderbot.ui.escape import arguments_value, visible
from orderbot.ui.layout import flow, flow_dots, hanging, wrap_cell
from orderbot.ui.presentation import RESUME_ASIDE
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK, STYLE_PHASE, STYLE_WARN
from orderbot.ui.terminal import end_quietly_on_closed_pipe
from orderbot.ui.trace import trace_steps
from orderbot.ui.waiting import REFRESH_PER_SECOND, Waiting, watch

if TYPE_CHECKING:
    from orderbot.runner import RunResult

PIPED_WIDTH = 120
# Spaces before a line's end (and any style codes after them): Rich pads every table cell
# and line to the console width, which piped output should not carry.
TRAILING_SPACES = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")


class SafeConsole(Console):
    """A console that shows every piece of text through orderbot.ui.escape.visible after
    layout: no control, bidi or separator character from outside reaches the terminal,
    while the colour and cursor codes Rich emits for orderbot's own styles stay. Output
    that is not a terminal has no trailing spaces."""

    def _render_buffer(self, buffer):  # Rich's one place that turns segments into output

        text = super()._render_buffer(
            Segment(text if control else visible(text), style, control) for text, style, control in buffer
        )
        return text if self.is_terminal else TRAILING_SPACES.sub(r"\1", text)


def make_console() -> Console:
    # Rich's own NO_COLOR handling drops colours but keeps bold and dim; no styles at all is
    # what people who set it expect.
    plain = os.environ.get("NO_COLOR", "") != ""
    # No :emoji: codes: orderbot writes none, and text shown from outside is shown as it is.
    console = SafeConsole(highlight=False, soft_wrap=False, emoji=False, color_system=None if plain else "auto")
    console.on_broken_pipe = end_quietly_on_closed_pipe  # Rich's own exits 1, which replay uses for "differs"
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH  # piped: wide enough that rows stay on one line
    return console


# ---- pure formatting ------------------------------------------------------------------


def format_budget(t: Transition, limits: Limits) -> str:
    return f"{t.steps_used}/{limits.max_steps} {t.calls_used}/{limits.max_tool_calls} {t.elapsed:.1f}s"


def event_style(t: Transition) -> str:
    if t.kind is Event.FINISHED:
        return STYLE_OK if t.stop_reason is StopReason.ANSWERED else STYLE_ERROR
    if t.kind in (Event.AWAITING_APPROVAL, Event.REJECTED, Event.REFUSED):
        return STYLE_WARN
    return ""


def format_transitions(
    transitions: list[Transition], limits: Limits, *, plain: bool = False, width: int | None = None
) -> Table:
    """The transitions table, laid out for `width` cells (table_widths): the detail gets at
    least half the line at any width, and never less on a wider terminal. Below about twice
    what the other five columns need, the table keeps step, event and detail only (ms,
    budget, from → to go first: the event names the move). Each column has the width its
    widest possible value needs, whatever the rows hold, so the part of a run drawn after an
    approval prompt (or a resumption, in `runs show`) lines up with the part above. A cell
    breaks only between words, ids, numbers and a call's arguments (layout.wrap_cell)."""
    widths = table_widths(limits, width or PIPED_WIDTH, plain=plain)
    narrow = "table.transition" not in widths
    table = Table(
        box=box.SIMPLE if plain else box.ROUNDED,
        show_edge=not plain,
        header_style="" if plain else "bold",
        title=None,
        expand=False,
        pad_edge=not narrow,
    )
    console = Console(width=widths["table.detail"])  # measures cells only: never prints

    def column(name: str, **options) -> None:
        table.add_column(_t(name), width=widths[name], **options)

    column("table.step", justify="right")
    if not narrow:
        column("table.transition", no_wrap=True)
    column("table.event", overflow="fold")
    column("table.detail", overflow="fold")
    if not narrow:
        column("table.ms", justify="right", no_wrap=True)
        column("table.budget", no_wrap=True)
    for t in transitions:
        said = describe(t)  # in the UI language
        # Outside text: never Rich markup, never raw controls.
        event = wrap_cell(console, visible(said.event, one_line=True), widths["table.event"])
        event.stylize(event_style(t))
        said_detail = (
            call_detail(t, language(), widths["table.detail"]) if isinstance(t.payload, Called) else said.detail
        )
        detail = wrap_cell(console, visible(said_detail, one_line=True), widths["table.detail"])
        if narrow:
            table.add_row(str(t.step), event, detail)
        else:
            phases = Text(f"{_t(f'phase.{t.from_}')} → {_t(f'phase.{t.to}')}", style=STYLE_PHASE)
            table.add_row(str(t.step), phases, event, detail, f"{t.elapsed * 1000:.0f}", format_budget(t, limits))
    return table


FULL = ("table.step", "table.transition", "table.event", "table.ms", "table.budget")


def table_widths(limits: Limits, width: int, *, plain: bool) -> dict[str, int]:
    """Each column's width in a table `width` cells wide. With all six columns the detail
    has what the other five leave; it takes them only once that is at least half the line
    (about 180 columns in English). Below, step, event and detail: the event wraps at its
    spaces down to its longest word, so that the detail has half the line, and the detail
    grows no further than what six columns would give it, so that a wider terminal never
    gives it less."""
    steady = steady_widths(limits)
    full = sum(steady[name] for name in FULL) + overhead(6, plain=plain, pad_edge=True)
    if width - full >= full:
        return {name: steady[name] for name in FULL} | {"table.detail": width - full}
    others = steady["table.step"] + overhead(3, plain=plain, pad_edge=False)
    least = steady["table.event_word"]
    detail = min(full, max(-(-width // 2), width - others - steady["table.event"]), width - others - least)
    detail = max(detail, 10)  # a terminal narrower than any table: Rich folds what does not fit
    event = max(least, min(steady["table.event"], width - others - detail))
    return {"table.step": steady["table.step"], "table.event": event, "table.detail": detail}


def overhead(columns: int, *, plain: bool, pad_edge: bool) -> int:
    """The cells a table's borders and padding take: an edge on either side (a box drawn),
    a rule between columns, a space either side of each cell (bar the outer ones without pad_edge)."""
    return (0 if plain else 2) + columns - 1 + 2 * columns - (0 if pad_edge else 2)


def steady_widths(limits: Limits) -> dict[str, int]:
    """The cells each column but the detail needs for any row a run within `limits` can
    have: the widest event and phase pair in the UI language, the largest counts and times
    (a digit more than the limits, for a step number past them after a resumption or a time
    just past its limit). A refusal's code, a value from outside, may still be wider."""
    events = [_t(f"event.{kind}") for kind in (*FIXED_EVENTS, *CALL_EVENTS[:3])]
    events += [_t("event.proposed", count=limits.max_calls_per_step), *map(str, StopReason)]
    phases = [f"{_t(f'phase.{a}')} → {_t(f'phase.{b}')}" for a, b in PHASES.values()]
    budget = f"{limits.max_steps}/{limits.max_steps} {limits.max_tool_calls}/{limits.max_tool_calls} "
    budget += f"{limits.timeout:.1f}s"

    def widest(heading: str, texts: list[str], more: int = 0) -> int:
        return max(cell_len(_t(heading)), *(cell_len(text) + more for text in texts))

    return {
        "table.step": widest("table.step", [str(limits.max_steps)], 1),
        "table.transition": widest("table.transition", phases),
        "table.event": widest("table.event", events),
        "table.event_word": widest("table.event", [word for text in events for word in text.split()]),
        "table.ms": widest("table.ms", [f"{limits.timeout * 1000:.0f}"], 1),
        "table.budget": widest("table.budget", [budget], 1),
    }


CALL_EVENTS = (Event.EXECUTED, Event.APPROVED, Event.REJECTED, Event.REFUSED)
FIXED_EVENTS = (Event.STARTED, Event.RESUMED, Event.AWAITING_APPROVAL, Event.SIGNED_IN, Event.RETURNED)


def format_stop(state: RunState, *, elsewhere: bool = False) -> str:
    """Why the run stopped, in a sentence and its detail. `elsewhere`: a pause this operator
    may not approve (four eyes, or not one of the store's approvers) says that another must."""
    reason = state.stop_reason
    if reason is None or reason is StopReason.ANSWERED:
        return ""
    waits_for_another = elsewhere and reason is StopReason.AWAITING_APPROVAL
    sentence = _t("stop.awaiting_another" if waits_for_another else f"stop.{reason}")
    detail = stop_words(state.stop_message, state.stop_detail).rstrip(".")  # orderbot's own: in the UI language
    return _t("outcome.stop", sentence=sentence, detail=detail[:1].upper() + detail[1:]) if detail else sentence


def format_observed(state: RunState) -> list[str]:
    """Results gathered before a stop: the person still gets what was found."""
    return [
        f"{describe_call(c.name, c.arguments, 200)} → {summarize_result(c.result or {}, 200)}" for c in state.observed
    ]


def format_facts(facts: list[Fact]) -> list[str]:
    """The facts panel's lines: orderbot's own rendering of what the tools returned, whose
    order data is outside text (one line each, every control shown as an escape)."""
    return [visible(fact.line(language()), one_line=True) for fact in facts]


def format_claim(claim: Claim) -> str:
    """One finding of the claim check as a plain sentence."""
    observed = visible(claim.observed, one_line=True) if claim.observed else _t("claims.nothing")
    return _t(f"claims.{claim.kind}", order_id=claim.order_id, said=claim.said, observed=observed)


def json_document(
    result: RunResult,
    transitions: list[Transition],
    *,
    provider: str,
    model: str,
    limits: Limits,
    exit_code: int | None,
    trace: bool = False,
    facts: bool = True,
) -> dict:
    state = result.state
    doc = {
        "run_id": state.run_id,
        "stop_reason": str(state.stop_reason) if state.stop_reason else None,
        "stop_detail": state.stop_detail or None,
        "exit_code": exit_code,
        "answer": state.answer,
        "partial_answer": state.partial_answer,
        "question": state.question,
        "user": state.user,  # the customer the run is about
        "operator": result.record.operator if result.record is not None else None,  # who ran orderbot
        "provider": provider,
        "model": model,
        "limits": limits.model_dump(),
        "steps": state.steps,
        "tool_calls": state.tool_calls,
        "usage": None
        if state.input_tokens is None
        else {"input_tokens": state.input_tokens, "output_tokens": state.output_tokens},
        "calls": [asdict(c) for c in state.calls],
        "pending": [pending_document(p) for p in state.pending],
        "transitions": [t.as_dict() for t in transitions],
        "claims": [claim.as_dict() for claim in result.claims],
    }
    if facts:
        doc["facts"] = [fact.as_dict() for fact in result.facts]
    if trace:  # the --trace panels' content, one record per step
        doc["trace"] = trace_steps(transitions)
    return doc


def pending_document(pending: PendingCall) -> dict:
    """A call waiting for a person as --json gives it: its arguments an object, its time ISO
    8601 UTC as in every --json document (the record keeps the clock's float for expiry)."""
    return pending.model_dump() | {
        "arguments": arguments_value(pending.arguments),
        "requested_at": utc_iso(pending.requested_at),
    }


# ---- printing -------------------------------------------------------------------------


def print_checks(console: Console, result: RunResult, *, facts: bool = True) -> None:
    """Under the answer: what the tools returned (unless --no-facts), then each claim of the
    answer they do not support. Both are orderbot's words, never the model's."""
    lines = format_facts(result.facts) if facts else []
    if lines:
        console.print(Text(_t("facts.title"), style=STYLE_DIM))
        for line in lines:  # a long fact continues indented, so it reads as one item
            console.print(hanging(console, Text(line, style=STYLE_DIM)), soft_wrap=True)
    for claim in result.claims:
        console.print(Text(format_claim(claim), style=STYLE_WARN))


class TransitionView:
    """An engine observer: the table grows live in a terminal, and is printed whole
    at the end otherwise (so piped output is stable text)."""

    def __init__(self, console: Console, limits: Limits, *, enabled: bool = True) -> None:
        self.console = console
        self.limits = limits
        self.enabled = enabled
        self.transitions: list[Transition] = []
        self._live: Live | None = None
        self._live_from = 0  # rows before this stay on screen from before a pause
        # Asked once: Rich works it out from the environment and the file on every call.
        self._draws_live = enabled and console.is_terminal
        # The request in flight (spinner, clock, retry, streamed text): only a view that
        # draws live shows it, and only such a view wraps the model to feed it (watch).
        self._waiting = Waiting(console) if self._draws_live else None

    def __call__(self, transition: Transition, state: RunState) -> None:
        self.transitions.append(transition)
        if self._draws_live:
            self._start_live()
            self._live.refresh()

    def _start_live(self) -> None:
        if self._live is None:
            # Redrawn several times a second, so the waiting line's clock and spinner move.
            self._live = Live(
                console=self.console,
                get_renderable=self._screen,
                refresh_per_second=REFRESH_PER_SECOND,
                transient=False,
            )
            self._live.start()

    def _screen(self):
        table = self._table(self._live_from)
        waiting = self._waiting.renderable()
        return table if waiting is None else Group(table, waiting)

    def watch(self, model):
        """The model, wrapped so that a terminal shows a live waiting line under the table
        while each request is in flight, and the answer as it streams in (orderbot.ui.waiting).
        Only a view that draws live wraps: piped output, --json and --quiet get the model as it is."""
        return watch(model, self) if self._draws_live else model

    @contextmanager
    def waiting(self, seconds_left: float) -> Iterator[None]:
        self._waiting.begin(seconds_left)
        self._start_live()
        try:
            yield
        finally:
            self._waiting.end()
            if self._live is not None:
                self._live.refresh()

    def retrying(self, reason: str, delay: float, attempt: int, attempts: int) -> None:
        """A request's retry, as it happens (the model's on_retry): shown under the waiting line."""
        self._waiting.retrying(reason, delay, attempt, attempts)
        if self._live is not None:
            self._live.refresh()

    def streamed(self, piece: str) -> None:
        """A piece of the answer as it streams in (the model's on_text)."""
        if self._waiting.add_text(piece) and self._live is not None:
            self._live.refresh()

    def _table(self, start: int = 0) -> Table:
        console = self.console
        return format_transitions(
            self.transitions[start:], self.limits, plain=not console.is_terminal, width=console.width
        )

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the live display while the person is asked something."""
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._live_from = len(self.transitions)  # the stopped table stays printed: continue below it
        yield  # the next transition starts a new live table below the prompt

    def close(self) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            self._live.stop()
            self._live = None
        elif self.transitions and not self.console.is_terminal:
            self.console.print(self._table())


def print_header(console: Console, state: RunState, provider_text: str) -> None:
    who = state.user or _t("header.anonymous")
    header = _t("header.run", run_id=state.run_id, provider=provider_text, user=who)
    console.print(flow_dots(console, header, STYLE_DIM), soft_wrap=True)  # `user` never apart from who


def print_tokens(console: Console, state: RunState) -> None:
    """The footer's token count, when the provider reported one (the offline model does not)."""
    if state.input_tokens is not None:
        console.print(Text(_t("outcome.tokens", input=state.input_tokens, output=state.output_tokens), style=STYLE_DIM))


def print_answer_only(result: RunResult, *, elsewhere: bool = False) -> None:
    """`ask -q`: the answer alone on stdout, as a script reads it; a run that did not answer
    says why in one line on stderr (its sentence, stop reason and run id), nothing on stdout.
    `elsewhere`: as for format_stop."""
    state = result.state
    if state.stop_reason is StopReason.ANSWERED:
        sys.stdout.write(visible(state.answer or "") + "\n")
        return
    stop_line = _t("outcome.stop_line", reason=state.stop_reason, run_id=state.run_id)
    said = f"{format_stop(state, elsewhere=elsewhere)} · {stop_line}"
    print(_t("error.prefix", error=visible(said, one_line=True)), file=sys.stderr)


def print_outcome(
    console: Console, result: RunResult, *, resume_hint: str | None = None, facts: bool = True, elsewhere: bool = False
) -> None:
    """How the run ended, and the command that goes on from there (`resume_hint`, from
    orderbot.ui.presentation; `elsewhere`: one for another operator's desk, see format_stop)."""
    state = result.state
    if state.stop_reason is StopReason.ANSWERED:
        console.print(
            Panel(
                Text(visible(state.answer or "")),
                title=Text(_t("outcome.answer")),  # text, not markup: Rich would load its emoji table for it
                title_align="left",
                border_style=STYLE_OK,
                box=box.ROUNDED if console.is_terminal else box.ASCII,
            )
        )
        print_checks(console, result, facts=facts)
        print_tokens(console, state)
        return
    style = STYLE_WARN if state.stop_reason is StopReason.AWAITING_APPROVAL else STYLE_ERROR
    console.print(Text(format_stop(state, elsewhere=elsewhere), style=style))
    if state.partial_answer:  # what arrived before the cut, marked so nobody takes it for the answer
        console.print(
            Panel(
                Text(state.partial_answer + " …"),
                title=Text(_t("outcome.partial_answer")),
                title_align="left",
                border_style=STYLE_WARN,
                box=box.ROUNDED if console.is_terminal else box.ASCII,
            )
        )
    observed = format_observed(state)
    if observed:
        console.print(_t("outcome.observed"), markup=False)
        for line in observed:
            console.print(f"  {line}", markup=False)
    console.print(_t("outcome.stop_line", reason=state.stop_reason, run_id=state.run_id), markup=False)
    print_tokens(console, state)
    if resume_hint:
        console.print(Text(_t("outcome.to_approve_elsewhere" if elsewhere else "outcome.to_resume")))
        # A command to copy is one line, never wrapped (a terminal may fold it on screen, but a
        # copied line stays the whole command); what else may be done follows it where it fits.
        command, _, aside = resume_hint.partition(RESUME_ASIDE)
        line = f"  {command}"
        if aside and cell_len(line + RESUME_ASIDE + aside) <= console.width:
            line, aside = line + RESUME_ASIDE + aside, ""
        console.print(Text(line), soft_wrap=True)
        if aside:
            console.print(flow(console, [("", Text(f"  {aside}"))]), soft_wrap=True)


SUMMARY_LINES = 2  # a call's result in the table: what it is and its key fields, in this many lines
SHOWN_VALUE = 40  # characters of one string value in that summary


def call_detail(t: Transition, lang: str, width: int) -> str:
    """A call's row: the call, then its result summarised to fit SUMMARY_LINES lines of
    `width` (its first values, a list or an object by its size); --trace shows it whole."""
    payload = t.payload
    call = payload.call.line()
    if not payload.result.get("ok"):
        return f"{call} → {result_words(payload.result, lang)}"
    fields = summary_fields(payload.result.get("data"))
    console = Console(width=width)

    def said(shown: list[str]) -> str:
        more = "…" if len(shown) < len(fields) else ""
        return f"{call} → {_t('detail.call_ok', lang=lang, data=', '.join(shown) + more)}"

    shown: list[str] = []
    for field in fields:  # each that still fits, in order: a long one gives way to those after it
        if (
            len(wrap_cell(console, visible(said([*shown, field]), one_line=True), width).plain.splitlines())
            <= SUMMARY_LINES
        ):
            shown.append(field)
    return said(shown or fields[:1])


def summary_fields(data: object) -> list[str]:
    """The parts of a result's summary: an object's `key=value`s, its plain values first and
    a list or an object by its size after them; a list's size, then its items."""
    if isinstance(data, dict):
        ranked = sorted(enumerate(data.items()), key=lambda entry: summary_rank(*entry))
        return [f"{key}={summary_value(value)}" for _, (key, value) in ranked]
    if isinstance(data, list):
        return [counted(len(data), "item"), *(summary_value(item) for item in data)]
    return [summary_value(data)]


def summary_rank(index: int, entry: tuple[str, object]) -> tuple[int, int]:
    """What it is (the first value: an id) first, then its status, its other plain values,
    and a list or an object (by its size) last."""
    key, value = entry
    if isinstance(value, dict | list):
        return 3, index
    return (0 if index == 0 else 1 if key == "status" else 2), index


def summary_value(value: object) -> str:
    if isinstance(value, list):
        return f"[{counted(len(value), 'item')}]"
    if isinstance(value, dict):  # an order in a list, say: its first plain values
        plain = [f"{key}={summary_value(v)}" for key, v in value.items() if not isinstance(v, dict | list)]
        return "{" + ", ".join(plain[:2]) + ("…}" if len(value) > len(plain[:2]) else "}")
    return cut(to_json(value).decode(), SHOWN_VALUE) if isinstance(value, str) else to_json(value).decode()
