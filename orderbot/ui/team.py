"""What `orderbot approvals` and `orderbot audit` show: the team's queue, the audit log, and
what a check of the log found. Pure: each function returns a Rich table or lines of text;
the commands print them through the safe console (orderbot.ui.console.make_console).

Everything in these tables came from a run store, which other people and programs write:
each cell is built as `Text(visible(value, one_line=True))`, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orderbot.errors import Phrase
from orderbot.i18n import counted, say, t
from orderbot.loop.state import describe_call
from orderbot.runs.audit import EVENTS, AuditCheck, AuditEntry
from orderbot.runs.base import Waiting
from orderbot.runs.tokens import Token
from orderbot.text import one_line
from orderbot.ui.describe import action_words
from orderbot.ui.escape import visible
from orderbot.ui.layout import wrap_cell
from orderbot.ui.styles import STYLE_ERROR, STYLE_OK, STYLE_WARN

WHOLE = 1 << 16  # a call is shown whole (a record's bounds keep it far shorter)
EVENT_STYLES = {"executed": STYLE_OK, "approved": STYLE_OK, "rejected": STYLE_WARN, "failed": STYLE_ERROR}


def cell(value: object, limit: int | None = None) -> Text:
    text = "-" if value is None or value == "" else str(value)
    return Text(visible(one_line(text, limit) if limit else text, one_line=True))


def minute(stamp: str) -> str:
    """2026-12-01T10:04:05Z as a table shows it: 2026-12-01 10:04."""
    return stamp.replace("T", " ")[:16]


def _table(plain: bool) -> Table:
    return Table(
        box=box.SIMPLE if plain else box.ROUNDED,
        show_edge=not plain,
        pad_edge=not plain,
        header_style="" if plain else "bold",
    )


STACKED_BELOW = 120  # columns: narrower, a terminal's rows take a few lines so ids and times stay whole


AUDIT_STACKED_BELOW = 150  # the audit table has eight columns: under this its call would get a sliver


def _stacked(plain: bool, width: int | None, below: int = STACKED_BELOW) -> bool:
    """Whether rows take several lines: in a narrow terminal; piped, a row stays one line to grep."""
    return not plain and width is not None and width < below


def _lines(*cells: Text) -> Text:
    return Text("\n").join(cells)


def format_waiting(rows: Iterable[Waiting], *, plain: bool, expired_before: str, width: int | None = None) -> Table:
    """The approval queue, oldest request first; one asked before `expired_before` (an ISO
    time) can no longer be approved and says so. In a narrow terminal the time waits under
    the run id and the requester under the customer, so the action keeps its room."""
    table = _table(plain)
    stacked = _stacked(plain, width)
    if stacked:
        table.add_column(f"{t('table.run_id')}\n{t('table.waiting_since')}", no_wrap=True)
        table.add_column(f"{t('table.customer')}\n{t('table.requested_by')}", no_wrap=True)
        table.add_column(t("table.action"), ratio=1, overflow="fold")
    else:
        for name in ("table.run_id", "table.customer", "table.action", "table.requested_by", "table.waiting_since"):
            table.add_column(t(name), no_wrap=name != "table.action", overflow="fold")
    for row in rows:
        since = cell(minute(row.requested_at))
        if row.requested_at < expired_before:
            since = Text.assemble(since, " ", Text(t("approvals.expired"), style=STYLE_WARN))
        action = cell(action_words(row.description))  # whole: what is approved is never cut; in the reader's words
        if stacked:
            table.add_row(_lines(cell(row.run_id), since), _lines(cell(row.customer), cell(row.requested_by)), action)
        else:
            table.add_row(row.run_id, cell(row.customer), action, cell(row.requested_by), since)
    return table


def format_tokens(rows: Iterable[Token], *, plain: bool, now: float) -> Table:
    """The bearer tokens of orderbot mcp, oldest first: whom each names and its dates, never
    the secret (which the store does not have)."""
    table = _table(plain)
    for name in ("table.token", "table.names", "table.made_by", "table.made", "table.expires", "table.state"):
        table.add_column(t(name), no_wrap=True)
    for token in rows:
        if token.customer is not None:
            names = t("tokens.customer", customer=visible(token.customer, one_line=True))
        else:
            names = t("tokens.operator", operator=visible(token.operator or "", one_line=True))
        state = token.state(now)
        shown = Text(t(f"tokens.state_{state}"), style=STYLE_OK if state == "active" else STYLE_WARN)
        expires = cell(minute(token.expires_at) if token.expires_at else None)
        table.add_row(
            cell(token.id), Text(names), cell(token.created_by), cell(minute(token.created_at)), expires, shown
        )
    return table


def _call_lines(tool: str, arguments: str, width: int = WHOLE) -> Text:
    """A call as the audit table shows it: its tool, then each argument on a line of its own
    (`order_id="ORD-1002"`), so a narrow column breaks between arguments, not inside an id;
    an argument wider than `width` goes on after its `=`, its value whole on the next line.
    Arguments that are not a JSON object are shown whole after the tool, as describe_call does."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        return _wrapped(describe_call(tool, arguments, WHOLE), width)
    shown = [f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in parsed.items()]
    return _lines(_wrapped(tool, width), *(_wrapped(line, width - 2, first="  ", rest="    ") for line in shown))


def _wrapped(value: str, width: int, *, first: str = "", rest: str = "") -> Text:
    """`value` shown safely in lines of `width` cells, broken between words and values only
    (layout.wrap_cell); `first` and `rest` begin its first and its other lines."""
    shown = visible(value, one_line=True)
    if width >= WHOLE:
        return Text(first + shown)
    lines = wrap_cell(Console(width=max(width, 1)), shown, max(width, 1)).plain.split("\n")
    return Text("\n".join((rest if index else first) + line for index, line in enumerate(lines)))


def format_audit(entries: Iterable[AuditEntry], *, plain: bool, width: int | None = None) -> Table:
    """Audit entries, oldest first: what happened to which call, for whom, by whom. In a
    narrow terminal an entry takes a few lines (its time and run; its number and event, its
    customer, who asked and who decided), so that every id and time stays whole and the call
    has the rest of the line, broken between its arguments."""
    entries = list(entries)
    table = _table(plain)
    stacked = _stacked(plain, width, below=AUDIT_STACKED_BELOW)
    call_cells = WHOLE
    if stacked:
        times = [t("table.time"), t("table.run_id")]
        people = [f"# {t('table.event')}", t("table.customer"), t("table.requested_by"), t("table.decided_by")]
        firsts = [len("2026-12-01 10:04:05"), *(cell_len(e.run_id) for e in entries), *map(cell_len, times)]
        seconds = [*map(cell_len, people)]
        for e in entries:
            seconds += [cell_len(f"{e.seq} {audit_event(e.event)}"), *(cell_len(visible(v or "-", one_line=True))
                        for v in (e.customer, e.requested_by, e.decided_by))]  # fmt: skip
        call_cells = (width or WHOLE) - max(firsts) - max(seconds) - 10  # three columns: edges, rules, padding
        narrow = call_cells < len('  payment_method_id="paypal_0000000"')  # the second column goes under the first
        if narrow:
            call_cells = (width or WHOLE) - max(*firsts, *seconds) - 7
            table.add_column("\n".join([*times, *people]), no_wrap=True)
        else:
            table.add_column("\n".join(times), no_wrap=True)
            table.add_column("\n".join(people), no_wrap=True)
        table.add_column(t("table.call"), ratio=1, overflow="fold")
        call_cells = max(1, call_cells)
    else:
        for name, justify in (
            ("table.seq", "right"),
            ("table.time", "left"),
            ("table.event", "left"),
            ("table.run_id", "left"),
            ("table.call", "left"),
            ("table.customer", "left"),
            ("table.requested_by", "left"),
            ("table.decided_by", "left"),
        ):
            table.add_column(t(name), justify=justify, no_wrap=name != "table.call", overflow="fold")
    for entry in entries:
        # The call and a rejection's reason whole, each wrapped between words: what was decided.
        shown = _call_lines(entry.tool, entry.arguments, call_cells)
        if entry.reason:
            shown = _lines(shown, _wrapped(t("audit.reason", reason=entry.reason), call_cells))
        style = EVENT_STYLES.get(entry.event, "")
        event = Text(visible(audit_event(entry.event), one_line=True), style=style)
        at = cell(entry.at.replace("T", " ")[:19])
        if stacked:
            when = _lines(at, cell(entry.run_id))
            who = _lines(
                Text.assemble(f"{entry.seq} ", event),
                *map(cell, (entry.customer, entry.requested_by, entry.decided_by)),
            )
            table.add_row(*([_lines(when, who)] if narrow else [when, who]), shown)
        else:
            table.add_row(
                str(entry.seq), at, event, cell(entry.run_id), shown,
                cell(entry.customer), cell(entry.requested_by), cell(entry.decided_by),
            )  # fmt: skip
    return table


def audit_event(event: str) -> str:
    """An audit entry's event in the UI language (the log and --json keep the English value)."""
    return t(f"audit.event_{event}") if event in EVENTS else event


def check_lines(check: AuditCheck, extra: list, limit: Phrase | None = None) -> list[Text]:
    """What `audit --verify` prints: intact with the head to note down (and `limit`, what the
    store leaves it unable to rule out), or every problem."""
    problems = [*check.problems, *extra]
    if not problems:
        if check.keyed_from is not None:
            said = t(
                "audit.intact_keyed", entries=counted(check.entries, "entry"), first=check.keyed_from, head=check.head
            )
        else:
            said = t("audit.intact", entries=counted(check.entries, "entry"), head=check.head)
        return [Text(said, style=STYLE_OK)] + ([Text(visible(say(limit)))] if limit is not None else [])
    lines = [
        Text(
            t(
                "audit.broken",
                entries=counted(check.entries, "entry"),
                problems=counted(len(problems) + check.more, "problem"),
            ),
            style=STYLE_ERROR,
        )
    ]
    lines += [Text("  " + visible(say(p), one_line=True)) for p in problems]
    if check.more:
        lines.append(Text("  " + t("audit.more_problems", count=check.more)))
    return lines
