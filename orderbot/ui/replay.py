"""Replay's report in words (orderbot.runner.replay finds the differences as values): each
difference in the UI language, or the one asked for (a note is a Phrase: orderbot.i18n.say)."""

from __future__ import annotations

from orderbot.i18n import t
from orderbot.loop.state import CallRecord, summarize_result
from orderbot.runner.replay import AnswerDiffers, CallDiffers, Difference, Row, StepDiffers, StopDiffers
from orderbot.text import cut
from orderbot.ui.describe import decision_words, describe, result_words


def difference_words(diff: Difference, lang: str | None = None) -> str:
    if isinstance(diff, CallDiffers):
        was, now = diff.was, diff.now
        call = _call(was or now)
        if was is None:
            return t("replay.call_new", lang=lang, call=call, now=_outcome(now, lang))
        if now is None:
            return t("replay.call_gone", lang=lang, call=call, was=_outcome(was, lang))
        return t("replay.call_changed", lang=lang, call=call, was=_outcome(was, lang), now=_outcome(now, lang))
    if isinstance(diff, StepDiffers):
        return t("replay.step_changed", lang=lang, was=_row(diff.was, lang), now=_row(diff.now, lang))
    if isinstance(diff, StopDiffers):
        return t("replay.stop_changed", lang=lang, was=diff.was, now=diff.now)
    if isinstance(diff, AnswerDiffers):
        return t("replay.answer_changed", lang=lang)
    raise TypeError(diff)


def _call(call: CallRecord) -> str:
    return f"{call.name}({cut(call.arguments, 80)})"


def _outcome(call: CallRecord, lang: str | None) -> str:
    """What dispatch decided and what came back, in a line: the result's data as it is (it
    is the shop's), the rest in `lang`."""
    decision = decision_words(call.decision, lang)
    if call.result is None:
        return decision
    result = summarize_result(call.result, 160) if lang == "en" else cut(result_words(call.result, lang), 160)
    return f"{decision} → {result}"


def _row(row: Row | None, lang: str | None) -> str:
    if row is None:
        return t("replay.no_step", lang=lang)
    transition = row[1]
    said = describe(transition, lang)
    return t(
        "replay.step",
        lang=lang,
        from_=t(f"phase.{transition.from_}", lang=lang),
        to=t(f"phase.{transition.to}", lang=lang),
        event=said.event,
        detail=cut(said.detail, 100),
    )
