"""No hostile text reaches the terminal raw.

Every vector (the model's answer, a tool name the model sends, an order's field, the
question, the orders-file error line) through every renderer (the transitions table, the
answer panel, --trace, runs show, --json; the REPL and the approval prompt in a
pseudo-terminal), then a property test with arbitrary Unicode. The one function all of it
goes through is orderbot.ui.escape.visible.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from clikit import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runkit import run_ids

from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.ui.escape import json_text, visible

HOSTILE = "Bag\x1b]0;PWNED\x07\x1b[31mRED\x1b]8;;http://x\x1b\\link\x1b[2J\x9b2J\u202eevil\u2066\u2028[bold]x[/]"
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\u202e")


def clean(output: str) -> None:
    for char in FORBIDDEN:
        assert char not in output, f"{char!r} reached the output: {output[-600:]!r}"


def hostile_orders(path, **fields) -> None:
    doc = json.loads(SAMPLE_PATH.read_text("utf-8"))
    doc["orders"][0]["items"][0]["name"] = fields.get("name", HOSTILE)
    doc["orders"][0]["note"] = fields.get("note", HOSTILE)
    path.write_text(json.dumps(doc, ensure_ascii=True), "utf-8")


def every_renderer(*ask: str) -> list[str]:
    """The outputs of one run through each renderer: table + answer, --trace, --json,
    runs, runs show, runs show --trace."""
    outputs = [cli("ask", *ask).output, cli("ask", "--trace", *ask).output]
    doc = cli("ask", "--json", *ask).output
    json.loads(doc)  # still valid JSON
    outputs.append(doc)
    run_id = run_ids()[0]
    outputs += [cli("runs").output, cli("runs", "show", run_id).output, cli("runs", "show", run_id, "--trace").output]
    outputs.append(cli("runs", "show", run_id, "--json").output)
    return outputs


def test_visible_scheme():
    assert visible("a\x1b[31mb\x07\x9bc\u202ed\u2028e") == "a\\x1b[31mb\\x07\\x9bc\\u202ed\\u2028e"
    assert visible("one\ntwo\r\tthree", one_line=True) == "one\\ntwo\\r\\tthree"
    assert visible("one\ntwo\r") == "one\ntwo\\r"
    assert visible("订单 ORD-1001 [bold]x[/]") == "订单 ORD-1001 [bold]x[/]"  # text and markup untouched
    assert json.loads(json_text({"a": "\x1b\x9b\u202e\ud800"})) == {"a": "\x1b\x9b\u202e\ud800"}
    assert not any(c in json_text({"a": "\x9b\u202e\u2028"}) for c in "\x9b\u202e\u2028")


def test_order_fields(orders_file):
    hostile_orders(orders_file)
    for output in every_renderer("--user", "C001", "--orders", str(orders_file), "ORD-1001 的详情"):
        clean(output)
    shown = cli("ask", "--user", "C001", "--orders", str(orders_file), "ORD-1001 的详情").output
    assert "\\x1b]0;PWNED" in shown and "[bold]x[/]" in shown  # visible, and markup literal


def test_the_models_answer(use_model, orders_file):
    use_model(ScriptedModel([text(HOSTILE) for _ in range(3)]))
    for output in every_renderer("--provider", "scripted", "--orders", str(orders_file), "hi"):
        clean(output)


def test_a_tool_name_the_model_sends(use_model, orders_file):
    turns = []
    for _ in range(3):
        turns += [calls(call(HOSTILE + "\nsecond line", {"order_id": "ORD-1001"})), text("ok")]
    use_model(ScriptedModel(turns))
    outputs = every_renderer("--provider", "scripted", "--orders", str(orders_file), "hi")
    for output in outputs:
        clean(output)
    table = outputs[0]
    assert "\\n" in table  # a newline in a one-line cell is shown escaped, not as a line break


def test_the_question(orders_file):
    for output in every_renderer("--orders", str(orders_file), "ORD-1001 " + HOSTILE):
        clean(output)


def test_the_orders_file_error_line(orders_file):
    doc = json.loads(SAMPLE_PATH.read_text("utf-8"))
    doc["orders"][0]["order_id"] = "ORD-\x1b]0;PWNED\x07\x9b\u202e"
    doc["orders"][0]["status"] = "bogus"
    orders_file.write_text(json.dumps(doc, ensure_ascii=True), "utf-8")
    result = cli("ask", "--orders", str(orders_file), "查询 ORD-1001")
    assert result.exit_code == 6
    clean(result.output)
    assert len(result.output.strip().splitlines()) == 1


def _pty_env(tmp_path):
    return {
        **os.environ,
        "ORDERBOT_STATE_DIR": str(tmp_path / "state"),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
        "HOME": str(tmp_path),
    } | {"NO_COLOR": ""}


@pytest.mark.slow  # a terminal session
def test_the_repl_and_the_approval_prompt_in_a_terminal(orders_file, tmp_path):
    """In a pseudo-terminal with colours on: orderbot's own colour codes may appear, the
    hostile sequences may not."""
    pexpect = pytest.importorskip("pexpect")
    hostile_orders(orders_file)
    from forked_terminal import orderbot_process_in_a_terminal

    args = ["repl", "--orders", str(orders_file), "--user", "C001"]
    child = orderbot_process_in_a_terminal(args, env=_pty_env(tmp_path), dimensions=(40, 120))
    try:
        child.expect_exact("C001> ")
        child.sendline("ORD-1001 的详情")
        child.expect_exact("C001> ")
        seen = child.before
        child.sendline("取消订单 ORD-1002")
        child.expect_exact("[y/N]")
        seen += child.before
        child.sendline("n")
        child.expect_exact("C001> ")
        seen += child.before
        child.sendeof()
        child.expect(pexpect.EOF)
        seen += child.before
    finally:
        child.terminate(force=True)
    assert "\\x1b]0;PWNED" in seen  # the order field was shown, escaped
    for raw in ("\x1b]0;PWNED", "\x07", "\x9b", "\u202e", "\x1b[31mRED", "\x1b[2J", "\x1b]8;"):
        assert raw not in seen, raw


# ---- the property: arbitrary Unicode through every renderer ------------------------------

EXAMPLES = 60 if os.environ.get("CI") == "true" else 6
ANY_TEXT = st.text(
    st.characters(codec=None, exclude_categories=()),  # all of Unicode: C0, C1, bidi, separators, surrogates
    min_size=1,
    max_size=40,
).map(lambda s: s + "\x1b]0;T\x07\x9b\u202e\u2028\u2066")


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=ANY_TEXT, name=ANY_TEXT, question=ANY_TEXT)
def test_arbitrary_unicode_through_every_renderer(use_model, tmp_path, answer, name, question):
    orders = tmp_path / "orders.json"
    shutil.copyfile(SAMPLE_PATH, orders)
    turns = []
    for _ in range(3):
        turns += [calls(call(name, {"order_id": "ORD-1001"})), text(answer)]
    use_model(ScriptedModel(turns))
    question = question.strip() or "q"
    if len(question) > 4000:
        question = question[:4000]
    for output in every_renderer("--provider", "scripted", "--orders", str(orders), "--", question):
        clean(output)


@pytest.mark.slow  # a terminal session
def test_an_answer_as_it_streams_in_a_terminal(tmp_path):
    """The answer panel that fills while the server streams shows hostile text escaped too."""
    pexpect = pytest.importorskip("pexpect")
    from fakeapi import FakeAPI, completion, sse, stream_of
    from forked_terminal import orderbot_in_a_terminal

    with FakeAPI() as api:
        api.enqueue("chat", stream_of(sse("chat", completion(HOSTILE * 3), piece=5)))
        args = ["ask", "--provider", "chat", "--base-url", api.url, "--model", "fake", "hello"]
        child = orderbot_in_a_terminal(args, env=_pty_env(tmp_path), dimensions=(24, 80))
        child.expect(pexpect.EOF)
        child.close()
    seen = child.before
    assert "PWNED" in seen and child.exitstatus == 0
    for raw in ("\x1b]0;PWNED", "\x07", "\x9b", "\u202e", "\x1b[31mRED", "\x1b[2J", "\x1b]8;"):
        assert raw not in seen, raw
