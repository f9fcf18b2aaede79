"""The pseudo-terminal half of the property: arbitrary Unicode in an order's
item name and note and in the question, through `ask`, `runs show last` and the REPL in a
real pseudo-terminal with colours on. Only orderbot's own codes may reach the terminal:
SGR colours and the few cursor/erase codes of Rich's live table (ALLOWED below); no other
ESC, no BEL, no U+009B and no U+202E."""

from __future__ import annotations

import json
import os
import re

import pexpect
import pytest
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal
from fuzz import IN_CI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orderbot.shops.sample.model import SAMPLE_PATH

pytestmark = pytest.mark.slow  # a terminal fed random text

# What orderbot itself writes to a terminal: SGR colours, and Rich's live table redrawing
# itself (hide/show the cursor, erase the line, move up one line). Nothing else.
ALLOWED = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[1A")
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\u202e")

# Always some of the dangerous ones, then anything: C0, C1, U+2028/2029, bidi controls.
CORE = "\x1b]0;T\x07\x1b[31m\x9b2J\u202e"
HOSTILE = [chr(c) for c in range(0x20)] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
HOSTILE += ["\u2028", "\u2029", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"]
HOSTILE += ["\u2066", "\u2067", "\u2068", "\u2069"]


def hostile(chars: st.SearchStrategy[str], hostile: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.text(chars, max_size=15), st.lists(st.sampled_from(hostile), min_size=2, max_size=8)).map(
        lambda p: p[0] + "".join(p[1]) + CORE
    )


# In the orders file (JSON with \u escapes): all of Unicode but NUL, which no store takes
# (orderbot.shops.sample.model: PostgreSQL cannot hold it), and lone surrogates, which make
# the file one orderbot refuses as invalid JSON (tests/ui/test_i18n.py), so nothing is shown.
FIELD = hostile(st.characters(codec=None, exclude_categories=("Cs",), exclude_characters="\x00"), HOSTILE[1:])
# On the command line: no NUL (argv cannot hold it) and no surrogates (not encodable).
ARGUMENT = hostile(st.characters(codec="utf-8", exclude_characters="\x00"), HOSTILE[1:])
# Typed at the REPL: the terminal's line discipline and readline act on C0 and DEL (Ctrl-C,
# Ctrl-D, ESC as Meta…), so a typed line holds C1, separators and bidi controls, no C0.
TYPED_CHARS = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))
TYPED = st.tuples(
    st.text(TYPED_CHARS, max_size=10), st.lists(st.sampled_from(HOSTILE[33:]), min_size=2, max_size=6)
).map(lambda p: p[0] + "".join(p[1]) + "\x9b\u202e")


def env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    return env | {
        "ORDERBOT_STATE_DIR": str(tmp_path / "state"),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }


def run(tmp_path, *args: str) -> str:
    child = orderbot_in_a_terminal(list(args), env=env(tmp_path), dimensions=(40, 120))
    child.expect(pexpect.EOF)
    child.close()
    return child.before


def repl(tmp_path, orders, line: str) -> str:
    """The REPL's output for one question, without the terminal's echo of the typed line
    (the person's own keystrokes, shown back by the terminal, not by orderbot)."""
    args = ["repl", "--user", "C001", "--orders", str(orders)]
    child = orderbot_process_in_a_terminal(args, env=env(tmp_path), dimensions=(40, 120))
    try:
        child.expect_exact("C001> ")
        seen = child.before
        child.sendline(line)
        child.expect_exact("\n")  # the end of the echoed line
        child.expect_exact("C001> ")
        seen += child.before
        child.sendeof()
        child.expect(pexpect.EOF)
        seen += child.before
    finally:
        child.close(force=True)
    return seen


def clean(output: str) -> None:
    rest = ALLOWED.sub("", output)
    for char in FORBIDDEN:
        assert char not in rest, f"{char!r} reached the terminal: {rest[-800:]!r}"


# Three orderbot processes per example (about 2 s of CPU): the full count in CI, a tenth
# locally (the explicit hostile core goes into every example, so each one checks it).
EXAMPLES = 30 if IN_CI else 3


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=FIELD, note=FIELD, question=ARGUMENT, typed=TYPED)
def test_arbitrary_unicode_in_a_terminal(tmp_path, name, note, question, typed):
    doc = json.loads(SAMPLE_PATH.read_text("utf-8"))
    doc["orders"][0]["items"][0]["name"] = name
    doc["orders"][0]["note"] = note
    orders = tmp_path / "orders.json"
    orders.write_text(json.dumps(doc, ensure_ascii=True), "utf-8")

    asked = run(tmp_path, "ask", "--user", "C001", "--orders", str(orders), "--", f"{question} ORD-1001 的详情")
    clean(asked)
    assert "\\x1b]0;T" in asked  # the details were shown (escaped), so the hostile text was rendered
    clean(run(tmp_path, "runs", "show", "last"))
    shown = repl(tmp_path, orders, f"{typed} ORD-1001 的详情")
    clean(shown)
    assert "\\x1b]0;T" in shown
