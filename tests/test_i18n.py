"""The UI language: one catalogue with every message in both languages, chosen by --lang,
ORDERBOT_LANG or the locale; and no user-facing text written around the catalogue."""

from __future__ import annotations

import json
import string

import pytest
from typer.testing import CliRunner

from orderbot import i18n
from orderbot.catalogue import MESSAGES
from orderbot.cli import app

runner = CliRunner()


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
    result = runner.invoke(app, ["--lang", "fr", "runs"])
    assert result.exit_code == 2
    assert "--lang" in result.output and "fr" in result.output
    monkeypatch.setenv("ORDERBOT_LANG", "klingon")
    result = runner.invoke(app, ["runs"])
    assert result.exit_code == 2 and "ORDERBOT_LANG" in result.output


def test_the_language_flag_chooses_the_catalogue():
    runner.invoke(app, ["--lang", "zh", "runs"])
    assert i18n.language() == "zh"
    assert i18n.t("stop.cancelled") == "已取消。"
    runner.invoke(app, ["--lang", "en", "runs"])
    assert i18n.t("stop.cancelled") == "Cancelled."


def test_json_does_not_change_with_the_language(monkeypatch):
    documents = []
    for lang in ("en", "zh"):
        monkeypatch.setenv("ORDERBOT_LANG", lang)
        result = runner.invoke(app, ["ask", "--json", "--max-steps", "1", "查询 ORD-1001"])
        assert result.exit_code == 3
        doc = json.loads(result.stdout)
        documents.append({k: v for k, v in doc.items() if k not in ("run_id", "transitions", "resume_command")})
        assert [(t["event"], t["detail"]) for t in doc["transitions"]]
    assert documents[0] == documents[1]
