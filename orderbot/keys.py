"""The key store: API keys kept in the user's config directory (platformdirs), in one JSON
file of mode 0600, for a person who would rather not export OPENAI_API_KEY in every shell.
The environment and ./.env come first (orderbot.settings); a key is never printed, logged
or written anywhere else (`orderbot keys`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from platformdirs import user_config_dir

from orderbot.atomic import atomic_write
from orderbot.errors import ConfigError, Phrase

NAMES = ("openai",)  # the keys orderbot knows: the openai and chat providers' OPENAI_API_KEY
MAX_FILE_BYTES = 64 * 1024


def store_path() -> Path:
    return Path(user_config_dir("orderbot")) / "keys.json"


def stored(name: str) -> str | None:
    """The key kept under `name`, None when there is none; ConfigError in one sentence (the
    path, never the key) when the file is open to others or unreadable."""
    keys = _read(store_path())
    value = keys.get(name)
    return value if isinstance(value, str) and value.strip() else None


def save(name: str, key: str) -> Path:
    """Keep `key` under `name`, the file private (0600) whatever it was before."""
    path = store_path()
    keys = _read(path)
    keys[name] = key
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, json.dumps(keys).encode(), follow_links=False)
    os.chmod(path, 0o600)
    return path


def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            if os.name == "posix" and stat.S_IMODE(os.fstat(handle.fileno()).st_mode) & 0o077:
                raise ConfigError("keys.file_open", path=path)
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError("keys.unreadable", path=path, why=exc.strerror or type(exc).__name__) from None
    try:
        keys = json.loads(data) if len(data) <= MAX_FILE_BYTES else None
    except ValueError:
        keys = None
    if not isinstance(keys, dict):
        raise ConfigError("keys.unreadable", path=path, why=Phrase("keys.not_a_store"))
    return keys
