"""`orderbot eval` treats a suite as untrusted input (orderbot.answers.evaluate): a limit it
does not have, a user `--user` would refuse, or orders outside the suite's folder are one
sentence and exit 6 before any case runs; what the suite and the model wrote (case names,
questions, users, answers) is escaped in the table and in --json, as `ask --json` does."""

from __future__ import annotations

import json
import os
import re
import shutil

import pexpect
import pytest
from clikit import cli
from forked_terminal import orderbot_in_a_terminal

from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.sample.model import SAMPLE_PATH

HOSTILE = "\x1b]0;T\x07\x1b[31m\x9b2J\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
ALLOWED = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[1A")  # orderbot's own styling


def suite(tmp_path, cases: list[dict], **top) -> str:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"cases": cases, **top}, ensure_ascii=False), encoding="utf-8")
    return str(path)


CASE = {"name": "status", "question": "查询 ORD-1001"}


def refused(result) -> str:
    assert result.exit_code == 6, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


BAD_LIMITS = [({"max_stepz": 3}, "'max_stepz' is not a limit"), ({"max_steps": -1}, "max_steps"),
              ({"timeout": 1e400}, "timeout")]  # fmt: skip


@pytest.mark.parametrize("limits, said", BAD_LIMITS)
def test_a_limit_orderbot_does_not_have_or_cannot_take_is_refused(tmp_path, limits, said):
    text_ = json.dumps({"cases": [dict(CASE, limits=limits)]}).replace("Infinity", "1e400")
    (tmp_path / "suite.json").write_text(text_)
    line = refused(cli("eval", str(tmp_path / "suite.json")))
    assert said in line, line


@pytest.mark.parametrize("orders", ["/etc/shadow", "/etc/passwd", "../elsewhere.json", "sub/../../elsewhere.json"])
def test_orders_outside_the_suites_folder_are_refused(tmp_path, orders):
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copyfile(SAMPLE_PATH, tmp_path / "elsewhere.json")  # valid orders, but not the suite's to name
    line = refused(cli("eval", suite(folder, [CASE], orders=orders)))
    assert "not a file in the suite's folder" in line and "root:" not in line, line


def test_orders_beside_the_suite_are_used_and_a_file_that_holds_none_is_one_sentence(tmp_path):
    shutil.copyfile(SAMPLE_PATH, tmp_path / "mine.json")
    assert cli("eval", suite(tmp_path, [dict(CASE, facts=["已发货"])], orders="mine.json")).exit_code == 0
    (tmp_path / "broken.json").write_text("root:x:0:0:root:/root:/bin/bash\n")
    line = refused(cli("eval", suite(tmp_path, [CASE], orders="broken.json")))
    assert "not valid JSON" in line and "/root" not in line, line


def test_a_user_that_user_would_refuse_is_refused(tmp_path):
    line = refused(cli("eval", suite(tmp_path, [dict(CASE, user="C001" + HOSTILE)])))
    assert "cases.0.user" in line and not any(raw in line for raw in RAW), repr(line)


def hostile_suite(tmp_path, use_model) -> str:
    use_model(ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货" + HOSTILE)]))
    case = {"name": "n" + HOSTILE, "question": "查询 ORD-1001 " + HOSTILE, "facts": ["已发货" + HOSTILE]}
    return suite(tmp_path, [case])


def test_names_questions_and_answers_are_escaped_in_json(tmp_path, use_model):
    result = cli("eval", hostile_suite(tmp_path, use_model), "--provider", "scripted", "--json")
    assert not any(raw in result.stdout for raw in RAW), repr(result.stdout[:400])
    doc = json.loads(result.stdout)  # still JSON, holding the very same text
    assert doc["cases"][0]["name"] == "n" + HOSTILE
    assert doc["cases"][0]["answer"] == "已发货" + HOSTILE


@pytest.mark.slow  # a terminal session
def test_names_questions_and_answers_are_escaped_in_the_table(tmp_path, use_model):
    path = hostile_suite(tmp_path, use_model)
    piped = cli("eval", path, "--provider", "scripted")
    assert not any(raw in piped.output for raw in RAW), repr(piped.output[:400])
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"TERM": "xterm-256color"}
    child = orderbot_in_a_terminal(["eval", path, "--provider", "scripted"], env=env, dimensions=(40, 200))
    child.expect(pexpect.EOF)
    child.close()
    shown = ALLOWED.sub("", child.before)
    assert "\\x9b2J" in shown and not any(raw in shown for raw in RAW), repr(shown[-600:])
