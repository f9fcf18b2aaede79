"""The views that draw a run on the screen: the transitions table (drawn live at a terminal)
and the outcome under it, the `--trace` panels, the REPL's one line per step, and the waiting
line while the model works.

One module for orderbot.commands.run to import when it draws a run, and only then: these
bring Rich's live display, its tables and panels, which `ask -q`, `--json` and the runs that
`orderbot mcp` serves never show (docs/architecture.md, the lazy boundaries).
"""

from orderbot.ui.render import TransitionView, print_header, print_outcome
from orderbot.ui.trace import StepLines, TraceView
from orderbot.ui.waiting import WaitingLine, watch

__all__ = ["StepLines", "TraceView", "TransitionView", "WaitingLine", "print_header", "print_outcome", "watch"]
