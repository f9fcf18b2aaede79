"""The named styles every view uses, in one place (as Typer keeps its Rich styles).

It imports nothing of orderbot, so any view may use it without import circles.
"""

STYLE_PHASE = "cyan"
STYLE_OK = "green"
STYLE_WARN = "yellow"
STYLE_ERROR = "red"
STYLE_DIM = "dim"
