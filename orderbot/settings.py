"""Settings from flags, the environment and .env, in that order of precedence.

Flags are passed in as keyword arguments (the highest source in pydantic-settings); then
environment variables; then a `.env` file in the working directory; then the defaults.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from dotenv import dotenv_values
from platformdirs import user_state_dir
from pydantic import AliasChoices, Field, PrivateAttr, SecretStr, ValidationError, create_model, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from orderbot import keys
from orderbot.errors import ConfigError, Phrase, UsageError
from orderbot.loop.budget import Limits
from orderbot.loop.limits import LIMIT_SPECS, SPEC_OF, LimitSpec
from orderbot.text import UNPARSEABLE_URL, first_error, without_credentials

# A user id is short and plain: it is shown in prompts, records and the resume command.
USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def _limit_text(spec: LimitSpec) -> str:
    """A limit's line in .env.example: its help, its bounds and its flag."""

    def number(value: float) -> str:
        return f"{int(value):,}" if value == int(value) else f"{value:g}"

    high = number(spec.bounds["le"])
    if "gt" in spec.bounds:
        bounds = f"more than {number(spec.bounds['gt'])}, at most {high}"
    else:
        bounds = f"{number(spec.bounds['ge'])} to {high}"
    text = f"{spec.help[:-1]} ({bounds})."
    return f"{text} Flag: {spec.flag}" if spec.flag else text


# A setting per limit of the table (orderbot.loop.limits), checked when `Settings.limits`
# builds them, so no limit is named twice.
LimitSettings = create_model(
    "LimitSettings",
    __base__=BaseSettings,
    __config__=SettingsConfigDict(defer_build=True),  # never validated itself: Settings is
    **{spec.name: (spec.type, Field(spec.default, description=_limit_text(spec))) for spec in LIMIT_SPECS},
)


class Settings(LimitSettings):
    # Which settings came from flags: a bad one is a usage error (exit 2), not a config error.
    _flags: frozenset[str] = PrivateAttr(default_factory=frozenset)
    _key_from: Phrase | str | None = PrivateAttr(default=None)  # where api_key came from (doctor), never the key

    def typed(self, name: str) -> bool:
        """Whether setting `name` was typed on the command line: a value of it that a later
        check refuses is then a usage error (exit 2), and the same value from the
        environment or .env a configuration error (exit 6)."""
        return name in self._flags

    @property
    def key_from(self) -> Phrase | str | None:
        """Where the API key came from (the environment, ./.env, the key store), never the key."""
        return self._key_from

    def error_for(self, name: str) -> type[ConfigError]:
        """The error a refused value of setting `name` raises: UsageError when it was typed."""
        return UsageError if self.typed(name) else ConfigError

    # An empty value (ORDERBOT_ORDERS= in a .env copied from .env.example) means unset, for
    # every setting and every source; no float setting may be inf or nan.
    model_config = SettingsConfigDict(
        env_prefix="ORDERBOT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        env_ignore_empty=True,
        allow_inf_nan=False,
        defer_build=False,  # LimitSettings defers its own
    )

    # Each field's description is its comment in .env.example (env_example() writes it).
    provider: str = Field(
        "auto",  # checked against the provider registry when the model is created
        description="auto (chat when a base URL is set, else openai when OPENAI_API_KEY is set, else offline), "
        "offline, openai (Responses API) or chat (Chat Completions, for local OpenAI-compatible servers). "
        "Flag: --provider",
    )
    model: str = Field(
        "gpt-4o-mini",
        validation_alias=AliasChoices("ORDERBOT_MODEL", "MODEL_NAME"),
        description="The model's name as the provider knows it. Flag: --model",
    )
    api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_API_KEY"),
        description="The API key. Not needed for offline, nor for a local server given by OPENAI_BASE_URL.",
    )
    base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("ORDERBOT_BASE_URL", "OPENAI_BASE_URL"),
        description="An OpenAI-compatible base URL, e.g. http://localhost:11434/v1 for Ollama; with provider "
        "auto, setting it chooses chat. Empty means https://api.openai.com/v1. Flag: --base-url",
    )
    orders: str | None = Field(  # a JSON file path, sqlite:///path or postgresql://... (orderbot/shops/)
        None,
        description="The orders: a JSON file, sqlite:///shop.db or postgresql://user@host/db. Empty: "
        "./orders.json, else the bundled sample (read-only). Flag: --orders",
    )
    user: str | None = Field(
        None,
        max_length=64,
        description="Who is asking, a customer id such as C001. Empty: anonymous (status by exact id only). "
        "Flag: --user",
    )
    state_dir: Path | None = Field(
        None,
        description="Where run records and the log are kept. Empty: $XDG_STATE_HOME/orderbot. Flag: --state-dir",
    )
    # Chosen and checked by the command line before any setting loads (orderbot.cli, from the
    # same sources, --lang first); a field so that .env.example lists it with the others.
    lang: str | None = Field(
        None,
        description="The language orderbot prints in: zh or en. Empty: the locale (LC_ALL, LC_MESSAGES, "
        "LANG), else en. Flag: --lang",
    )

    # What a run shows: a setting per switch of `ask`; a flag can only turn one on.
    json_output: bool = Field(
        False,
        validation_alias=AliasChoices("ORDERBOT_JSON"),
        description="1: ask and resume print one JSON document instead of tables. Flag: --json",
    )
    trace: bool = Field(False, description="1: ask and repl show the full debugging view, per step. Flag: --trace")
    no_facts: bool = Field(
        False, description="1: leave out the facts panel (what the tools returned) under the answer. Flag: --no-facts"
    )
    strict_claims: bool = Field(
        False,
        description="1: exit 7 when the answer makes a claim the tools did not support. Flag: --strict-claims",
    )
    no_stream: bool = Field(
        False,
        description="1: ask and repl request each reply whole instead of streaming it (the openai and chat "
        "providers). Flag: --no-stream",
    )
    no_log: bool = Field(
        False,
        description="1: ask keeps no record of the run; a call that needs approval is then refused, since "
        "there would be nothing to resume. Flag: --no-log",
    )

    # Sent to the model server as max_output_tokens / max_tokens; None: derived from
    # max_response_chars (orderbot.models.base.output_token_cap).
    max_output_tokens: int | None = Field(
        None,
        ge=16,
        le=1_000_000,
        description="Output-token cap sent to the model server (max_output_tokens / max_tokens); empty: the "
        "response-size limit above divided by 4. A reply cut off by it stops as response_truncated.",
    )

    keep_runs: int = Field(
        200, ge=1, description="How many run records to keep in the state directory; older ones are pruned."
    )
    approval_ttl_hours: float = Field(
        24.0, gt=0, description="How long a call awaiting approval may still be approved, in hours."
    )
    # Where runs, the approval queue and the audit log are kept: sqlite:///runs.db or
    # postgresql://...; None: the state directory (orderbot/runs/stores.py).
    runs: str | None = Field(
        None,
        description="Where runs, approvals and the audit log are kept: sqlite:///runs.db or "
        "postgresql://role@host/db (empty: the state directory). Flag: --runs",
    )
    four_eyes: bool = Field(
        False, description="1: an action must be approved by an operator other than the one whose run asked for it."
    )
    # Never printed or logged (orderbot.runs.stores.audit_key); never stored in a SQLite store. A
    # PostgreSQL store keeps the key its owner gives for a log the desks keyed before its server
    # wrote the log, where only its functions read it (orderbot.runs.postgres).
    audit_key: SecretStr | None = Field(
        None,
        description="The audit key (32 characters or more) of a SQLite team store: each audit entry's link is an "
        "HMAC with it, which nobody without the key can forge; every desk of the store uses the same key. A "
        "PostgreSQL store's desks need none: its server links the log.",
    )
    audit_key_file: Path | None = Field(
        None, description="A file holding the audit key (readable by its owner only), instead of ORDERBOT_AUDIT_KEY."
    )
    # Runs older than this keep only their summary (and the audit log): orderbot runs prune.
    prune_after_days: float | None = Field(
        None,
        gt=0,
        description="Runs older than this many days keep only their summary and the audit log (empty: never).",
    )

    @field_validator(
        "api_key",
        "base_url",
        "user",
        "orders",
        "state_dir",
        "lang",
        "max_output_tokens",
        "runs",
        "prune_after_days",
        "audit_key",
        "audit_key_file",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        """Checked on load, wherever it came from, so a bad URL is one sentence before
        anything runs (never an SDK traceback); the value itself is not echoed."""
        if value is None:
            return value

        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
            ok = parts.scheme in ("http", "https") and bool(parts.hostname) and value.isprintable() and " " not in value
        except ValueError:
            ok = False
        if not ok:
            raise PydanticCustomError("base_url", "expected an http(s) URL such as http://localhost:11434/v1")
        return value

    @field_validator("model")
    @classmethod
    def _printable_model(cls, value: str) -> str:
        """A model name is sent to the server and shown in every header: no controls."""
        if not value.isprintable() or len(value) > 200:
            raise PydanticCustomError("model_name", "expected a model name in printable characters, e.g. gpt-4o-mini")
        return value

    @field_validator("orders", mode="before")
    @classmethod
    def _path_is_text(cls, value: object) -> object:
        return str(value) if isinstance(value, Path) else value

    @field_validator("user")
    @classmethod
    def _plain_user_id(cls, value: str | None) -> str | None:
        if value is not None and not USER_ID.fullmatch(value):
            raise PydanticCustomError(
                "user_id", "use 1 to 64 letters, digits or . _ - @, starting with a letter or digit (e.g. C001)"
            )
        return value

    @property
    def limits(self) -> Limits:
        try:
            return Limits(**{limit.name: getattr(self, limit.name) for limit in LIMIT_SPECS})
        except ValidationError as exc:
            raise describe_settings_error(exc) from None

    def resolved_state_dir(self) -> Path:
        if self.state_dir is not None:
            return self.state_dir

        return Path(user_state_dir("orderbot", appauthor=False))


# How an error message names a setting: the limits by their flag (or environment variable).
FLAG_NAMES = {limit.name: limit.shown for limit in LIMIT_SPECS} | {
    "user": "--user / ORDERBOT_USER",
    "max_output_tokens": "ORDERBOT_MAX_OUTPUT_TOKENS",
}


def public_base_url(url: str) -> str:
    """The base URL without user:password@, query or fragment: what may be printed and kept
    in a run record. The one place a base URL is stripped; a password that would make the
    URL parse wrongly is stripped all the same (orderbot.text.without_credentials)."""

    stripped = without_credentials(url)
    try:
        parts = urlsplit(stripped)
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 literal keeps its brackets
            host = f"[{host}]"
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return UNPARSEABLE_URL


# The environment variables a field is read from, where it has more than ORDERBOT_<FIELD>.
ENV_NAMES = {
    "model": ("ORDERBOT_MODEL", "MODEL_NAME"),
    "base_url": ("ORDERBOT_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("OPENAI_API_KEY",),
    "json_output": ("ORDERBOT_JSON",),
}


def describe_settings_error(exc: ValidationError, flags: Collection[str] = ()) -> ConfigError:
    """The error naming where the bad value came from: a flag that was given is a usage
    error (exit 2, as Typer's own); a variable names the environment or ./.env (exit 6)."""
    where, why = first_error(exc)
    field = where.split(".")[0] or "settings"
    field = next((name for name, names in ENV_NAMES.items() if field in names), field)  # pydantic names the alias
    if field == "base_url":
        error = UsageError if field in flags else ConfigError
        return error("settings.bad_base_url", source="--base-url" if field in flags else _source(field), why=why)
    if field in flags:
        flag = SPEC_OF[field].flag if field in SPEC_OF and SPEC_OF[field].flag else "--" + field.replace("_", "-")
        return UsageError("settings.bad_value", source=flag, why=why)
    return ConfigError("settings.bad_value", source=_source(field), why=why)


def _source(field: str) -> Phrase | str:
    """`ORDERBOT_MAX_STEPS in the environment`, `... in ./.env`: where a person can fix it."""

    names = ENV_NAMES.get(field, (f"ORDERBOT_{field.upper()}",))
    environ = {k.upper() for k in os.environ}
    for name in names:
        if name in environ:
            return Phrase("settings.in_environment", {"name": name})
    try:
        in_file = {k.upper() for k in dotenv_values(".env")}
    except OSError:
        in_file = set()
    for name in names:
        if name in in_file:
            return Phrase("settings.in_dotenv", {"name": name})
    return FLAG_NAMES.get(field, names[0])


def load_settings(**flags: object) -> Settings:
    """Settings with the flags that were given (None means not given) on top."""
    given = {key: value for key, value in flags.items() if value is not None and not _blank(value)}
    try:
        settings = Settings(**given)
        Limits(**{limit.name: getattr(settings, limit.name) for limit in LIMIT_SPECS})  # checked now, before a run
    except ValidationError as exc:
        raise describe_settings_error(exc, given) from None
    if settings.api_key is not None:
        key_from = _source("api_key")
    elif (stored := keys.stored("openai")) is not None:  # after the environment and ./.env
        settings = settings.model_copy(update={"api_key": SecretStr(stored)})
        key_from = Phrase("keys.from_store", {"path": keys.store_path()})
    else:
        key_from = None
    settings._flags = frozenset(given)
    settings._key_from = key_from
    return settings


def _blank(value: object) -> bool:
    return isinstance(value, str) and not value.strip()


# .env.example, section by section; env_example() fails on a field left out of every section.
ENV_EXAMPLE_HEAD = (
    "orderbot settings. Copy to .env (in the directory you run orderbot from) and fill in what you need; "
    "everything is optional. Precedence: command-line flags > environment variables > .env > the defaults "
    "shown here. Never commit a .env holding a real key. This file is written by "
    "orderbot.settings.write_env_example() from the settings themselves."
)
ENV_EXAMPLE_SECTIONS = (
    ("the model", ("provider", "model", "api_key", "base_url")),
    ("who and what", ("orders", "user", "state_dir", "lang")),
    ("what a run shows", ("json_output", "trace", "no_facts", "strict_claims", "no_stream", "no_log")),
    ("limits of one run", (*(spec.name for spec in LIMIT_SPECS), "max_output_tokens")),
    ("housekeeping", ("keep_runs", "approval_ttl_hours", "prune_after_days")),
    ("a team's runs (docs/team.md)", ("runs", "four_eyes", "audit_key", "audit_key_file")),
)
ENV_EXAMPLE_WIDTH = 92


def env_example() -> str:
    """The text of .env.example: every setting under its section, its description as the
    comment above it and its default as the value (empty for none or off)."""
    import textwrap  # only for writing the file and its test

    placed = [name for _title, names in ENV_EXAMPLE_SECTIONS for name in names]
    left_out = set(Settings.model_fields) - set(placed)
    if left_out or len(placed) != len(set(placed)):
        raise ValueError(f"ENV_EXAMPLE_SECTIONS must name each setting once; left out: {sorted(left_out)}")

    def comment(text: str) -> list[str]:
        return textwrap.wrap(
            text, ENV_EXAMPLE_WIDTH, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False
        )

    lines = comment(ENV_EXAMPLE_HEAD)
    for title, names in ENV_EXAMPLE_SECTIONS:
        lines += ["", f"# --- {title} ".ljust(ENV_EXAMPLE_WIDTH, "-")]
        for name in names:
            field = Settings.model_fields[name]
            *others, shown = ENV_NAMES.get(name, (f"ORDERBOT_{name.upper()}",))
            text = field.description or ""
            if others:  # before the flag, which ends the comment
                said, flag, rest = text.rpartition(" Flag: ")
                also = f" Also read from {' or '.join(others)}."
                text = f"{said}{also}{flag}{rest}" if flag else text + also
            default = field.default
            if default is None or default is False:
                value = ""
            elif isinstance(default, float):
                value = f"{default:g}"
            else:
                value = str(default)
            lines += [*comment(text), f"{shown}={value}"]
    return "\n".join(lines) + "\n"


def write_env_example(path: Path = Path(".env.example")) -> None:
    """Write .env.example (run in a clone after changing a setting; tests/test_settings.py
    fails while the file differs from env_example())."""
    path.write_text(env_example(), encoding="utf-8")
