"""Answers as they arrive: in a terminal the answer panel fills while the server streams, the
size cap and the time limit still hold mid-stream, and piped output gets the answer whole.

The server is the loopback fake API, streaming on a schedule of its own (the only waiting in
these tests); when each word left the server and when it reached the screen are both read
from time.monotonic() in this process: the server runs in a thread here, and the terminal's
output is read here as it arrives, each piece stamped, then replayed on a pyte screen.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time

import pexpect
import pyte
import pytest
from clikit import cli
from fakeapi import FakeAPI, completion, sse, stream_of
from forked_terminal import orderbot_in_a_terminal

pytestmark = pytest.mark.slow  # a terminal reading a stream on a schedule

WORDS = [f"word{n:02d}" for n in range(1, 13)]
TEXT = " ".join(WORDS)
SECONDS = 5.0  # the server sends the 12 words over this long
# A word is on time when it is on screen before the server sends the word two places after
# it (0.83 s later): the server's own schedule is the yardstick, not a fixed number of
# seconds, so a loaded machine that draws later is not taken for one that waits for the end.
ON_SCREEN_BEFORE = 2
WAIT = 30


def words_on_a_schedule(sent: list[float], text: str = TEXT, gap: float = SECONDS / len(WORDS)):
    """The chat stream of `text`, one word per event, each sent `gap` seconds after the one
    before; `sent` gets the time each word went out."""
    for chunk in sse("chat", completion(text), piece=len(WORDS[0]) + 1):
        line = chunk.decode()
        if line.startswith("data: {"):
            choices = json.loads(line[6:])["choices"]
            if choices and choices[0]["delta"].get("content"):
                threading.Event().wait(gap)  # the server's schedule
                sent.append(time.monotonic())
        yield chunk


def environment(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "OPENAI_API_KEY")}
    return {**env, "LANG": "C.UTF-8", "TERM": "xterm", "ORDERBOT_STATE_DIR": str(tmp_path / "state")}


def ask_in_terminal(
    api: FakeAPI, tmp_path, *args: str, columns: int = 80, env: dict | None = None
) -> tuple[list[tuple[float, str]], int]:
    """`orderbot ask` against the fake API in a pseudo-terminal of 24 rows: every piece of
    its output with the time it was read, and its exit code."""
    argv = ["ask", "--provider", "chat", "--base-url", api.url, "--model", "fake", *args, "say twelve words"]
    child = orderbot_in_a_terminal(
        argv, env=environment(tmp_path) | (env or {}), dimensions=(24, columns), timeout=WAIT
    )
    pieces = []
    while True:
        try:
            data = child.read_nonblocking(65536, timeout=WAIT)
        except pexpect.EOF:
            break
        pieces.append((time.monotonic(), data))
    child.close()
    return pieces, child.exitstatus


# Where a live display begins to redraw itself (carriage return, erase the line): one read
# may hold several frames, and each is looked at.
REDRAW = re.compile(r"(?=\r\x1b\[2K)")


def first_on_screen(pieces: list[tuple[float, str]], text: str, columns: int = 80) -> float | None:
    """When `text` was first on the 24-row screen, replaying the output frame by frame."""
    screen = pyte.Screen(columns, 24)
    stream = pyte.Stream(screen)
    for at, data in pieces:
        for frame in REDRAW.split(data):
            stream.feed(frame)
            if any(text in line for line in screen.display):
                return at
    return None


def final_screen(pieces: list[tuple[float, str]], columns: int = 80) -> list[str]:
    screen = pyte.Screen(columns, 200)
    pyte.Stream(screen).feed("".join(data for _, data in pieces))
    return [line.rstrip() for line in screen.display if line.strip()]


def test_each_streamed_word_is_on_screen_before_the_server_sends_the_word_after_next(tmp_path):
    sent: list[float] = []
    with FakeAPI() as api:
        api.enqueue("chat", stream_of(words_on_a_schedule(sent)))
        pieces, code = ask_in_terminal(api, tmp_path)
    assert code == 0 and len(sent) == len(WORDS)
    late = {}
    for number, word in enumerate(WORDS):
        seen = first_on_screen(pieces, word)
        assert seen is not None, f"{word} never appeared"
        later = number + ON_SCREEN_BEFORE
        if later < len(WORDS) and seen > sent[later]:
            late[word] = round(seen - sent[number], 3)
    assert not late, f"on screen only after the server sent the word {ON_SCREEN_BEFORE} places later: {late}"
    # The first word was on screen long before the last one was sent: the panel filled as it came.
    assert first_on_screen(pieces, WORDS[0]) < sent[-1] - 1
    # Once answered, the answer is shown once, whole, in its panel.
    lines = final_screen(pieces)
    assert sum("Answer" in line for line in lines) == 1, lines
    title = next(i for i, line in enumerate(lines) if "Answer" in line)
    inside = lines[title + 1 : title + 1 + next(i for i, line in enumerate(lines[title:]) if "╰" in line) - 1]
    assert " ".join(" ".join(inside).replace("│", " ").split()) == TEXT, lines


def test_a_streamed_answer_of_2_mb_stops_at_the_size_cap(tmp_path):
    with FakeAPI() as api:
        api.enqueue("chat", stream_of(sse("chat", completion("a" * 2_000_000), piece=1000)))
        pieces, code = ask_in_terminal(api, tmp_path, env={"ORDERBOT_MAX_RESPONSE_CHARS": "16000"})
    screen = "\n".join(final_screen(pieces))
    assert code == 3 and "Stopped: the model's response was too large" in screen, screen
    assert "stop reason: response_too_large" in screen
    assert first_on_screen(pieces, "a" * 40) is not None  # it was streaming until the cap
    # What reached the terminal is bounded by the screen, not by what the server sent.
    assert sum(len(data) for _, data in pieces) < 200_000


def test_the_time_limit_holds_while_the_answer_streams(tmp_path):
    sent: list[float] = []
    with FakeAPI() as api:
        api.enqueue("chat", stream_of(words_on_a_schedule(sent)))
        pieces, code = ask_in_terminal(api, tmp_path, "--timeout", "2")
        asked = api.requests_for("chat")[0].at
    screen = "\n".join(final_screen(pieces))
    assert code == 3 and "stop reason: time_limit" in screen, screen
    stopped = first_on_screen(pieces, "stop reason: time_limit")
    assert stopped - asked < 2 + 1.0  # the limit, and a second to say so
    assert first_on_screen(pieces, WORDS[1]) is not None  # words arrived before the limit ...
    assert first_on_screen(pieces, WORDS[-1]) is None  # ... and the run stopped before the last


def test_piped_output_and_json_get_the_answer_whole(tmp_path):
    with FakeAPI() as api:
        api.enqueue("chat", stream_of(sse("chat", completion(TEXT), piece=7)))
        api.enqueue("chat", stream_of(sse("chat", completion(TEXT), piece=7)))
        env = {"ORDERBOT_STATE_DIR": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
        base = ["ask", "--provider", "chat", "--base-url", api.url, "--model", "fake"]
        plain = cli(*base, "say twelve words", env=env)
        as_json = cli(*base, "--json", "say twelve words", env=env)
    assert plain.exit_code == 0 and plain.stdout.count("Answer") == 1 and plain.stdout.count(WORDS[0]) == 2
    assert "waiting for the model" not in plain.stdout  # the answer in the table's last row and its panel
    assert json.loads(as_json.stdout)["answer"] == TEXT
