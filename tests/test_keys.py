"""`orderbot keys`: a key store in the user's config directory, mode 0600, the key never
printed; the environment and ./.env come first; doctor says where the key came from."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pexpect
import pytest
from clikit import cli

KEY = "sk-test-0123456789abcdef"


def store() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "orderbot" / "keys.json"


def test_keys_set_keeps_the_key_private_and_never_prints_it():
    assert cli("keys", "path").stdout.strip() == str(store())
    saved = cli("keys", "set", "openai", input=KEY + "\n", env={"OPENAI_API_KEY": None})
    assert saved.exit_code == 0 and str(store()) in saved.stdout, saved.output
    assert stat.S_IMODE(store().stat().st_mode) == 0o600 and json.loads(store().read_text()) == {"openai": KEY}
    listed = cli("keys", "list", env={"OPENAI_API_KEY": None})
    doctor = cli("doctor", env={"OPENAI_API_KEY": None})
    assert listed.stdout == f"openai: the key store {store()}\n"
    assert f"set, from the key store {store()} (not shown)" in doctor.stdout and "provider:  openai" in doctor.stdout
    for result in (saved, listed, doctor):
        assert KEY not in result.output


def test_the_environment_and_dotenv_come_before_the_key_store():
    cli("keys", "set", "openai", input=KEY, env={"OPENAI_API_KEY": None})
    env = cli("doctor", "--json", env={"OPENAI_API_KEY": "sk-from-env"})
    assert "OPENAI_API_KEY in the environment" in cli("keys", "list", env={"OPENAI_API_KEY": "sk-from-env"}).stdout
    assert json.loads(env.stdout)["api_key_set"] is True
    Path(".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    assert cli("keys", "list", env={"OPENAI_API_KEY": None}).stdout == "openai: OPENAI_API_KEY in ./.env\n"


def test_bad_keys_are_one_sentence():
    assert cli("keys", "set", "anthropic", input=KEY).exit_code == 2
    empty = cli("keys", "set", "openai", input="\n")
    assert empty.exit_code == 2 and "the key is empty" in empty.stderr and not store().exists()
    cli("keys", "set", "openai", input=KEY, env={"OPENAI_API_KEY": None})
    store().chmod(0o644)
    opened = cli("keys", "list", env={"OPENAI_API_KEY": None})
    assert opened.exit_code == 6 and "chmod 600" in opened.stderr and KEY not in opened.output


@pytest.mark.slow  # a terminal
def test_keys_set_at_a_terminal_asks_without_echoing_the_key():
    from forked_terminal import orderbot_in_a_terminal

    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"LANG": "C.UTF-8", "TERM": "xterm"}
    child = orderbot_in_a_terminal(["keys", "set", "openai"], env=env)
    # The space after the colon comes from getpass, after it turned echo off and flushed what
    # was typed before: a key typed from here on is neither shown nor lost.
    child.expect_exact("openai key (not shown): ")
    child.sendline(KEY)
    child.expect_exact("mode 0600, not shown")
    seen = child.before
    child.expect(pexpect.EOF)
    assert KEY not in seen + child.before and json.loads(store().read_text()) == {"openai": KEY}
