"""The UI language: one catalogue with every message in both languages, chosen by --lang,
ORDERBOT_LANG or the locale; and no user-facing text written around the catalogue."""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest
from clikit import cli

from orderbot import i18n
from orderbot.commands import COMMAND_HELP
from orderbot.i18n.catalogue import MESSAGES


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_message_exists_in_both_languages_with_the_same_placeholders():
    for message_id, texts in MESSAGES.items():
        assert set(texts) == set(i18n.LANGUAGES), f"{message_id}: needs exactly {i18n.LANGUAGES}, has {set(texts)}"
        assert all(texts[lang].strip() for lang in i18n.LANGUAGES), f"{message_id}: an empty text"
        assert fields(texts["en"]) == fields(texts["zh"]), f"{message_id}: en and zh placeholders differ"


def test_every_message_formats_with_numbers_for_its_placeholders():
    for message_id, texts in MESSAGES.items():
        for lang in i18n.LANGUAGES:
            params = dict.fromkeys(fields(texts[lang]), 1234)
            assert i18n.t(message_id, lang=lang, **params), message_id


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (None, {}, "en"),
        (None, {"LANG": "zh_CN.UTF-8"}, "zh"),
        (None, {"LANG": "C"}, "en"),
        (None, {"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8"}, "en"),
        (None, {"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh"),
        (None, {"LC_MESSAGES": "zh_CN.UTF-8", "LC_ALL": "C"}, "en"),
        (None, {"LC_ALL": "C", "ORDERBOT_LANG": "zh"}, "zh"),
        ("en", {"ORDERBOT_LANG": "zh"}, "en"),
        ("zh-Hans", {}, "zh"),
        (None, {"LANG": "de_DE.UTF-8"}, "en"),
    ],
)
def test_language_precedence(flag, env, expected):
    assert i18n.language_from(env, flag) == expected


def test_an_unknown_language_is_a_usage_error_naming_its_source(monkeypatch):
    result = cli("--lang", "fr", "runs")
    assert result.exit_code == 2
    assert "--lang" in result.output and "fr" in result.output
    monkeypatch.setenv("ORDERBOT_LANG", "klingon")
    result = cli("runs")
    assert result.exit_code == 6 and "ORDERBOT_LANG" in result.output  # a setting, not a flag


def test_orderbot_lang_in_dotenv_is_a_setting_like_the_others(monkeypatch):
    Path(".env").write_text("ORDERBOT_LANG=zh\n", encoding="utf-8")
    cli("runs")
    assert i18n.language() == "zh"
    monkeypatch.setenv("ORDERBOT_LANG", "en")  # the environment comes before .env
    cli("runs")
    assert i18n.language() == "en"
    monkeypatch.delenv("ORDERBOT_LANG")
    Path(".env").write_text("ORDERBOT_LANG=fr\n", encoding="utf-8")
    result = cli("runs")
    assert result.exit_code == 6
    assert result.stderr.strip() == "orderbot: unknown language 'fr' from ORDERBOT_LANG in ./.env: use zh or en"
    monkeypatch.setenv("ORDERBOT_LANG", "klingon")
    result = cli("runs")
    assert "'klingon' from ORDERBOT_LANG in the environment" in result.stderr


def test_the_language_flag_chooses_the_catalogue():
    cli("--lang", "zh", "runs")
    assert i18n.language() == "zh"
    assert i18n.t("stop.cancelled") == "已取消。"
    cli("--lang", "en", "runs")
    assert i18n.t("stop.cancelled") == "Cancelled."


def test_json_does_not_change_with_the_language(monkeypatch):
    documents = []
    for lang in ("en", "zh"):
        monkeypatch.setenv("ORDERBOT_LANG", lang)
        result = cli("ask", "--json", "--max-steps", "1", "查询 ORD-1001")
        assert result.exit_code == 3
        doc = json.loads(result.stdout)
        documents.append({k: v for k, v in doc.items() if k not in ("run_id", "transitions", "resume_command")})
        documents[-1]["transitions"] = [(t["kind"], t["data"].get("message")) for t in doc["transitions"]]
    assert documents[0] == documents[1]
    assert documents[0]["transitions"][-1][1]["id"] == "detail.step_limit_one"  # a stop's sentence, by its id


# ---- no user-facing text around the catalogue ----------------------------------------------

ROOT = Path(__file__).resolve().parents[2] / "orderbot"
# What is scanned: the modules that talk to the person. The engine, tools, stores and model
# adapters produce data (records, --json, what the model reads), not sentences for a person.
# Every module: below the screen an error is raised as a message id and its values (a Phrase),
# never as words, so a sentence there is a bypass as much as one printed by a view. Not the
# offline planners: what they say is the model's answer, in the question's language.
SCANNED = sorted(
    path for path in ROOT.rglob("*.py") if path.parent.name != "i18n" and not path.stem.startswith("offline")
)
# Calls whose arguments reach the person: printing, prompts, table headings and panel
# titles, the errors that become the one-sentence message on stderr, and a phrase.
SINKS = {
    "print", "echo", "secho", "say", "input", "Text", "Panel", "add_column", "add_row", "Status",
    "ConfigError", "UsageError", "RecordError", "OrdersFileError", "OrderbotError", "ModelError", "ModelTimeout",
    "ModelResponseError", "EmptyReply", "IncompleteReply", "OperatorRefused", "LoginRefused", "RunFinished",
    "RunConflict", "LimitExceeded", "BadParameter", "Phrase",
}  # fmt: skip
NOT_TEXT = {
    "param_hint",
    "style",
    "justify",
    "overflow",
    "box",
    "border_style",
    "title_align",
    "file",
    "end",
    "sep",
    "spinner",
}
CATALOGUE_CALLS = {"t", "_t"}
LETTERS = re.compile(r"[A-Za-z\u4e00-\u9fff]")
MARKUP = re.compile(r"\[/?[a-z ]*\]")  # Rich styles such as [bold yellow]...[/] are not words
PRAGMA = "# untranslated:"
ID_PREFIX = re.compile(
    rf"^(?:{'|'.join(sorted({m.split('.')[0] for m in MESSAGES}))})\.[a-z_.]*$"
)  # followed by why, on the line of a call that may print a fixed word


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _words(node: ast.AST) -> list[str]:
    """The string literals with letters that end up in what is printed: literals, the literal
    parts of f-strings, `+` and `a if c else b`, and the text arguments of a nested sink
    (Text inside print). Calls to the catalogue, and strings handed to other calls (a
    `.replace("T", " ")`, say), are not text for the person."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value in MESSAGES or node.value in i18n.LANGUAGES:  # a message id (a Phrase's), a language
            return []
        return [node.value] if LETTERS.search(MARKUP.sub("", node.value)) else []
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and ID_PREFIX.match(str(first.value)):
            return []  # an id built from a value (`pydantic.{type}`): tests/test_message_ids.py checks it
        return [w for part in node.values for w in _words(part)]
    if isinstance(node, ast.FormattedValue):
        return _words(node.value)
    if isinstance(node, ast.BinOp):
        return _words(node.left) + _words(node.right)
    if isinstance(node, ast.IfExp):
        return _words(node.body) + _words(node.orelse)
    if isinstance(node, ast.Call) and _name(node.func) in SINKS:
        return [w for arg in _text_args(node) for w in _words(arg)]
    return []


def _text_args(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords if k.arg not in NOT_TEXT)]


def bypasses(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or _name(node.func) not in SINKS:
            continue
        if any(PRAGMA in lines[n - 1] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)):
            continue
        for words in filter(None, map(_words, _text_args(node))):
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {_name(node.func)}(...) prints {words[0]!r}")
    return found


def test_no_user_facing_text_bypasses_the_catalogue():
    assert ROOT / "ui" / "render.py" in SCANNED and ROOT / "commands" / "ask.py" in SCANNED  # the scan scans
    found = [line for path in SCANNED for line in bypasses(path)]
    assert not found, (
        "These calls show a person text that is not in the message catalogue:\n  "
        + "\n  ".join(found)
        + "\nAdd each sentence to orderbot/i18n/catalogue.py with an id, in both en and zh, and print "
        "t('the.id', name=value) from orderbot.i18n instead. A fixed word that is the same in every "
        f"language (a command name, a flag) may stay: end that line with '{PRAGMA} <why>'."
    )


def test_the_scan_catches_a_literal_and_an_f_string(tmp_path):
    sample = ROOT / "commands" / "_scan_sample.py"
    sample.write_text(
        'console.print(f"Stopped at step {n}")\nraise ConfigError("bad value")\n'
        'console.print(t("stop.cancelled"))\nconsole.print(Text(f"  {x} → {y}", style="bold red"))\n',
        encoding="utf-8",
    )
    try:
        found = bypasses(sample)
    finally:
        sample.unlink()
    assert [line.split(": ", 1)[1] for line in found] == [
        "print(...) prints 'Stopped at step '",
        "ConfigError(...) prints 'bad value'",
    ]


def _stop_explanation(env: dict) -> str:
    import os
    import subprocess
    import sys

    orderbot = str(Path(sys.executable).with_name("orderbot"))
    full = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "ORDERBOT_LANG"))}
    result = subprocess.run(
        [orderbot, "ask", "--max-steps", "1", "查询 ORD-1001"],
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 3, result.stderr
    return result.stdout


@pytest.mark.slow
def test_the_locale_chooses_the_language_of_the_stop_explanation():
    chinese = _stop_explanation({"LANG": "zh_CN.UTF-8"})
    assert "已停止：达到了步数上限。模型在第 1 步（共 1 步）请求调用 get_order_status；这个调用没有执行。" in chinese
    assert "停止原因：step_limit" in chinese  # the reason itself is a value: the same in both
    english = _stop_explanation({"LANG": "C"})
    assert "Stopped: the step limit was reached. The model asked for get_order_status at step 1 of 1" in english
    assert "已停止" not in english


def test_every_stop_reason_has_its_sentence():
    from orderbot.loop.engine import StopReason

    missing = [r for r in StopReason if r is not StopReason.ANSWERED and f"stop.{r}" not in MESSAGES]
    assert not missing, f"add stop.<reason> to orderbot/i18n/catalogue.py for {missing}"


# ---- errors in the UI language ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "english", "chinese"),
    [
        (["ask", "--bogus", "x"], "no such option: --bogus", "没有 --bogus 这个选项"),
        (["ask", "--max-steps", "x", "y"], "invalid value for '--max-steps'", "'--max-steps' 的值无效：应为整数"),
        (["runs", "show"], "missing argument 'run_id'", "缺少参数 'run_id'"),
        (["ask", "--max-steps"], "--max-steps needs a value", "--max-steps 需要一个值"),
        (["ask", "--json=1", "x"], "--json takes no value", "--json 不带值"),
        (["nosuch"], "no such command 'nosuch'", "没有 'nosuch' 这个命令"),
        (["--bogus"], "no such option: --bogus", "没有 --bogus 这个选项"),
        # Click's own words where it carries nothing to rebuild them from, behind orderbot's sentence
        (
            ["runs", "show", "a", "b"],
            "Got unexpected extra argument(s) (b)",
            "命令行有误：Got unexpected extra argument(s) (b)",
        ),
        (["ask", " "], "the question is empty", "问题是空的"),  # found by orderbot, not by Click
        (["resume", "last", "--approve", "--reject"], "--approve and --reject cannot be used together", "不能同时"),
    ],
)
def test_usage_errors_are_one_line_in_the_ui_language_with_a_hint_to_help(args, english, chinese):
    command = " ".join(["orderbot", *[a for a in args[:2] if a in COMMAND_HELP or a == "show"]])
    hints = {"en": f" (see '{command} --help')", "zh": f"（见 {command} --help）"}
    for lang, expected in (("en", english), ("zh", chinese)):
        result = cli("--lang", lang, *args)
        assert result.exit_code == 2, result.output
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
        line = result.stderr.strip()
        assert line.startswith(("orderbot: ", "orderbot：")) and expected in line and line.endswith(hints[lang]), line


def test_a_mistyped_flag_is_suggested_and_a_far_one_is_not():
    assert "(did you mean --max-steps?)" in cli("ask", "--max-step", "3", "x").output
    far = cli("ask", "--bogus", "x").output
    assert "--user" not in far and "did you mean" not in far


def test_pydantic_and_settings_errors_in_chinese(monkeypatch):
    monkeypatch.setenv("ORDERBOT_MAX_STEPS", "abc")
    result = cli("--lang", "zh", "ask", "x")
    assert result.exit_code == 6 and "环境变量 ORDERBOT_MAX_STEPS 的值无效：应为整数" in result.output
    monkeypatch.delenv("ORDERBOT_MAX_STEPS")
    result = cli("--lang", "zh", "ask", "--user", "bad/user", "x")
    assert "--user 的值无效：请用 1 到 64 个字母" in result.output
    result = cli("--lang", "zh", "ask", "--max-steps", "0", "x")
    assert "--max-steps 的值无效：应大于或等于 1" in result.output


def test_every_pydantic_text_is_pydantics_own_wording():
    """The English of each `pydantic.*` entry is what pydantic says (lower-cased): an error
    rebuilt from pydantic's structure reads in English as pydantic's own."""
    from pydantic import BaseModel, Field, ValidationError

    class Probe(BaseModel, extra="forbid"):
        number: int = Field(ge=1, le=10)
        text: str = Field("", max_length=2)

    for value, kind in ((dict(number="x"), "int_parsing"), (dict(number=0), "greater_than_equal"),
                        (dict(number=11), "less_than_equal"), (dict(number=1, text="abc"), "string_too_long"),
                        (dict(), "missing"), (dict(number=1, other=1), "extra_forbidden")):  # fmt: skip
        with pytest.raises(ValidationError) as caught:
            Probe(**value)
        error = caught.value.errors()[0]
        assert error["type"] == kind
        text = i18n.t(f"pydantic.{kind}", lang="en", **{k: str(v) for k, v in (error.get("ctx") or {}).items()})
        assert text == error["msg"][:1].lower() + error["msg"][1:]


def test_a_file_that_is_not_json_keeps_the_parsers_english(tmp_path):
    from pydantic import TypeAdapter, ValidationError

    orders = tmp_path / "orders.json"
    orders.write_text('{"orders": [{"order_id": "ORD-1"}', encoding="utf-8")
    try:
        TypeAdapter(object).validate_json(orders.read_bytes())
    except ValidationError as exc:
        parser = exc.errors()[0]["ctx"]["error"]
    result = cli("--lang", "en", "ask", "--orders", str(orders), "x")
    assert result.exit_code == 6
    assert result.stderr == f"orderbot: {orders}: not valid JSON: {parser}\n"


def test_a_parsers_words_are_shown_as_they_are_behind_orderbots_sentence(tmp_path):
    """Where JSON did not parse is the parser's to say: in Chinese too it is its own English,
    after orderbot's sentence in Chinese, never translated by matching its words."""
    from pydantic import TypeAdapter, ValidationError

    orders = tmp_path / "orders.json"
    orders.write_text('{"orders": [1', encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(object).validate_json(orders.read_bytes())
    parser = caught.value.errors()[0]["ctx"]["error"]
    result = cli("--lang", "zh", "ask", "--orders", str(orders), "x")
    assert result.exit_code == 6
    assert result.stderr == f"orderbot：{orders}：不是有效的 JSON：{parser}\n"


def test_pydantics_json_invalid_is_rebuilt_from_its_parts_with_the_parsers_words():
    from pydantic import TypeAdapter, ValidationError

    from orderbot.text import validation_phrase

    with pytest.raises(ValidationError) as caught:
        TypeAdapter(object).validate_json("[1")
    [error] = caught.value.errors()
    said = validation_phrase(error)
    assert i18n.say(said, "en") == "invalid JSON: EOF while parsing a list at line 1 column 2"
    assert i18n.say(said, "en") == error["msg"][:1].lower() + error["msg"][1:]
    assert i18n.say(said, "zh") == "不是有效的 JSON：EOF while parsing a list at line 1 column 2"


# Bytes that are not text, and how each fails to decode (orderbot.text.decode_error).
NOT_UTF8 = [
    (b'{"a": "\xff"}', "decode.reason.invalid_start_byte"),
    (b'{"a": "\xe4A"}', "decode.reason.invalid_continuation_byte"),
    (b'{"a": "\xe4\xb8', "decode.reason.unexpected_end_of_data"),
]


@pytest.mark.parametrize(("raw", "reason_id"), NOT_UTF8)
def test_bytes_that_are_not_utf8_are_pythons_words_in_english_and_chinese_in_chinese(raw, reason_id):
    from orderbot.text import decode_error

    with pytest.raises(UnicodeDecodeError) as caught:
        json.loads(raw)
    assert i18n.say(decode_error(caught.value), "en") == str(caught.value)
    said = i18n.say(decode_error(caught.value), "zh")
    assert MESSAGES[reason_id]["zh"] in said and not re.search(r"\b[A-Za-z]{3,}\b", said.replace("utf-8", ""))


def test_a_whole_float_bound_is_shown_as_pydantic_shows_it():
    from pydantic import BaseModel, Field, ValidationError

    from orderbot.text import validation_phrase

    class Probe(BaseModel):
        amount: float = Field(ge=0)

    with pytest.raises(ValidationError) as caught:
        Probe(amount=-1)
    [error] = caught.value.errors()
    assert i18n.say(validation_phrase(error), "en") == error["msg"][:1].lower() + error["msg"][1:]
    assert i18n.say(validation_phrase(error), "zh") == "应大于或等于 0"


def test_an_error_says_its_phrase_in_the_readers_language_where_it_is_shown():
    from orderbot.commands.common import error_line
    from orderbot.errors import Phrase, RecordError

    error = RecordError(
        "runs.settled_first",
        run_id="r1",
        tool="cancel_order",
        verb=Phrase("runs.verb_rejected"),
        by="desk2",
        at="2026-12-04T10:00:00Z",
    )
    assert "desk2" in str(error) and "runs.settled_first" in str(error)  # a log's view: the id and its values
    i18n.set_language("zh")
    try:
        assert error_line(error) == i18n.t(
            "error.prefix",
            error=i18n.t(
                "runs.settled_first",
                run_id="r1",
                tool="cancel_order",
                verb=i18n.t("runs.verb_rejected"),
                by="desk2",
                at="2026-12-04T10:00:00Z",
            ),
        )
        assert "拒绝" in error_line(error)
    finally:
        i18n.set_language(None)
    english = i18n.say(error, "en")
    assert "rejected" in english and "拒绝" not in english


def test_a_phrase_keeps_its_numbers_formatted_and_text_that_is_no_id_as_it_is():
    from orderbot.errors import ConfigError, Phrase

    assert i18n.say(Phrase("detail.response_too_large", {"size": 20000, "cap": 16000}), "en") == (
        "the model's response had 20,000 characters, over the 16,000 cap"
    )
    assert i18n.say(ConfigError("a library's own words"), "zh") == "a library's own words"
