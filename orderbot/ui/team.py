"""What `orderbot approvals` and `orderbot audit` show: the team's queue, the audit log, and
what a check of the log found. Pure: each function returns a Rich table or lines of text;
the commands print them through the safe console (orderbot.ui.render.make_console).

Everything in these tables came from a run store, which other people and programs write:
each cell is built as `Text(visible(value, one_line=True))`, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich import box
from rich.table import Table
from rich.text import Text

from orderbot.i18n import counted, t
from orderbot.loop.state import describe_call
from orderbot.runs.audit import EVENTS, AuditCheck, AuditEntry
from orderbot.runs.base import Waiting
from orderbot.text import one_line
from orderbot.ui.escape import visible
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
        action = cell(row.description)  # whole: what is approved is never cut
        if stacked:
            table.add_row(_lines(cell(row.run_id), since), _lines(cell(row.customer), cell(row.requested_by)), action)
        else:
            table.add_row(row.run_id, cell(row.customer), action, cell(row.requested_by), since)
    return table


def _call_lines(tool: str, arguments: str) -> Text:
    """A call as the audit table shows it: its tool, then each argument on a line of its own
    (`order_id="ORD-1002"`), so a narrow column breaks between arguments, not inside an id.
    Arguments that are not a JSON object are shown whole after the tool, as describe_call does."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        return cell(describe_call(tool, arguments, WHOLE))
    shown = [f"  {key}={json.dumps(value, ensure_ascii=False)}" for key, value in parsed.items()]
    return _lines(cell(tool), *(cell(line) for line in shown))


def format_audit(entries: Iterable[AuditEntry], *, plain: bool, width: int | None = None) -> Table:
    """Audit entries, oldest first: what happened to which call, for whom, by whom. In a
    narrow terminal an entry takes three lines (its number, time and run; its event and
    customer; who asked and who decided), so that every id and time stays whole."""
    table = _table(plain)
    stacked = _stacked(plain, width, below=AUDIT_STACKED_BELOW)
    if stacked:
        table.add_column(f"#\n{t('table.time')}\n{t('table.run_id')}", no_wrap=True)
        table.add_column(f"{t('table.event')}\n{t('table.customer')}", no_wrap=True)
        table.add_column(f"{t('table.requested_by')}\n{t('table.decided_by')}", no_wrap=True)
        table.add_column(t("table.call"), ratio=1, overflow="fold")
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
        # The call and a rejection's reason whole, each wrapped at its spaces: what was decided.
        shown = _call_lines(entry.tool, entry.arguments)
        if entry.reason:
            shown = _lines(shown, Text(t("audit.reason", reason=visible(entry.reason, one_line=True))))
        event = Text(visible(audit_event(entry.event), one_line=True), style=EVENT_STYLES.get(entry.event, ""))
        at = cell(entry.at.replace("T", " ")[:19])
        if stacked:
            table.add_row(
                _lines(Text(str(entry.seq)), at, cell(entry.run_id)),
                _lines(event, cell(entry.customer)),
                _lines(cell(entry.requested_by), cell(entry.decided_by)),
                shown,
            )
        else:
            table.add_row(
                str(entry.seq), at, event, cell(entry.run_id), shown,
                cell(entry.customer), cell(entry.requested_by), cell(entry.decided_by),
            )  # fmt: skip
    return table


def audit_event(event: str) -> str:
    """An audit entry's event in the UI language (the log and --json keep the English value)."""
    return t(f"audit.event_{event}") if event in EVENTS else event


def check_lines(check: AuditCheck, extra: list) -> list[Text]:
    """What `audit --verify` prints: intact with the head to note down, or every problem."""
    problems = [*check.problems, *extra]
    if not problems:
        if check.keyed_from is not None:
            said = t(
                "audit.intact_keyed", entries=counted(check.entries, "entry"), first=check.keyed_from, head=check.head
            )
        else:
            said = t("audit.intact", entries=counted(check.entries, "entry"), head=check.head)
        return [Text(said, style=STYLE_OK)]
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
    lines += [Text("  " + visible(p.text(), one_line=True)) for p in problems]
    if check.more:
        lines.append(Text("  " + t("audit.more_problems", count=check.more)))
    return lines
