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

from orderbot.errors import ConfigError, UsageError
from orderbot.i18n import t
from orderbot.loop.budget import Limits
from orderbot.loop.limits import LIMIT_SPECS, SPEC_OF
from orderbot.text import UNPARSEABLE_URL, first_error, without_credentials

# A user id is short and plain: it is shown in prompts, records and the resume command.
USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


# A setting per limit of the table (orderbot.loop.limits), checked when `Settings.limits`
# builds them, so no limit is named twice.
LimitSettings = create_model(
    "LimitSettings", __base__=BaseSettings, **{spec.name: (spec.type, spec.default) for spec in LIMIT_SPECS}
)


class Settings(LimitSettings):
    # Which settings came from flags: a bad one is a usage error (exit 2), not a config error.
    _flags: frozenset[str] = PrivateAttr(default_factory=frozenset)

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
    )

    provider: str = "auto"  # checked against the provider registry when the model is created
    model: str = Field("gpt-4o-mini", validation_alias=AliasChoices("model", "ORDERBOT_MODEL", "MODEL_NAME"))
    api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("api_key", "OPENAI_API_KEY"))
    base_url: str | None = Field(
        None, validation_alias=AliasChoices("base_url", "ORDERBOT_BASE_URL", "OPENAI_BASE_URL")
    )
    orders: str | None = None  # a JSON file path, sqlite:///path or postgresql://... (orderbot/shops/sample/stores/)
    user: str | None = Field(None, max_length=64)
    state_dir: Path | None = None

    # Sent to the model server as max_output_tokens / max_tokens; None: derived from
    # max_response_chars (orderbot.models.base.output_token_cap).
    max_output_tokens: int | None = Field(None, ge=16, le=1_000_000)

    keep_runs: int = Field(200, ge=1)
    approval_ttl_hours: float = Field(24.0, gt=0)
    # Where runs, the approval queue and the audit log are kept: sqlite:///runs.db or
    # postgresql://...; None: the state directory (orderbot/runs/stores.py).
    runs: str | None = None
    # A side effect must be approved by an operator other than the one whose run asked.
    four_eyes: bool = False
    # Runs older than this keep only their summary (and the audit log): orderbot runs prune.
    prune_after_days: float | None = Field(None, gt=0)

    @field_validator(
        "api_key",
        "base_url",
        "user",
        "orders",
        "state_dir",
        "max_output_tokens",
        "runs",
        "prune_after_days",
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
}


def describe_settings_error(exc: ValidationError, flags: Collection[str] = ()) -> ConfigError:
    """The error naming where the bad value came from: a flag that was given is a usage
    error (exit 2, as Typer's own); a variable names the environment or ./.env (exit 6)."""
    where, why = first_error(exc)
    field = where.split(".")[0] or "settings"
    # A URL naming a server is a configuration error wherever it came from (exit 6), as a bad
    # --orders database URL is: the flag parsed, the place it points to is what is wrong.
    if field == "base_url":
        return ConfigError(
            t("settings.bad_base_url", source="--base-url" if field in flags else _source(field), why=why)
        )
    if field in flags:
        flag = SPEC_OF[field].flag if field in SPEC_OF and SPEC_OF[field].flag else "--" + field.replace("_", "-")
        return UsageError(t("settings.bad_value", source=flag, why=why))
    return ConfigError(t("settings.bad_value", source=_source(field), why=why))


def _source(field: str) -> str:
    """`ORDERBOT_MAX_STEPS in the environment`, `... in ./.env`: where a person can fix it."""

    names = ENV_NAMES.get(field, (f"ORDERBOT_{field.upper()}",))
    environ = {k.upper() for k in os.environ}
    for name in names:
        if name in environ:
            return t("settings.in_environment", name=name)
    try:
        in_file = {k.upper() for k in dotenv_values(".env")}
    except OSError:
        in_file = set()
    for name in names:
        if name in in_file:
            return t("settings.in_dotenv", name=name)
    return FLAG_NAMES.get(field, names[0])


def load_settings(**flags: object) -> Settings:
    """Settings with the flags that were given (None means not given) on top."""
    given = {key: value for key, value in flags.items() if value is not None and not _blank(value)}
    try:
        settings = Settings(**given)
        Limits(**{limit.name: getattr(settings, limit.name) for limit in LIMIT_SPECS})  # checked now, before a run
    except ValidationError as exc:
        raise describe_settings_error(exc, given) from None
    settings._flags = frozenset(given)
    return settings


def _blank(value: object) -> bool:
    return isinstance(value, str) and not value.strip()
