"""80 columns, every command: in a pseudo-terminal of 80x24, replayed on a pyte screen, every
line fits, every table is closed (its right border drawn), and no word is broken across
lines, in English and in Chinese.

A word is broken when the end of one line and the start of the next (or of the same table
cell on the next line) join into a word that the same output, printed 250 columns wide,
holds whole.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pexpect
import pyte
import pytest
from clikit import cli
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal
from rich.cells import cell_len

from orderbot.i18n import t

pytestmark = pytest.mark.slow  # every command in a terminal at 80 columns

LANGS = {"en": "C.UTF-8", "zh": "zh_CN.UTF-8"}
WORD = re.compile(r"[A-Za-z0-9_]+")
LEFT, RIGHT = "│╭├╰", "│╮┤╯"
# A run id, a time or an order id that ends in an ellipsis: the one thing a person copies, cut.
CUT_SHORT = re.compile(r"\d{6}-\d{6}-[0-9a-f]{0,3}…|\d{4}-\d\d-\d\d \d\d:\d?…|ORD-\d{0,3}…")


def environment(state: Path, lang: str) -> dict:
    return {**os.environ, "NO_COLOR": "1", "TERM": "xterm", "ORDERBOT_STATE_DIR": str(state), "LANG": LANGS[lang]}


def screen_of(output: str, columns: int = 80) -> list[str]:
    """What the person sees: the output replayed on a screen `columns` wide (taller than 24
    rows only so that nothing scrolls away before it is read)."""
    screen = pyte.Screen(columns, 400)
    pyte.Stream(screen).feed(output if "\r\n" in output else output.replace("\n", "\r\n"))
    return [line.rstrip() for line in screen.display if line.strip()]


def terminal(*args: str, state: Path, lang: str = "en", answers: tuple[str, ...] = ()) -> list[str]:
    """`orderbot ARGS` in an 80x24 pseudo-terminal; each of `answers` is typed at a [y/N]."""
    child = orderbot_in_a_terminal(list(args), env=environment(state, lang), dimensions=(24, 80))
    for answer in answers:
        child.expect_exact("[y/N]")
        child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    return screen_of(child.before)


def wide(*args: str, state: Path, lang: str = "en") -> str:
    """The same command piped 250 columns wide: every word whole."""
    env = {"ORDERBOT_STATE_DIR": str(state), "COLUMNS": "250", "LANG": LANGS[lang], "ORDERBOT_LANG": lang}
    return cli(*args, env=env).output


def cells(line: str) -> list[str]:
    return re.split(r"│", line) if line.startswith("│") else [line]


def broken_words(lines: list[str], vocabulary: set[str], width: int) -> list[str]:
    found = []
    for above, below in zip(lines, lines[1:], strict=False):
        top, bottom = cells(above), cells(below)
        if len(top) != len(bottom):
            pairs = [(above, below)]
        elif len(top) > 2 and not bottom[1].strip():  # the row goes on: each cell may continue
            pairs = list(zip(top, bottom, strict=True))
        else:  # a new row, or not a table
            pairs = [] if len(top) > 2 else [(above, below)]
        for end, start in pairs:
            last, head = re.search(r"[A-Za-z0-9_]+$", end.rstrip()), WORD.match(start.lstrip())
            # A run of text longer than the line (a long path) cannot but be folded.
            room = cell_len(start) if len(top) > 2 else width - (len(start) - len(start.lstrip()))
            longer = not start.strip() or cell_len(end.split()[-1] + start.split()[0]) > room
            if last and head and not longer and last.group() + head.group() in vocabulary:
                found.append(f"{last.group()!r} / {head.group()!r} in {above!r} / {below!r}")
    return found


def check(lines: list[str], whole: str, width: int = 80) -> None:
    too_wide = [line for line in lines if cell_len(line) > width]
    assert not too_wide, "\n".join(too_wide)
    open_rows = [line for line in lines if line[:1] in LEFT and line[-1:] not in RIGHT]
    assert not open_rows, "a table without its right border:\n" + "\n".join(lines)
    cut_ids = [line for line in lines if CUT_SHORT.search(line)]
    assert not cut_ids, "a run id, an order id or a time cut short:\n" + "\n".join(lines)
    headers = [line for i, line in enumerate(lines) if line.startswith("│") and any(
        below.startswith("├") for below in lines[i + 1 : i + 4])]  # fmt: skip
    assert not [line for line in headers if "…" in line], "a heading cut short:\n" + "\n".join(lines)
    broken = broken_words(lines, set(WORD.findall(whole)), width)
    assert not broken, "\n".join(broken) + "\n\n" + "\n".join(lines)


@pytest.fixture
def shop(tmp_path: Path, orders_file: Path, monkeypatch) -> dict:
    """A state directory with a few runs: answered, paused for approval, stopped at a limit."""
    state = tmp_path / "state"
    env = {"ORDERBOT_STATE_DIR": str(state), "ORDERBOT_ORDERS": str(orders_file), "ORDERBOT_USER": "C001"}
    for question, extra in (
        ("查询 ORD-1001 和 ORD-1002 的详情", []),
        ("please cancel order ORD-1002 because I changed my mind about buying it", []),
        ("ORD-1013 的详情", ["--max-steps", "1"]),
    ):
        cli("ask", *extra, question, env=env)
    paused = next(r for r in json.loads(cli("runs", "--json", env=env).stdout)
                  if r["status"] == "awaiting_approval")  # fmt: skip
    monkeypatch.setenv("ORDERBOT_ORDERS", str(orders_file))  # for the terminals too
    monkeypatch.setenv("ORDERBOT_USER", "C001")
    case = {"name": "wrong", "question": "查询 ORD-1001", "facts": ["已签收"]}  # fails: ORD-1001 is 已发货
    (tmp_path / "suite.json").write_text(json.dumps({"orders": str(orders_file), "cases": [case]}), "utf-8")
    return {"state": state, "paused": paused["run_id"], "orders": orders_file, "suite": tmp_path / "suite.json"}


COMMANDS = {
    "ask": ("ask", "查询 ORD-1001 和 ORD-1002 的详情"),
    "ask --trace": ("ask", "--trace", "查询 ORD-1001 和 ORD-9999"),
    "runs": ("runs",),
    "runs show": ("runs", "show", "last"),
    "runs show --trace": ("runs", "show", "last", "--trace"),
    "eval": ("eval",),
    "eval, a case failing": ("eval", "SUITE"),
    "doctor": ("doctor", "--ping"),
    "orders list": ("orders", "list", "--user", "C001"),
    "orders show": ("orders", "show", "ORD-1001", "--user", "C001"),
    "replay": ("replay", "last"),
    "approvals": ("approvals",),
    "audit": ("audit",),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_at_80_columns(shop, name, lang):
    args = tuple(str(shop["suite"]) if arg == "SUITE" else arg for arg in COMMANDS[name])
    whole = wide(*args, state=shop["state"], lang=lang)
    lines = terminal(*args, state=shop["state"], lang=lang)
    check(lines, whole)
    if name.startswith("eval"):  # the calls and why a case failed are there to be read
        assert any('get_order_status(order_id="ORD-1001")' in line for line in lines), lines
    if name == "eval, a case failing":
        why = t("eval.why_check", lang=lang, check=t("eval.check.facts", lang=lang), detail="")
        why += t("eval.reason.lacks", lang=lang, facts="已签收")
        assert any(why in line for line in lines), lines  # whole, on one line, in the UI language
    if name == "runs":  # every column is there, the counts too
        headings = " ".join(lines[:4])
        assert t("table.steps", lang=lang) in headings and t("table.calls", lang=lang) in headings, lines
    if name == "ask":  # a fact that takes two lines reads as one item
        first = next(i for i, line in enumerate(lines) if line.startswith("  ORD-1001 · "))
        assert lines[first + 1].startswith("    ") and not lines[first + 1].startswith("    ORD-"), lines


@pytest.mark.parametrize("lang", LANGS)
def test_an_approval_asked_in_the_terminal_at_80_columns(shop, lang):
    question = "please cancel order ORD-1002 because I changed my mind about buying it"
    whole = wide("ask", question, state=shop["state"], lang=lang)
    check(terminal("ask", question, state=shop["state"], lang=lang, answers=("n",)), whole)


@pytest.mark.parametrize("lang", LANGS)
def test_resume_at_80_columns(shop, lang):
    whole = wide("runs", "show", shop["paused"], state=shop["state"], lang=lang)
    lines = terminal("resume", shop["paused"], "--reject", state=shop["state"], lang=lang)
    check(lines, whole + wide("runs", "show", "last", state=shop["state"], lang=lang))


@pytest.mark.parametrize("lang", LANGS)
def test_the_repl_at_80_columns(shop, lang):
    """Step lines (three calls in a step, a limit stop), /limits and /runs."""
    env = environment(shop["state"], lang) | {"HOME": str(shop["state"])}
    child = orderbot_process_in_a_terminal(["repl"], env=env, dimensions=(24, 80))
    said = ""
    for line in ("查询 ORD-1001 和 ORD-1002 和 ORD-1003", "/limits steps=1", "ORD-1013 的详情", "/runs"):
        child.expect_exact("C001> ")
        said += child.before
        child.sendline(line)
        if line == "ORD-1013 的详情":
            child.expect(["Press c", "按 c"])  # the offer to continue: any other key goes on
            child.send("x")
    child.expect_exact("C001> ")
    said += child.before
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    lines = screen_of(said)
    budget = {"en": "[1/3 steps · 3/6 calls", "zh": "[步数 1/3 · 调用 3/6"}[lang]
    assert any(budget in line for line in lines), lines  # the budget whole on its line
    whole = wide("runs", state=shop["state"], lang=lang) + " ".join(
        f"steps calls step_limit executed get_order_status get_order_details order_id {word}"
        for word in ("answered", "stopped")
    )
    check(lines, whole)


def test_step_lines_at_120_columns_break_between_parts(shop):
    env = environment(shop["state"], "en") | {"HOME": str(shop["state"])}
    child = orderbot_process_in_a_terminal(["repl"], env=env, dimensions=(40, 120))
    child.expect_exact("C001> ")
    child.sendline("查询 ORD-1001 和 ORD-1002 和 ORD-1003")
    child.expect_exact("C001> ")
    lines = screen_of(child.before, 120)
    child.sendeof()
    child.expect(pexpect.EOF)
    whole = "executed get_order_status order_id answered steps calls"
    check(lines, whole, 120)
    budgets = [line for line in lines if re.search(r"\[\d/3 steps · 3/6 calls · [\d.]+s\]$", line)]
    assert len(budgets) == 2 and not [line for line in lines if line.strip().startswith(("]", "s]"))], lines


def test_the_piped_header_keeps_user_and_who_together_at_120():
    out = cli("ask", "查询 ORD-1001", env={"COLUMNS": "120"}).stdout
    header = out.split("\n")[:3]
    assert not any(line.rstrip().endswith(" user") for line in header), header
    assert any("user anonymous" in line for line in header), header
