"""`raises(RecordError, match="cannot be replayed")`: pytest.raises for orderbot's errors,
which carry a Phrase (a message id and its values) rather than words: `match` is searched in
the English sentence a person would read (orderbot.i18n.say), as pytest's is in str()."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from orderbot.i18n import say


@contextmanager
def raises(expected: type[BaseException], *, match: str) -> Iterator[pytest.ExceptionInfo]:
    with pytest.raises(expected) as caught:
        yield caught
    said = say(caught.value, "en")
    assert re.search(match, said), f"{match!r} not in {said!r}"
