"""The language orderbot speaks to the person at the terminal: Chinese (`zh`) or English (`en`).

Every sentence orderbot itself prints comes from one catalogue, orderbot/i18n/catalogue.py:
a plain Python dict from a message id to its English and Chinese text, side by side, with
`str.format` placeholders. Plain dicts rather than gettext .po/.mo files because there are
two languages, no plural forms worth a library (Chinese has none; the English texts are
written to avoid them or take the count as a placeholder), nothing to compile at build
time, and a missing translation is caught by a test (tests/ui/test_i18n.py), not at run time.

    t("stop.step_limit")                       # in the chosen language
    t("error.question_too_long", chars=5000)   # placeholders are keyword arguments
    counted(3, "step")                         # "3 steps", "3 步": count.<unit>, en as "one|many"

Literal braces in a text are doubled (`{{`), as for any `str.format` string.

The language is chosen once per process, in this order: `--lang`, then `ORDERBOT_LANG`,
then the POSIX locale variables `LC_ALL`, `LC_MESSAGES`, `LANG` (the first one set wins, as
for any program), else English. A locale that starts with `zh` means Chinese; anything
else (`C`, `POSIX`, `en_US.UTF-8`, `de_DE`) means English.

What never changes with the language: `--json` keys and values, stop reasons, exit codes,
the run records on disk, and what is sent to the model. The model and the offline planner
answer in the language of the question, whatever the UI language is.

This module has no I/O and imports nothing heavy: the engine and `--help` may use it.
"""

from __future__ import annotations

import functools
import os
import re
import string
from collections.abc import Mapping

from orderbot.i18n.catalogue import MESSAGES

LANGUAGES = ("en", "zh")
DEFAULT = "en"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

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


# A language as --lang or ORDERBOT_LANG may name it: `zh`, `en`, or a locale of one of them.
LANGUAGE_NAME = re.compile(r"(zh|en)(?:[-_.@][a-z0-9_.@-]*)?")


def set_language(lang: str | None) -> None:
    """Fix the language for this process (None: choose again from the environment)."""
    global _current
    _current = normalize(lang) if lang else None


def language() -> str:
    """The language chosen for this process. An ORDERBOT_LANG that names no language is
    refused by the command line before anything is printed; code that runs without it
    (a test, the engine) speaks English rather than fail."""
    global _current
    if _current is None:
        try:
            _current = language_from(os.environ)
        except ValueError:
            _current = DEFAULT
    return _current


def t(message_id: str, /, lang: str | None = None, **params: object) -> str:
    """The message in the UI language (or `lang`), with its placeholders filled in."""

    return MESSAGES[message_id][lang or language()].format(**params)


def say(said: object, /, lang: str | None = None) -> str:
    """A `Phrase` (orderbot.errors), or an error carrying one, as a sentence in the UI
    language (or `lang`), its parameters said first when they are phrases too. An id the
    catalogue lacks is text already (another library's words) and is shown as it is;
    anything else is shown as `str()` gives it."""
    phrase = getattr(said, "phrase", said)
    if not _is_phrase(phrase):
        return str(said)
    message_id, params = phrase.id, phrase.params
    texts = MESSAGES.get(message_id)
    if texts is None:
        return message_id
    said_params = {name: say(value, lang) if _is_phrase(value) else value for name, value in params.items()}
    return texts[lang or language()].format(**said_params)


def _is_phrase(value: object) -> bool:
    # By its shape: the catalogue sits on the floor below orderbot.errors and may not import it.
    return isinstance(getattr(value, "id", None), str) and isinstance(getattr(value, "params", None), Mapping)


def from_english(text: str, prefix: str, /) -> str:
    """`text`, an English message some library wrote, in the UI language when it is one of
    the catalogue's `prefix*` texts (placeholders match anything); else as it is."""
    if language() == "en":
        return text
    for message_id, pattern in _english_patterns(prefix):
        found = pattern.fullmatch(text.strip())
        if found:
            return t(message_id, **found.groupdict())
    return text


@functools.cache
def _english_patterns(prefix: str) -> list[tuple[str, re.Pattern]]:
    patterns = []
    for message_id, texts in MESSAGES.items():
        if message_id.startswith(prefix):
            body, named = "", set()
            # The literal parts as str.format reads them (a doubled brace is one brace).
            for literal, name, _spec, _conversion in string.Formatter().parse(texts["en"]):
                body += re.escape(literal)
                if name is not None:
                    body += f"(?P={name})" if name in named else f"(?P<{name}>.+?)"
                    named.add(name)
            patterns.append((message_id, re.compile(body, re.IGNORECASE)))
    return patterns


def counted(count: int, unit: str, /, lang: str | None = None) -> str:
    """`1 step`, `2 steps`, `2 步`: a number and its unit, from the catalogue's `count.<unit>`,
    whose English text holds the singular and the plural apart by `|`."""
    forms = t(f"count.{unit}", lang, count=count).split("|")
    return forms[0] if count == 1 else forms[-1]
