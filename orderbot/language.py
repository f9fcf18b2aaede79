"""Which language orderbot speaks to the person at the terminal: Chinese (`zh`) or English (`en`).

Chosen once per process, in this order: `--lang`, then `ORDERBOT_LANG`, then the POSIX
locale variables `LC_ALL`, `LC_MESSAGES`, `LANG` (the first one set wins, as for any
program), else English. A locale that starts with `zh` means Chinese; anything else (`C`,
`POSIX`, `en_US.UTF-8`, `de_DE`) means English.

Only the choice lives here, standard library only and without a word of the catalogue, so
that the floors below the screen (the settings) can name and check a language; what is said
in it is orderbot.i18n's, above them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

LANGUAGES = ("en", "zh")
DEFAULT = "en"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

# A language as --lang or ORDERBOT_LANG may name it: `zh`, `en`, or a locale of one of them.
LANGUAGE_NAME = re.compile(r"(zh|en)(?:[-_.@][a-z0-9_.@-]*)?")

_current: str | None = None


def language_from(environ: Mapping[str, str], flag: str | None = None) -> str:
    """The UI language for a `--lang` value (None when not given) and an environment."""
    for value in (flag, environ.get("ORDERBOT_LANG")):
        if value and value.strip():
            return normalize(value)
    for name in LOCALE_VARIABLES:
        value = environ.get(name, "")
        if value:  # POSIX: the first one set decides, even if it names a language we lack
            return "zh" if value.lower().startswith("zh") else DEFAULT
    return DEFAULT


def normalize(value: str) -> str:
    """`zh`, `zh_CN.UTF-8`, `zh-Hans`, `ZH` -> zh; `en`, `en_GB`, `C` -> en; others (a
    language we lack, or anything holding more than a locale name may) are refused."""
    low = value.strip().lower()
    if low in ("c", "posix", "c.utf-8"):
        return "en"
    named = LANGUAGE_NAME.fullmatch(low)
    if named is None:
        raise ValueError(value)
    return named.group(1)


def set_language(lang: str | None) -> None:
    """Fix the language for this process (None: choose again from the environment)."""
    global _current
    _current = normalize(lang) if lang else None


def language() -> str:
    """The language chosen for this process. An ORDERBOT_LANG that names no language is
    refused by the command line before anything is printed; code that runs without it
    (a test) speaks English rather than fail."""
    global _current
    if _current is None:
        try:
            _current = language_from(os.environ)
        except ValueError:
            _current = DEFAULT
    return _current
