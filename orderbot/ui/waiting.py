"""What a terminal shows while the model is asked: a turning spinner with the seconds waited
and left, the latest retry, and the answer as it streams in.

`Waiting` holds that state and draws it; `watch(model, view)` wraps a model so that each
request feeds a view's waiting line (`view.waiting(seconds)`, `view.retrying(...)`,
`view.streamed(piece)`). The transitions table of `ask` draws the line under its live
table; the REPL's step lines draw it alone, and it vanishes when the answer comes. Piped
output, `--json` and `--quiet` never wrap the model, so they show nothing of this and
get the answer whole.

The streamed text is what the provider read so far (the size cap and the time limit are
the provider's and the engine's, so a stream cut at the cap stops growing here too). It
is provisional: the run's outcome is printed the usual way once the model has answered,
so the streamed panel leaves the screen when the request ends. A retry starts it afresh.
Only when Ctrl-C (or SIGTERM) cuts a stream short does the REPL's waiting line leave what
had arrived on screen, marked as cut: the run is cancelled and has no answer, but what the
person was reading does not vanish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from orderbot.i18n import t
from orderbot.ui.escape import visible
from orderbot.ui.styles import STYLE_DIM, STYLE_OK, STYLE_WARN

REFRESH_PER_SECOND = 8  # the spinner and the clock; streamed text is drawn as it comes
MIN_REDRAW = 0.04  # seconds between two redraws for streamed text; the timer draws the rest
STREAM_TAIL_CHARS = 4000  # of the streamed text kept for drawing: only its end fits on screen


class Waiting:
    """The state of one model request in flight, and how it looks."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.clock = clock
        self._lock = threading.Lock()  # text arrives on the request's thread
        self._began: float | None = None
        self._left = 0.0
        self._spinner: Spinner | None = None  # one per request, so that its frames turn
        self._retry: str | None = None
        self._text = ""
        self._last_draw = 0.0

    @property
    def active(self) -> bool:
        return self._began is not None

    def begin(self, seconds_left: float) -> None:
        with self._lock:
            self._began, self._left = self.clock(), seconds_left
            self._spinner = Spinner("dots", style=STYLE_DIM)
            self._retry, self._text = None, ""

    def end(self) -> None:
        with self._lock:
            self._began = self._spinner = self._retry = None
            self._text = ""

    def retrying(self, reason: str, delay: float, attempt: int, attempts: int) -> None:
        with self._lock:
            self._retry = t("status.retry", reason=reason, delay=delay, attempt=attempt, attempts=attempts)
            self._text = ""  # the next attempt streams its own answer

    @property
    def text(self) -> str:
        """The streamed text so far (its last STREAM_TAIL_CHARS)."""
        with self._lock:
            return self._text

    def add_text(self, piece: str) -> bool:
        """Keep a streamed piece; whether it is time to draw it (not more often than MIN_REDRAW)."""
        with self._lock:
            if self._began is None:  # a request given up on may still be reading: not ours any more
                return False
            self._text = (self._text + piece)[-STREAM_TAIL_CHARS:]
            now = self.clock()
            if now - self._last_draw < MIN_REDRAW:
                return False
            self._last_draw = now
            return True

    def renderable(self) -> RenderableType | None:
        """The waiting line (and the retry, and the streamed answer so far); None when idle."""
        with self._lock:
            if self._began is None or self._spinner is None:
                return None
            elapsed = self.clock() - self._began
            self._spinner.update(
                text=Text(t("status.waiting", elapsed=elapsed, left=max(0.0, self._left - elapsed)), style=STYLE_DIM)
            )
            parts: list[RenderableType] = []
            if self._text:
                parts.append(self._answer_so_far(self._text))
            parts.append(self._spinner)
            if self._retry is not None:
                parts.append(Text(self._retry, style=STYLE_DIM))
            return Group(*parts)

    def _answer_so_far(self, text: str) -> Panel:
        """The streamed answer in its panel, only its last lines: a live display cannot
        redraw what has scrolled off the top of the screen."""
        width = max(10, self.console.width - 4)
        lines = Text(visible(text)).wrap(self.console, width)
        room = max(3, self.console.height // 2)
        shown = Text("\n").join(lines[-room:]) if len(lines) > room else Text("\n").join(lines)
        return Panel(
            shown,
            title=Text(t("outcome.answer")),
            title_align="left",
            border_style=STYLE_OK,
            box=box.ROUNDED,
        )

    def cut_answer(self, text: str) -> RenderableType:
        """What had streamed in when the run was cancelled, whole (up to its kept tail), in
        the panel of a partial answer and marked as cut, so nobody takes it for the answer."""
        shown = ("…" if len(text) >= STREAM_TAIL_CHARS else "") + text.rstrip() + " …"
        panel = Panel(
            Text(visible(shown)),
            title=Text(t("outcome.partial_answer")),
            title_align="left",
            border_style=STYLE_WARN,
            box=box.ROUNDED,
        )
        return Group(panel, Text(t("waiting.cut"), style=STYLE_WARN))


def watch(model, view):
    """`model`, with each request shown in `view`'s waiting line (see the module's docstring)."""
    return _Watched(model, view)


class _Watched:
    """A model whose requests feed a view's waiting line; otherwise the model."""

    def __init__(self, model, view) -> None:
        self._model, self._view = model, view

    def respond(self, request):
        with self._view.waiting(request.timeout):
            return self._model.respond(request._replace(on_retry=self._view.retrying, on_text=self._view.streamed))

    def __getattr__(self, name: str):
        return getattr(self._model, name)


class WaitingLine:
    """The waiting line on its own, for views that print whole lines (the REPL's steps):
    a live display that exists only while a request is in flight and leaves no trace."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.state = Waiting(console)
        self._live = None

    @contextmanager
    def waiting(self, seconds_left: float) -> Iterator[None]:
        self.state.begin(seconds_left)
        self._live = Live(
            console=self.console,
            get_renderable=self._screen,
            refresh_per_second=REFRESH_PER_SECOND,
            transient=True,
        )
        self._live.start()
        cut = ""
        try:
            yield
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM mid-request: keep what was being read
            cut = self.state.text
            raise
        finally:
            self.state.end()
            live, self._live = self._live, None
            live.stop()
            if cut.strip():
                self.console.print(self.state.cut_answer(cut))

    def _screen(self) -> RenderableType:
        return self.state.renderable() or Text("")

    def retrying(self, reason: str, delay: float, attempt: int, attempts: int) -> None:
        self.state.retrying(reason, delay, attempt, attempts)
        if self._live is not None:
            self._live.refresh()

    def streamed(self, piece: str) -> None:
        if self.state.add_text(piece) and self._live is not None:
            self._live.refresh()

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield  # only drawn while the model is asked, never while a person is
