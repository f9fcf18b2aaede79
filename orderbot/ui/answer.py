"""A run's outcome without a table: the answer alone (`ask -q`), or why there is none, in one
line. The drawn outcome (the answer's panel, the facts, the resume hint) is render.py's.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from orderbot.i18n import t as _t
from orderbot.loop.limits import StopReason
from orderbot.loop.state import RunState
from orderbot.ui.describe import stop_words
from orderbot.ui.escape import visible

if TYPE_CHECKING:
    from orderbot.runner import RunResult


def format_stop(state: RunState, *, elsewhere: bool = False) -> str:
    """Why the run stopped, in a sentence and its detail. `elsewhere`: a pause this operator
    may not approve (four eyes, or not one of the store's approvers) says that another must."""
    reason = state.stop_reason
    if reason is None or reason is StopReason.ANSWERED:
        return ""
    waits_for_another = elsewhere and reason is StopReason.AWAITING_APPROVAL
    sentence = _t("stop.awaiting_another" if waits_for_another else f"stop.{reason}")
    detail = stop_words(state.stop_message, state.stop_detail).rstrip(".")  # orderbot's own: in the UI language
    return _t("outcome.stop", sentence=sentence, detail=detail[:1].upper() + detail[1:]) if detail else sentence


def print_answer_only(result: RunResult, *, elsewhere: bool = False) -> None:
    """`ask -q`: the answer alone on stdout, as a script reads it; a run that did not answer
    says why in one line on stderr (its sentence, stop reason and run id), nothing on stdout.
    `elsewhere`: as for format_stop."""
    state = result.state
    if state.stop_reason is StopReason.ANSWERED:
        sys.stdout.write(visible(state.answer or "") + "\n")
        return
    stop_line = _t("outcome.stop_line", reason=state.stop_reason, run_id=state.run_id)
    said = f"{format_stop(state, elsewhere=elsewhere)} · {stop_line}"
    print(_t("error.prefix", error=visible(said, one_line=True)), file=sys.stderr)
