"""A password in a URL is never printed, logged or recorded, whatever it holds: an unencoded
`/`, `@`, `?`, `#` or `:` makes a URL parser place the host inside the password, so the
credentials are found without trusting the parse (orderbot.text.without_credentials)."""

from __future__ import annotations

import pytest
from clikit import cli
from securitykit import state_dir

from orderbot.settings import public_base_url
from orderbot.shops.source import public_source

SECRET = "PGSECRET-9f2c"
# Each puts the secret where a parser would not look for a password.
PASSWORDS = [f"2024/{SECRET}", f"p@ss{SECRET}", f"x#{SECRET}", f"x?{SECRET}", f"{SECRET}:1", f"a://{SECRET}"]


def every_byte_written() -> str:
    """stdout and stderr aside: everything orderbot left in its state directory."""
    found = []
    for path in state_dir().rglob("*"):
        if path.is_file():
            found.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(found)


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_database_url_is_shown_without_its_password(password):
    for url in (f"postgresql://shopper:{password}@db.example:5432/shop", f"postgresql://host/db?password={password}"):
        shown = public_source(url)
        assert SECRET not in shown and "PGSECRET" not in shown, shown
        assert shown.startswith("postgresql://")


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_base_url_is_shown_without_its_password(password):
    shown = public_base_url(f"http://user:{password}@127.0.0.1:9/v1")
    assert "PGSECRET" not in shown, shown


def test_the_issue_url_keeps_its_user_and_place():
    assert (
        public_source(f"postgresql://shopper:2024/{SECRET}@db.example/shop") == "postgresql://shopper@db.example/shop"
    )
    assert public_source("postgresql://shopper@db.example:5432/shop") == "postgresql://shopper@db.example:5432/shop"


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize(
    "command",
    [["ask", "查询 ORD-1001"], ["orders", "list", "--all"], ["orders", "show", "ORD-1001"], ["doctor"]],
)
def test_no_command_prints_logs_or_records_the_password(password, command, monkeypatch):
    url = f"postgresql://shopper:{password}@127.0.0.1:9/shop"
    monkeypatch.setenv("ORDERBOT_ORDERS", url)
    result = cli(*command)
    assert "Traceback" not in result.output
    assert "PGSECRET" not in result.output, result.output
    assert "PGSECRET" not in every_byte_written()


@pytest.mark.parametrize("password", PASSWORDS[:2])
def test_import_refused_says_so_without_the_password(password, tmp_path):
    from orderbot.shops.sample.model import SAMPLE_PATH

    result = cli("orders", "import", str(SAMPLE_PATH), "--to", f"postgresql://shopper:{password}@127.0.0.1:9/shop")
    assert result.exit_code == 6 and "Traceback" not in result.output
    assert "PGSECRET" not in result.output and "PGSECRET" not in every_byte_written()
    assert "%2F" in result.output  # and the person learns how to write such a password


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_base_url_password_is_not_printed_or_recorded(password, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 40)
    url = f"http://user:{password}@127.0.0.1:9/v1"
    result = cli("ask", "--provider", "chat", "--timeout", "1", "--base-url", url, "查询 ORD-1001")
    assert "Traceback" not in result.output and "PGSECRET" not in result.output, result.output
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = cli("doctor")
    assert "PGSECRET" not in result.output, result.output
    assert "PGSECRET" not in every_byte_written()
