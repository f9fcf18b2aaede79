"""Everything a person sees: Rich views of transitions, answers and stops.

Pure `format_*` functions build strings and tables; the few functions that print take a
Console. Rich decides colour by itself: none when stdout is not a terminal or NO_COLOR is
set. Nothing here decides anything about a run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from pydantic_core import to_json
from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from orderbot.answers.claims import Claim
from orderbot.answers.facts import Fact
from orderbot.i18n import counted, language
from orderbot.i18n import t as _t
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import PHASES, Event, Phase, RunState, describe_call
from orderbot.loop.transitions import (
    Awaiting,
    Call,
    Called,
    Finished,
    Proposed,
    Request,
    Returned,
    SignIn,
    Started,
    Transition,
)
from orderbot.text import cut
from orderbot.ui.answer import format_stop
from orderbot.ui.console import PIPED_WIDTH
from orderbot.ui.describe import describe, result_words
from orderbot.ui.escape import visible
from orderbot.ui.facts import claim_words, fact_line
from orderbot.ui.layout import flow, flow_dots, hanging, pieces, wrap_cell
from orderbot.ui.presentation import RESUME_ASIDE
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK, STYLE_PHASE, STYLE_WARN
from orderbot.ui.waiting import REFRESH_PER_SECOND, Waiting, watch

if TYPE_CHECKING:
    from orderbot.runner import RunResult

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
    transitions: list[Transition],
    limits: Limits,
    *,
    plain: bool = False,
    width: int | None = None,
    widths: dict[str, int] | None = None,
) -> Table:
    """The transitions table, laid out for `width` cells (table_widths): every row shows its
    from → to at any width; the detail gets at least half the line. Columns are as wide as
    any run's rows need (column_needs), or `widths` (a part of a run drawn after an approval
    prompt keeps the columns of the part above, where its rows fit: TransitionView). A cell
    breaks only between words, ids, numbers and a call's arguments (layout.wrap_cell)."""
    said = [describe(t) for t in transitions]  # in the UI language
    widths = widths or table_widths(column_needs(transitions, limits), width or PIPED_WIDTH, plain=plain)
    stacked = "table.event" not in widths  # the event under its from → to, in one column
    table = Table(
        box=box.SIMPLE if plain else box.ROUNDED,
        show_edge=not plain,
        header_style="" if plain else "bold",
        title=None,
        expand=False,
        pad_edge=padded(len(widths), plain=plain),
    )
    console = Console(width=widths["table.detail"])  # measures cells only: never prints
    for name in widths:
        heading = Text(_t(name))
        if stacked and name == "table.transition":
            heading = Text(f"{_t(name)}\n{_t('table.event')}")
        numeric = name in ("table.step", "table.ms")
        table.add_column(heading, width=widths[name], justify="right" if numeric else "left", overflow="fold")
    for t, words in zip(transitions, said, strict=True):
        phases = phase_cell(t, widths["table.transition"])
        # Outside text: never Rich markup, never raw controls.
        event_width = widths["table.transition" if stacked else "table.event"]
        event = wrap_cell(console, visible(words.event, one_line=True), event_width)
        event.stylize(event_style(t))
        shown = call_detail(t, language(), widths["table.detail"]) if isinstance(t.payload, Called) else words.detail
        detail = wrap_cell(console, visible(shown, one_line=True), widths["table.detail"])
        cells = {"table.step": str(t.step), "table.transition": phases, "table.event": event, "table.detail": detail}
        if stacked:
            cells["table.transition"] = Text("\n").join([phases, event])
        cells |= {"table.ms": f"{t.elapsed * 1000:.0f}", "table.budget": format_budget(t, limits)}
        table.add_row(*(cells[name] for name in widths))
    return table


def phase_cell(t: Transition, width: int) -> Text:
    """`from → to`, broken after the arrow only when the pair is wider than its column."""
    source, target = _t(f"phase.{t.from_}"), _t(f"phase.{t.to}")
    if cell_len(f"{source} → {target}") <= width:
        return Text(f"{source} → {target}", style=STYLE_PHASE)
    return Text(f"{source} →\n{target}", style=STYLE_PHASE)


# The layouts of the transitions table, richest first. As the line gets shorter the ms column
# goes first, then the budget, then the event's own column: it goes under its from → to.
LAYOUTS = (
    ("table.step", "table.transition", "table.event", "table.detail", "table.ms", "table.budget"),
    ("table.step", "table.transition", "table.event", "table.detail", "table.budget"),
    ("table.step", "table.transition", "table.event", "table.detail"),
    ("table.step", "table.transition", "table.detail"),
)


class Need(NamedTuple):
    least: int  # the cells its widest unbreakable piece takes
    usual: int  # the cells that hold every value but the widest on one line
    most: int  # the cells its widest value takes on one line


def column_needs(transitions: list[Transition], limits: Limits) -> dict[str, Need]:
    """What each column but the detail needs, in the UI language: the step; the from → to of
    any move the engine makes (broken after its arrow at least) and the event of any kind
    (broken between its words at least), so that every run and both parts of one around an
    approval prompt get the same columns; a refusal's code, a value from outside, may be
    wider. For the numbers, what a run within `limits` can reach (a digit more than the
    limits, for a step past them after a resumption or a time just past its limit)."""
    moves = {*PHASES.values(), (Phase.ACT, Phase.FINISH), *((t.from_, t.to) for t in transitions)}  # Ctrl-C in act
    pairs = [(f"{_t(f'phase.{a}')} →", _t(f"phase.{b}")) for a, b in moves]
    events = [visible(describe(t).event, one_line=True) for t in [*possible_events(limits), *transitions]]
    steps = [str(t.step) for t in transitions] + [str(limits.max_steps)]
    budget = f"{limits.max_steps}/{limits.max_steps} {limits.max_tool_calls}/{limits.max_tool_calls} "
    budget += f"{limits.timeout:.1f}s"

    def fixed(heading: str, values: list[str], more: int = 0) -> Need:
        cells = max(cell_len(_t(heading)), *(cell_len(value) + more for value in values))
        return Need(cells, cells, cells)

    def flexible(heading: str, pieces_of: list[int], whole: list[int]) -> Need:
        words = [cell_len(word) for word in _t(heading).split()]
        widest = sorted(set(whole))
        usual = widest[-2] if len(widest) > 1 else widest[-1]
        return Need(max(*words, *pieces_of), max(*words, usual), max(cell_len(_t(heading)), widest[-1]))

    return {
        "table.step": fixed("table.step", steps),
        "table.transition": flexible(
            "table.transition",
            [max(cell_len(a), cell_len(b)) for a, b in pairs],
            [cell_len(f"{a} {b}") for a, b in pairs],
        ),
        "table.event": flexible(
            "table.event", [piece.cell_len for text in events for _, piece in pieces(text)], list(map(cell_len, events))
        ),
        "table.ms": fixed("table.ms", [f"{limits.timeout * 1000:.0f}"], 1),
        "table.budget": fixed("table.budget", [budget], 1),
    }


def possible_events(limits: Limits) -> list[Transition]:
    """A transition of each kind whose event is orderbot's own word (not a refusal's code),
    each stop among them, for the widths of the event column."""
    start = Started("", limits)
    call = Called(Call("", "", "{}"), "executed", {"ok": True})
    request = Request(0, 0, (), 0.0, None, (call.call,) * limits.max_calls_per_step, None)
    payloads = {
        Event.STARTED: [start], Event.RESUMED: [start], Event.PROPOSED: [Proposed(request)],
        Event.EXECUTED: [call], Event.APPROVED: [call], Event.REJECTED: [call], Event.AWAITING_APPROVAL: [Awaiting(())],
        Event.SIGNED_IN: [SignIn("", "")], Event.RETURNED: [Returned(0, 0)],
        Event.FINISHED: [Finished(reason, "") for reason in StopReason],
    }  # fmt: skip
    return [
        Transition(0, Phase.START, Phase.PLAN, kind, payload, 0.0, 0, 0, limits)
        for kind, each in payloads.items()
        for payload in each
    ]


def table_widths(needs: dict[str, Need], width: int, *, plain: bool) -> dict[str, int]:
    """Each column's width in a table `width` cells wide, in the order of the richest layout
    whose columns fit and leave the detail at least half the line. The ms and budget columns
    come only with every from → to and event on one line; without them a from → to may break
    after its arrow (the widest one), an event between its words, and in the narrowest
    layout the event goes under its from → to, that column giving up room down to its widest
    unbreakable piece before the detail has less than half. Room to spare widens from → to,
    then the event, to hold each value on one line; the rest is the detail's."""
    half = -(-width // 2)
    moves, event = needs["table.transition"], needs["table.event"]
    for columns in LAYOUTS:
        if "table.event" not in columns:  # the event under its from → to: one column for both
            flexible = {"table.transition": (max(moves.usual, event.least), max(moves.most, event.most))}
        elif len(columns) > 4:
            flexible = {"table.transition": (moves.most, moves.most), "table.event": (event.most, event.most)}
        else:
            flexible = {"table.transition": (moves.usual, moves.most), "table.event": (event.least, event.most)}
        widths = {name: needs[name].most for name in columns if name not in flexible and name != "table.detail"}
        widths |= {name: floor for name, (floor, _) in flexible.items()}
        spare = width - half - overhead(len(columns), plain=plain) - sum(widths.values())
        if spare >= 0 or columns is LAYOUTS[-1]:
            for name, (floor, most) in flexible.items():
                if 0 <= most - floor <= spare:  # a cell or two more would hold nothing more on one line
                    widths[name], spare = most, spare - (most - floor)
            if spare < 0:  # the narrowest layout on a short line: its shared column gives way first
                least = max(moves.least, event.least)
                widths["table.transition"] = max(least, widths["table.transition"] + spare)
            detail = width - overhead(len(columns), plain=plain) - sum(widths.values())
            return {name: widths.get(name, max(10, detail)) for name in columns}
    raise AssertionError("the last layout always returns")  # pragma: no cover


def widths_hold(widths: dict[str, int], needs: dict[str, Need]) -> bool:
    """Whether rows of these `needs` fit columns of these `widths`, each piece whole."""
    shared = "table.event" not in widths  # the event under its from → to
    held = [needs[name].least <= cells for name, cells in widths.items() if name != "table.detail"]
    return all(held) and (not shared or needs["table.event"].least <= widths["table.transition"])


def padded(columns: int, *, plain: bool) -> bool:
    """Whether a table pads its outer edges: a drawn one does, but for the narrowest layout
    (its detail needs every cell), and a plain one never (its lines start at the margin)."""
    return not plain and columns > len(LAYOUTS[-1])


def overhead(columns: int, *, plain: bool) -> int:
    """The cells a table's borders and padding take: a rule between columns and a space
    either side of each cell (but the outer ones, unless padded); a drawn table has its edges."""
    edges = 0 if plain else 2
    return edges + columns - 1 + 2 * columns - (0 if padded(columns, plain=plain) else 2)


def format_observed(state: RunState) -> list[str]:
    """Results gathered before a stop: the person still gets what was found."""
    lang = language()
    return [f"{describe_call(c.name, c.arguments, 200)} → {result_words(c.result or {}, lang)}" for c in state.observed]


def format_facts(facts: list[Fact]) -> list[str]:
    """The facts panel's lines: orderbot's own rendering of what the tools returned, whose
    order data is outside text (one line each, every control shown as an escape)."""
    return [visible(fact_line(fact), one_line=True) for fact in facts]


def format_claim(claim: Claim, facts: list[Fact] = ()) -> str:
    """One finding of the claim check as a plain sentence, beside what the run learnt of its order."""
    about = next((fact for fact in facts if fact.order_id.upper() == claim.order_id.upper()), None)
    return claim_words(claim, about)


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
        console.print(Text(format_claim(claim, result.facts), style=STYLE_WARN))


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
        self._widths_drawn: dict[str, int] | None = None  # the columns of the table last drawn
        self._widths_above: dict[str, int] | None = None  # those of the part printed before a pause
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
        console, rows = self.console, self.transitions[start:]
        plain = not console.is_terminal
        widths = self._widths_above  # a part after a pause keeps the columns above, where its rows fit
        if widths is None or not widths_hold(widths, column_needs(rows, self.limits)):
            widths = table_widths(column_needs(rows, self.limits), console.width, plain=plain)
        self._widths_drawn = widths
        return format_transitions(rows, self.limits, plain=plain, widths=widths)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the live display while the person is asked something."""
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._live_from = len(self.transitions)  # the stopped table stays printed: continue below it
            self._widths_above = self._widths_drawn
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
        for line in observed:  # broken between values, never inside one; a continued line indented
            parts = pieces(visible(line, one_line=True), console.width - 4)
            parts[0] = ("", Text("  ") + parts[0][1])
            console.print(flow(console, parts, indent=4), soft_wrap=True)
    console.print(_t("outcome.stop_line", reason=state.stop_reason, run_id=state.run_id), markup=False)
    print_tokens(console, state)
    if resume_hint:
        console.print(Text(_t("outcome.to_approve_elsewhere" if elsewhere else "outcome.to_resume")))
        # A command to copy is never folded inside an argument: one line where it fits, else
        # continued as a shell continues a line (` \`), so that it still copies and runs whole;
        # what else may be done follows it where it fits.
        command, _, aside = resume_hint.partition(RESUME_ASIDE)
        line = f"  {command}"
        if aside and cell_len(line + RESUME_ASIDE + aside) <= console.width:
            line, aside = line + RESUME_ASIDE + aside, ""
        shown = line if cell_len(line) <= console.width else continued(command, console.width)
        console.print(Text(shown), soft_wrap=True)  # an argument longer than the line stays whole
        if aside:
            console.print(flow(console, [("", Text(f"  {aside}"))]), soft_wrap=True)


def continued(command: str, width: int) -> str:
    """A shell command in lines of `width` cells broken between its arguments (a flag stays
    with its value), each line but the last ending in ` \\`, as a shell continues one."""
    words = shlex.split(command)
    groups: list[str] = []
    for word in words:
        quoted = shlex.quote(word)
        if groups and groups[-1].startswith("-") and " " not in groups[-1] and not word.startswith("-"):
            groups[-1] += f" {quoted}"
        else:
            groups.append(quoted)
    lines = [f"  {groups[0]}"]
    for group in groups[1:]:
        if cell_len(f"{lines[-1]} {group} \\") <= width:
            lines[-1] += f" {group}"
        else:
            lines[-1] += " \\"
            lines.append(f"      {group}")
    return "\n".join(lines)


SUMMARY_LINES = 2  # a call's result in the table: what it is and its key fields, in this many lines
SHOWN_VALUE = 40  # characters of one string value in that summary


def call_detail(t: Transition, lang: str, width: int) -> str:
    """A call's row: the call, then its result summarised to fit SUMMARY_LINES lines of
    `width` (its first values, a list or an object by its size), or one line more than the
    call itself takes in a narrow column; --trace shows it whole."""
    payload = t.payload
    call = payload.call.line()
    if not payload.result.get("ok"):
        return f"{call} → {result_words(payload.result, lang)}"
    fields = summary_fields(payload.result.get("data"))
    console = Console(width=width)

    def lines(text: str) -> int:
        return len(wrap_cell(console, visible(text, one_line=True), width).plain.splitlines())

    def said(shown: list[str]) -> str:
        more = "…" if len(shown) < len(fields) else ""
        return f"{call} → {_t('detail.call_ok', lang=lang, data=', '.join(shown) + more)}"

    room = max(SUMMARY_LINES, lines(said([])) + 1)
    shown: list[str] = []
    for field in fields:  # each that still fits, in order: a long one gives way to those after it
        if lines(said([*shown, field])) <= room:
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
