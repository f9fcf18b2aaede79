"""`raises(RecordError, match="cannot be replayed")`: pytest.raises for orderbot's errors,
which carry a Phrase (a message id and its values) rather than words: `match` is searched in
the English sentence a person would read (orderbot.i18n.say), as pytest's is in str()."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from orderbot.errors import Phrase
from orderbot.i18n import say


@contextmanager
def raises(expected: type[BaseException], *, match: str) -> Iterator[pytest.ExceptionInfo]:
    with pytest.raises(expected) as caught:
        yield caught
    said = say(caught.value, "en")
    assert re.search(match, said), f"{match!r} not in {said!r}"


def english(value: object) -> str:
    """What a person reading English is told of `value`: a Phrase, its JSON (a record's or
    --json's `stop_message`, a check's reason), an error carrying one, or text as it is."""
    phrase = Phrase.from_json(value) if isinstance(value, dict) else value
    return say(phrase, "en")


def stop_said(doc: dict) -> str:
    """Why a run stopped as --json (or a record's state) keeps it, in English: orderbot's
    reason (`stop_message`) when it has one, else the outside text (`stop_detail`)."""
    message = doc.get("stop_message")
    return english(message) if message else doc.get("stop_detail") or ""
