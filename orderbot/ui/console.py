"""The one console every command prints through: what reaches the terminal from outside is
shown escaped (orderbot.ui.escape), and piped output is wide and has no trailing spaces.

Apart from the views that draw a run (render.py, trace.py), so that a command that draws none
(`ask -q`, `--json`) imports only Rich's console.
"""

from __future__ import annotations

import os
import re

from rich.console import Console
from rich.segment import Segment

from orderbot.ui.escape import visible
from orderbot.ui.terminal import end_quietly_on_closed_pipe

PIPED_WIDTH = 120
# Spaces before a line's end (and any style codes after them): Rich pads every table cell
# and line to the console width, which piped output should not carry.
TRAILING_SPACES = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")


class SafeConsole(Console):
    """A console that shows every piece of text through orderbot.ui.escape.visible after
    layout: no control, bidi or separator character from outside reaches the terminal,
    while the colour and cursor codes Rich emits for orderbot's own styles stay. Output
    that is not a terminal has no trailing spaces."""

    def _render_buffer(self, buffer):  # Rich's one place that turns segments into output

        text = super()._render_buffer(
            Segment(text if control else visible(text), style, control) for text, style, control in buffer
        )
        return text if self.is_terminal else TRAILING_SPACES.sub(r"\1", text)


def make_console() -> Console:
    # Rich's own NO_COLOR handling drops colours but keeps bold and dim; no styles at all is
    # what people who set it expect.
    plain = os.environ.get("NO_COLOR", "") != ""
    # No :emoji: codes: orderbot writes none, and text shown from outside is shown as it is.
    console = SafeConsole(highlight=False, soft_wrap=False, emoji=False, color_system=None if plain else "auto")
    console.on_broken_pipe = end_quietly_on_closed_pipe  # Rich's own exits 1, which replay uses for "differs"
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH  # piped: wide enough that rows stay on one line
    return console
