"""What the REPL's waiting line leaves on screen when Ctrl-C or SIGTERM ends a request
while the answer streams in: what had arrived, marked as cut, in the UI language."""

from __future__ import annotations

import pytest
from rich.console import Console

from orderbot.errors import Terminated
from orderbot.i18n import set_language
from orderbot.ui.waiting import WaitingLine

STREAMED = ("Order ORD-1001 has shipped ", "and should arrive on Friday")


def left_on_screen(stop: BaseException | None, lang: str = "en") -> str:
    console = Console(record=True, force_terminal=True, width=80, color_system=None)
    line = WaitingLine(console)
    set_language(lang)
    try:
        with line.waiting(30):
            for piece in STREAMED:
                line.streamed(piece)
            if stop is not None:
                raise stop
    except KeyboardInterrupt:
        pass
    finally:
        set_language(None)
    return console.export_text()


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), Terminated()], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_stream_stays_on_screen_marked_as_cut(stop):
    shown = left_on_screen(stop)
    assert "Partial answer (cut off)" in shown
    assert "".join(STREAMED) + " …" in shown
    assert "Cut off here: the run was cancelled while the answer was coming in." in shown


def test_in_chinese_the_mark_is_chinese():
    shown = left_on_screen(KeyboardInterrupt(), "zh")
    assert "不完整的回答（被截断）" in shown and "回答到此中断：回答传来时运行被取消了。" in shown
    assert "Cut off" not in shown and "Partial" not in shown
