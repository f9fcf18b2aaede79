"""`orderbot audit`: the audit log of the run store, filtered; `--verify` walks its chain
(with the audit key when the settings give one), checks the log against the store's queue
both ways, and with `--head HASH` that a head noted earlier is still in the log.

Exit 0, and with --verify exit 0 only when every entry is as it was written and none is
missing; exit 1 when --verify finds an entry changed, added or removed.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from datetime import UTC, datetime
from typing import Annotated

import typer

from orderbot.commands import COMMAND_HELP
from orderbot.commands.common import Json, Runs, StateDir, errors_to_exit_codes, open_store
from orderbot.errors import UsageError
from orderbot.i18n import say, t
from orderbot.runs.audit import matches, verify
from orderbot.settings import load_settings
from orderbot.ui.console import make_console
from orderbot.ui.escape import json_text  # --json: valid JSON, no raw controls
from orderbot.ui.layout import print_whole
from orderbot.ui.team import check_lines, format_audit

HELP = COMMAND_HELP["audit"]
EPILOG = (
    "Examples: orderbot audit --customer C001 · orderbot audit --operator desk2 --since 2026-12-01 · "
    "orderbot audit --verify --head HASH   (exit 1: an entry was changed, added or removed)"
)
BROKEN_EXIT = 1
HEAD = re.compile(r"(hmac:)?[0-9a-f]{64}")


def _option(flag: str, what: str):
    return Annotated[str | None, typer.Option(flag, help=what, show_default=False)]


Customer = _option("--customer", "Only entries about this customer.")
Operator = _option("--operator", "Only entries this operator requested or decided.")
ToolName = _option("--tool", "Only entries of this tool (e.g. cancel_order).")
Since = _option("--since", "Only entries at or after this UTC date or time (2026-12-01, 2026-12-01T10:00).")
Until = _option("--until", "Only entries before this UTC date or time.")


def audit(
    customer: Customer = None,
    operator: Operator = None,
    tool: ToolName = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many (the newest).")] = 50,
    check: Annotated[
        bool,
        typer.Option("--verify", help="Check that no entry was changed, added or removed (exit 1 if one was)."),
    ] = False,
    head: Annotated[
        str | None,
        typer.Option("--head", help="With --verify: a head it printed earlier, which must still be in the log."),
    ] = None,
    json_out: Json = False,
    runs: Runs = None,
    state_dir: StateDir = None,
) -> None:
    with errors_to_exit_codes():
        since_at, until_at = _stamp("--since", since), _stamp("--until", until)
        noted = _head(head, check)
        store = open_store(load_settings(runs=runs, state_dir=state_dir))
        try:
            if check:
                _verify(store, json_out, noted)
            entries = deque(
                (
                    e
                    for e in store.audit_entries()
                    if not isinstance(e, str)
                    and matches(e, customer=customer, operator=operator, tool=tool, since=since_at, until=until_at)
                ),
                maxlen=limit,
            )
        finally:
            store.close()
        if json_out:
            sys.stdout.write(json_text([e.as_dict() for e in entries]) + "\n")
            return
        console = make_console()
        if not entries:
            filtered = any(v is not None for v in (customer, operator, tool, since, until))
            console.print(t("audit.none") if filtered else t("audit.empty", where=store.where), markup=False)
            return
        print_whole(console, format_audit(entries, plain=not console.is_terminal, width=console.width))


def _verify(store, json_out: bool, head: str | None) -> None:
    keyed = store.keyed_links() if store.audit_key is None else None  # the store's own check, without a key here
    found = verify(store.audit_entries(), key=store.audit_key, keyed_links=keyed, head=head)
    extra = store.audit_problems()
    intact = found.intact and not extra
    if json_out:
        problems = [say(p, "en") for p in (*found.problems, *extra)]  # untranslated: --json is English
        doc = {
            "intact": intact,
            "entries": found.entries,
            "head": found.head,
            "keyed_from": found.keyed_from,
            "problems": problems,
        }
        sys.stdout.write(json_text(doc) + "\n")
    else:
        console = make_console()
        for line in check_lines(found, extra, store.verify_limit()):
            console.print(line, soft_wrap=True)
    raise typer.Exit(0 if intact else BROKEN_EXIT)


def _head(value: str | None, check: bool) -> str | None:
    """A --head value as --verify prints heads (lower-case hex, `hmac:` for a keyed one)."""
    if value is None:
        return None
    if not check:
        raise UsageError(t("audit.head_needs_verify"))
    head = value.strip().lower()
    if not HEAD.fullmatch(head):
        raise UsageError(t("audit.bad_head", value=value[:80]))
    return head


def _stamp(flag: str, value: str | None) -> str | None:
    """A --since/--until value as the log spells times (UTC, milliseconds); naive is UTC."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(t("audit.bad_time", flag=flag, value=value[:40])) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


app = typer.Typer(rich_markup_mode="rich", add_completion=False)
app.command("audit", help=HELP, epilog=EPILOG)(audit)
