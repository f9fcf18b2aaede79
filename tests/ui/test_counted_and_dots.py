"""Small things a person reads: a ` · ` list broken between its parts keeps each `·` on the
line it ends, inside the width (never wrapped onto a line of its own); a count agrees with
its noun (`1 recorded model turn`, `1 problem in 3 entries`)."""

from __future__ import annotations

import pytest
from clikit import cli
from rich.cells import cell_len
from rich.console import Console
from runkit import only_run

from orderbot.i18n import set_language
from orderbot.runs.audit import AuditCheck, Problem
from orderbot.ui.layout import flow_dots
from orderbot.ui.team import check_lines

HEADERS = (
    "orderbot eval · eval_suite.json · model: offline (built-in planner, no network) · orders: sample_orders.json",
    "step 2 · 1/6 calls · 3.2s · user noah_brown_6181 · model: offline (built-in planner, no network)",
    "orderbot eval · eval_suite.json · 模型：offline（内置规划器，不联网） · 订单：sample_orders.json",
)


@pytest.mark.parametrize("header", HEADERS)
def test_a_dotted_line_keeps_each_dot_within_the_width(header):
    console = Console(width=200)
    for width in range(40, 121):
        lines = flow_dots(console, header, width=width).plain.split("\n")
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        assert not [line for line in lines if line.strip() in ("·", "")], (width, lines)


def test_the_replay_header_counts_one_turn_in_the_singular(orders_file):
    cli("ask", "--orders", str(orders_file), "--max-steps", "1", "查询 ORD-1001")
    header = cli("replay", only_run()).output
    assert " 1 recorded model turn " in " ".join(header.split()) and "turns" not in header, header


@pytest.mark.parametrize(("lang", "said"), [("en", "1 problem in 1 entry."), ("zh", "1 条中发现 1 个问题。")])
def test_audit_counts_agree_with_their_nouns(lang, said):
    set_language(lang)
    try:
        check = AuditCheck(entries=1, head="h", problems=(Problem("audit.broken_link", {"seq": 1}),))
        assert check_lines(check, [])[0].plain.endswith(said), check_lines(check, [])[0].plain
        intact = check_lines(AuditCheck(entries=1, head="h", problems=()), [])[0].plain
        assert ("1 entry," if lang == "en" else "共 1 条，") in intact, intact
    finally:
        set_language(None)
