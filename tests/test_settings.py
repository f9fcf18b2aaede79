"""Settings: flags > environment > .env > defaults; .env.example lists every setting; the
API key stays secret."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clikit import cli

from orderbot.settings import Settings, env_example, load_settings

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-test-SECRET-settings-0123456789"


def env_names(name: str) -> list[str]:
    """The environment variables a Settings field is read from."""
    alias = Settings.model_fields[name].validation_alias
    if alias is None:
        return [f"ORDERBOT_{name.upper()}"]
    return [choice for choice in alias.choices if isinstance(choice, str) and choice.isupper()]


def test_each_source_overrides_the_one_below(monkeypatch: pytest.MonkeyPatch):
    assert load_settings().model == "gpt-4o-mini"  # the default

    Path(".env").write_text("MODEL_NAME=from-dotenv\nORDERBOT_TIMEOUT=5\nORDERBOT_MAX_STEPS=4\n", encoding="utf-8")
    settings = load_settings()
    assert (settings.model, settings.timeout, settings.max_steps) == ("from-dotenv", 5.0, 4)

    monkeypatch.setenv("MODEL_NAME", "from-env")
    monkeypatch.setenv("ORDERBOT_MAX_STEPS", "6")
    settings = load_settings()
    assert (settings.model, settings.timeout, settings.max_steps) == ("from-env", 5.0, 6)

    settings = load_settings(model="from-flag", max_steps=2, timeout=None)  # None: the flag was not given
    assert (settings.model, settings.timeout, settings.max_steps) == ("from-flag", 5.0, 2)


def test_base_url_and_key_come_from_env_or_dotenv(monkeypatch: pytest.MonkeyPatch):
    Path(".env").write_text(f"OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL=http://localhost:11434/v1\n", encoding="utf-8")
    settings = load_settings()
    assert settings.api_key.get_secret_value() == KEY and settings.base_url == "http://localhost:11434/v1"

    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    assert load_settings().base_url == "http://localhost:8000/v1"
    assert load_settings(base_url="http://localhost:8080/v1").base_url == "http://localhost:8080/v1"


def test_an_empty_key_is_no_key(monkeypatch: pytest.MonkeyPatch):
    from orderbot.models import resolve_provider

    monkeypatch.setenv("OPENAI_API_KEY", "  ")
    settings = load_settings()
    assert settings.api_key is None and resolve_provider(settings) == "offline"


def test_the_key_never_shows_in_the_settings_text(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = load_settings()
    for text in (repr(settings), str(settings), settings.model_dump_json(), str(settings.model_dump())):
        assert KEY not in text


def test_env_example_is_written_from_the_settings():
    assert (REPO / ".env.example").read_text(encoding="utf-8") == env_example(), (
        "a setting changed: run `python -c 'import orderbot.settings as s; s.write_env_example()'` in the clone"
    )


def test_a_setting_in_no_section_of_env_example_is_caught(monkeypatch: pytest.MonkeyPatch):
    import orderbot.settings as module

    sections = [(title, tuple(n for n in names if n != "trace")) for title, names in module.ENV_EXAMPLE_SECTIONS]
    monkeypatch.setattr(module, "ENV_EXAMPLE_SECTIONS", sections)
    with pytest.raises(ValueError, match="trace"):
        env_example()


def test_env_example_lists_every_setting():
    text = (REPO / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", text, re.M))
    missing = [name for name in Settings.model_fields if not set(env_names(name)) & listed]
    assert not missing, f".env.example does not list: {missing}"
    for line in text.splitlines():  # each setting has a comment right above it
        if re.match(r"^[A-Z][A-Z0-9_]*=", line):
            above = text.splitlines()[text.splitlines().index(line) - 1]
            assert above.startswith("#"), f"{line} has no comment"


def test_env_example_copied_as_is_gives_the_defaults(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ORDERBOT_STATE_DIR")  # set by the isolation fixture; it would win over .env
    Path(".env").write_text((REPO / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    assert load_settings().model_dump() == Settings.model_construct().model_dump() | {"api_key": None}


def test_openai_without_key_or_base_url_says_what_to_set():
    result = cli("ask", "--provider", "openai", "查询 ORD-1001")

    assert result.exit_code == 6
    assert result.stderr.strip().splitlines() == [
        "orderbot: the openai provider needs an API key: set OPENAI_API_KEY "
        "(or pass --base-url for a local OpenAI-compatible server)"
    ]


def test_a_base_url_that_is_not_http_is_a_usage_error_as_typed_and_a_config_error_from_the_environment():
    typed = cli("ask", "--provider", "chat", "--base-url", "localhost:11434", "查询 ORD-1001")
    assert typed.exit_code == 2
    assert "invalid base URL from --base-url" in typed.stderr and "Traceback" not in typed.output

    from_env = cli("ask", "--provider", "chat", "查询 ORD-1001", env={"OPENAI_BASE_URL": "localhost:11434"})
    assert from_env.exit_code == 6 and "invalid base URL from OPENAI_BASE_URL" in from_env.stderr


def test_ask_help_and_env_example_say_what_auto_chooses():
    from orderbot.models import resolve_provider

    assert resolve_provider(load_settings(base_url="http://127.0.0.1:11434/v1", api_key="k")) == "chat"
    help_text = " ".join(cli("ask", "--help", env={"COLUMNS": "100"}).stdout.replace("│", " ").split())
    assert "auto: chat when a base URL is set, else openai when OPENAI_API_KEY is set, else offline" in help_text
    example = " ".join(line.lstrip("# ") for line in env_example().splitlines())
    assert "auto (chat when a base URL is set, else openai when OPENAI_API_KEY is set, else offline)" in example
