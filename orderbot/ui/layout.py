"""Lines that break where a person expects: between the parts of a line, never inside a word.

A terminal wraps a long line wherever the edge falls (`1/6 call` / `s`), and Rich wraps at
spaces, which may still split what belongs together (`user` / `anonymous`, a budget's `]`
alone on a line). `flow()` lays out a line made of parts: it breaks only between parts
while each part fits, wraps a part longer than a line at its own spaces, and indents every
line after the first, so a continued line reads as one. The result is a Text with its line
breaks in it, printed as it is (`soft_wrap=True`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.text import Text

INDENT = 2  # cells before each continued line


def flow(
    console: Console,
    parts: Sequence[tuple[str, Text]],
    width: int | None = None,
    *,
    indent: int = INDENT,
    least: int = 20,
) -> Text:
    """`parts` as (separator before it, text) pairs laid out within `width` cells (the
    console's by default). A separator that ends a line keeps only its visible part (` · `
    becomes ` ·`; two spaces vanish)."""
    width = max(least, width or console.width)
    lines: list[Text] = []  # the finished lines
    line = Text()  # the line being filled; a continued line starts with its indent
    for index, (separator, part) in enumerate(parts):
        empty = not lines and not line.plain or line.plain == " " * indent
        # The separator after a part stays with it when the line ends there (` ·`): room for it too.
        after = cell_len(parts[index + 1][0].rstrip()) if index + 1 < len(parts) else 0
        if empty or line.cell_len + cell_len(separator) + part.cell_len + after <= width:
            line.append("" if empty else separator)
            line.append_text(part)
        elif part.cell_len + after <= width - indent:  # the next line takes it whole
            line.append(separator.rstrip())
            lines.append(line)
            line = Text(" " * indent) + part
        else:  # longer than a line: it starts here and wraps at its own spaces
            line.append(separator)
            line.append_text(part)
        if line.cell_len > width:
            lead = 0 if not lines else indent
            pieces = line[lead:].wrap(console, width - indent, justify="left", overflow="fold")
            for index, piece in enumerate(pieces):
                piece.rstrip()
                if index < len(pieces) - 1:
                    lines.append(Text(" " * (lead if index == 0 else indent)) + piece)
                else:
                    line = Text(" " * (lead if index == 0 else indent)) + piece
    lines.append(line)
    return Text("\n").join(lines)


def flow_dots(console: Console, text: str, style: str = "", width: int | None = None) -> Text:
    """A line of ` · `-separated parts (a header, a banner) broken only between them."""
    return flow(console, [(" · " if i else "", Text(p, style=style)) for i, p in enumerate(text.split(" · "))], width)


def hanging(
    console: Console, text: Text, width: int | None = None, *, first: int = 2, rest: int = 4, lead: str = ""
) -> Text:
    """`text` wrapped at its spaces within `width`, the first line indented `first` cells (or
    begun with `lead`, a label, padded to `first`) and the others `rest`: a list item or a
    labelled value whose second line is plainly part of it."""
    width = max(20, width or console.width)
    lines = text.wrap(console, width - max(first, rest), justify="left", overflow="fold")
    out = []
    for index, line in enumerate(lines):
        line.rstrip()
        start = lead + " " * (first - cell_len(lead)) if index == 0 else " " * rest
        out.append(Text(start) + line)
    return Text("\n").join(out)


def print_whole(console: Console, table: RenderableType) -> None:
    """A list as a table. Piped, it is printed as wide as its rows need, one line each, so
    that nothing is cut for a program or grep to miss (a run's question, an action, a
    reason); at a terminal the table keeps to the terminal's width."""
    width = console.width
    if console.is_terminal:
        console.print(table)
        return
    # Console.print never widens past the console's width: the console itself is widened.
    console.width = max(width, Measurement.get(console, console.options.update_width(1 << 16), table).maximum)
    try:
        console.print(table)
    finally:
        console.width = width


# Where a line of a table cell may break: at a space, after a call's `(`, a `,` or `;`, a
# JSON key's `:`, after a CJK character and before an ideograph; never inside a word, id,
# number or call, nor inside a short quoted value (`status="已发货"` stays whole, its quotes
# with it). A piece still wider than its cell breaks after a `key=`, before its value.
CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
IDEOGRAPH = "\u3400-\u9fff\uf900-\ufaff"  # a line may start with one, never with a comma
BREAK = re.compile(rf"(?<=\w\()|(?<=[,;])(?=\S)|(?<=\":)(?=[\"{{\[])|(?<=[{CJK}])|(?=[{IDEOGRAPH}])")
BEFORE_VALUE = re.compile(r"(?<=\w=)(?=[\"{\[])")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')  # a value shown in quotes, as a call's arguments are
SHORT_VALUE = 40  # characters: a quoted value this long or shorter is kept whole


def pieces(text: str, width: int | None = None) -> list[tuple[str, Text]]:
    """`text` as `flow()` parts: the runs between break points, each with the spaces before
    it; a run wider than `width` is broken before its values too."""
    quoted = [match.span() for match in QUOTED.finditer(text) if match.end() - match.start() <= SHORT_VALUE + 2]

    def cuts(where: re.Pattern, start: int, end: int) -> list[int]:
        found = (match.start() for match in where.finditer(text, start, end))
        return [at for at in found if start < at < end and not any(a < at < b for a, b in quoted)]

    parts: list[tuple[str, Text]] = []
    start = 0
    for index, word in enumerate(text.split(" ")):
        end = start + len(word)
        runs = _runs(start, end, cuts(BREAK, start, end))
        if width is not None:
            runs = [
                run
                for begin, stop in runs
                for run in (
                    _runs(begin, stop, cuts(BEFORE_VALUE, begin, stop))
                    if cell_len(text[begin:stop]) > width
                    else [(begin, stop)]
                )
            ]
        for position, (begin, stop) in enumerate(runs):
            parts.append((" " if index and not position else "", Text(text[begin:stop])))
        start = end + 1
    return parts


def _runs(start: int, end: int, cuts: list[int]) -> list[tuple[int, int]]:
    edges = [start, *dict.fromkeys(cuts), end]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def wrap_cell(console: Console, text: str, width: int) -> Text:
    """A table cell's text broken into lines of `width` cells at `pieces()` breaks only
    (a run longer than the line is folded: nothing else could hold it)."""
    if cell_len(text) <= width:  # the common case, and a cell's text as it is
        return Text(text)
    return flow(console, pieces(text, width), width, indent=0, least=1)
