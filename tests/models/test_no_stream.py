"""--no-stream (ORDERBOT_NO_STREAM=1): ask and repl request each reply whole; without it
the providers stream. The loopback fake API says how each request was sent."""

from __future__ import annotations

import pytest
from clikit import cli
from fakeapi import FakeAPI, completion


def sent_streamed(*args: str, env: dict | None = None, input: str | None = None) -> list[bool]:
    """Whether each request the command sent to the server asked for a stream."""
    with FakeAPI() as api:
        api.enqueue("chat", completion("你好，我在。"))
        flags = ("--provider", "chat", "--base-url", api.url, "--model", "fake")
        result = cli(*args[:1], *flags, *args[1:], env=env, input=input)
        assert result.exit_code == 0 and "你好，我在。" in result.output, result.output
        return [request.body.get("stream") is True for request in api.requests_for("chat")]


@pytest.mark.parametrize("command", [("ask", "你好"), ("repl",)], ids=["ask", "repl"])
def test_no_stream_asks_for_the_reply_whole(command):
    typed = "你好\n" if command == ("repl",) else None
    assert sent_streamed(*command, input=typed) == [True]  # the providers stream unless told
    assert sent_streamed(command[0], "--no-stream", *command[1:], input=typed) == [False]
    assert sent_streamed(*command, env={"ORDERBOT_NO_STREAM": "1"}, input=typed) == [False]
