"""The words orderbot speaks to the person at the terminal, in Chinese (`zh`) or English (`en`).

Every sentence orderbot itself prints comes from one catalogue, orderbot/i18n/catalogue.py:
a plain Python dict from a message id to its English and Chinese text, side by side, with
`str.format` placeholders. Plain dicts rather than gettext .po/.mo files because there are
two languages, no plural forms worth a library (Chinese has none; the English texts are
written to avoid them or take the count as a placeholder), nothing to compile at build
time, and a missing translation is caught by a test (tests/ui/test_i18n.py), not at run time.

    say(Phrase("runs.no_such_run", {"run_id": rid}))   # a Phrase (orderbot.errors), or an error carrying one
    t("stop.cancelled")                                 # in the chosen language
    t("error.question_too_long", chars=5000)            # placeholders are keyword arguments
    counted(3, "step")                                  # "3 steps", "3 步": count.<unit>, en as "one|many"

Literal braces in a text are doubled (`{{`), as for any `str.format` string.

Only the screen speaks: the floors below it (the loop, the runs, the shops, the models, the
answers, the runner) keep codes and values and raise `Phrase`s, and nothing there imports
this package (pyproject.toml's floors). Which language is orderbot.language's. What never
changes with the language, or with a copy edit here: `--json` keys and values, stop
reasons, exit codes, the run records on disk, and what is sent to the model (its own text
is orderbot.loop.model_text). The model and the offline planner answer in the language of
the question, whatever the UI language is.

This module has no I/O and imports nothing heavy: `--help` may use it.
"""

from __future__ import annotations

from collections.abc import Mapping

from orderbot.errors import Phrase
from orderbot.i18n.catalogue import MESSAGES
from orderbot.language import (  # noqa: F401 - the language is chosen there; the screen asks here
    DEFAULT,
    LANGUAGE_NAME,
    LANGUAGES,
    LOCALE_VARIABLES,
    language,
    language_from,
    normalize,
    set_language,
)


def t(message_id: str, /, lang: str | None = None, **params: object) -> str:
    """The message in the UI language (or `lang`), with its placeholders filled in; a
    parameter that is a Phrase is said first, in the same language."""
    lang = lang or language()
    return MESSAGES[message_id][lang].format(**{name: _said(value, lang) for name, value in params.items()})


def say(said: object, /, lang: str | None = None) -> str:
    """A `Phrase`, or an error carrying one, as a sentence in the UI language (or `lang`), its
    parameters said first when they are phrases too (a list of them, joined). A phrase's
    `otherwise` is another library's own English for it: an English reader gets those words
    as they are, another language the catalogue's sentence made from the values, and an id
    the catalogue lacks is shown as `otherwise`, else as it is. Anything that is not a phrase
    is shown as `str()` gives it."""
    phrase = getattr(said, "phrase", said)
    if not _is_phrase(phrase):
        return str(said)
    lang = lang or language()
    otherwise = getattr(phrase, "otherwise", None)
    texts = MESSAGES.get(phrase.id)
    if texts is None or (lang == "en" and otherwise is not None):  # another library's own English, as it is
        return otherwise if otherwise is not None else phrase.id
    if phrase.id.startswith("count."):
        return counted(int(phrase.params.get("count", 0)), phrase.id.removeprefix("count."), lang)
    try:
        return texts[lang].format(**{name: _said(value, lang) for name, value in phrase.params.items()})
    except (KeyError, IndexError, ValueError):  # values an older sentence had (a record's) and this one lacks
        return otherwise if otherwise is not None else str(phrase)


def _is_phrase(value: object) -> bool:
    """A Phrase, or a value of the same shape (an id and its values) a module keeps as its own
    (the audit check's Problem)."""
    return isinstance(value, Phrase) or (
        isinstance(getattr(value, "id", None), str) and isinstance(getattr(value, "params", None), Mapping)
    )


def _said(value: object, lang: str) -> object:
    if _is_phrase(value) or _is_phrase(getattr(value, "phrase", None)):  # a phrase, or an error of orderbot's
        return say(value, lang)
    if isinstance(value, list | tuple):  # a list (of phrases): each said, joined
        return MESSAGES["list.separator"][lang].join(str(_said(item, lang)) for item in value)
    return value


def counted(count: int, unit: str, /, lang: str | None = None) -> str:
    """`1 step`, `2 steps`, `2 步`: a number and its unit, from the catalogue's `count.<unit>`,
    whose English text holds the singular and the plural apart by `|`."""
    forms = MESSAGES[f"count.{unit}"][lang or language()].format(count=count).split("|")
    return forms[0] if count == 1 else forms[-1]
