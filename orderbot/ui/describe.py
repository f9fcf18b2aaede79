"""A transition in words: the one place the engine's values (orderbot.loop.transitions)
become a person's sentence, in the UI language or the one asked for, for the table, the
trace, `runs show` and replay's report. The record and `--json` keep the values only.

What is orderbot's own sentence comes from the catalogue; what came from outside (a
question, a call, a result's data, a stop detail that is not orderbot's sentence) is shown
as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from orderbot.errors import Phrase
from orderbot.i18n import language, say, t
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.state import Event, describe_call, summarize_result
from orderbot.loop.transitions import (
    Awaiting,
    Called,
    Finished,
    Proposed,
    Recorded,
    Returned,
    SignIn,
    Started,
    Transition,
)
from orderbot.text import one_line


class Said(NamedTuple):
    event: str  # the event column: what happened
    detail: str  # the detail column: to what, with what result


def describe(transition: Transition, lang: str | None = None) -> Said:
    """The transition in words, in `lang` (default: the UI language)."""
    payload = transition.payload
    if isinstance(payload, Recorded):
        return Said(payload.event, payload.detail)
    return _SAYING[transition.kind](payload, transition.kind, lang or language())


def _started(p: Started, kind: Event, lang: str) -> Said:
    return Said(t(f"event.{kind}", lang=lang), one_line(p.question, 80))


def _proposed(p: Proposed, kind: Event, lang: str) -> Said:
    calls = p.request.calls
    count = len(calls)
    event = t("event.proposed_one" if count == 1 else "event.proposed", lang=lang, count=count)
    return Said(event, "; ".join(c.line() for c in calls))


def _called(p: Called, kind: Event, lang: str) -> Said:
    event = t("event.refused", lang=lang, code=p.decision) if kind is Event.REFUSED else t(f"event.{kind}", lang=lang)
    return Said(event, f"{p.call.line()} → {result_words(p.result, lang)}")


def result_words(result: dict, lang: str) -> str:
    """A call's result in a line: its data as compact JSON, or its failure. English keeps
    the tool's own message; other languages say the failure in orderbot's words."""
    summary = summarize_result(result)
    if lang == "en":
        return summary
    if result.get("ok"):
        return t("detail.call_ok", lang=lang, data=summary.removeprefix("ok "))
    return t("detail.call_failed", lang=lang, code=failure_words(str(result.get("code")), lang))


def failure_words(code: str, lang: str | None = None) -> str:
    """A tool's failure code in the words of the facts panel where it has them (`rejected`:
    nothing was done), else the code itself: a value people may look up."""
    if f"facts.{code}" in MESSAGES:
        try:
            return t(f"facts.{code}", lang=lang)
        except (KeyError, IndexError):  # a facts text that needs values the code alone lacks
            pass
    return code


def decision_words(decision: str, lang: str | None = None) -> str:
    """What dispatch decided about a call, in a word or two (one-line views): a refusal names
    its code, a value people may look up."""
    if f"decision_short.{decision}" in MESSAGES:
        return t(f"decision_short.{decision}", lang=lang)
    return t("decision_short.refused", lang=lang, code=decision)


def stop_words(message: Phrase | dict | None, detail: str, lang: str | None = None) -> str:
    """A stop's detail: orderbot's reason (a Phrase, or its JSON as the state keeps it) in
    `lang`, or the detail as it was recorded (outside text; an older record's English where
    this orderbot no longer has the sentence)."""
    phrase = message if isinstance(message, Phrase) else Phrase.from_json(message)
    if phrase is not None and (phrase.id in MESSAGES or not detail):
        return say(phrase, lang)
    return detail


def action_words(description: str, lang: str | None = None) -> str:
    """What a person is asked to approve (PendingCall.description), in the reader's language:
    the phrase the tool made, said now, whoever asked for it; an older record's sentence as it is."""
    phrase = Phrase.from_text(description)
    return say(phrase, lang) if phrase is not None else description


def action_value(description: str) -> dict | str:
    """The same for --json: the phrase's id and values, an older record's sentence as it is."""
    phrase = Phrase.from_text(description)
    return phrase.as_json() if phrase is not None else description


def _awaiting(p: Awaiting, kind: Event, lang: str) -> Said:
    names = "; ".join(describe_call(c.name, c.arguments) for c in p.pending)  # as the proposal showed them
    return Said(t("event.awaiting_approval", lang=lang), names)


def _signed_in(p: SignIn, kind: Event, lang: str) -> Said:
    detail = t("detail.signed_in", lang=lang, customer=p.customer, tool=p.tool)
    return Said(t("event.signed_in", lang=lang), detail)


def _returned(p: Returned, kind: Event, lang: str) -> Said:
    count, ok = p.results, p.ok
    message_id = "detail.returned_one" if count == 1 else "detail.returned"
    return Said(t("event.returned", lang=lang), t(message_id, lang=lang, count=count, ok=ok, failed=count - ok))


def _finished(p: Finished, kind: Event, lang: str) -> Said:
    return Said(t(f"event.finished.{p.reason}", lang=lang), stop_words(p.message, p.detail, lang))


_SAYING: dict[Event, Callable[[Any, Event, str], Said]] = {
    Event.STARTED: _started,
    Event.RESUMED: _started,
    Event.PROPOSED: _proposed,
    Event.EXECUTED: _called,
    Event.APPROVED: _called,
    Event.REJECTED: _called,
    Event.REFUSED: _called,
    Event.AWAITING_APPROVAL: _awaiting,
    Event.SIGNED_IN: _signed_in,
    Event.RETURNED: _returned,
    Event.FINISHED: _finished,
}
