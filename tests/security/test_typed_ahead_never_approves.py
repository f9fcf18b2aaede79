"""A key typed before the approval prompt was shown never answers it: a `y` typed while the
model was still working (the person's next question, or a stray key) would otherwise
approve a cancellation the person never read. In the REPL and in `ask`, in a real
pseudo-terminal; the slow model is the loopback fake API, holding its reply until the test
has typed ahead."""

from __future__ import annotations

import json
import os
import threading

import pexpect
import pytest
from fakeapi import FakeAPI, completion, tool_call
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal

pytestmark = pytest.mark.slow  # terminal sessions

WAIT = 30  # seconds pexpect waits for text that should come at once; never slept
CANCEL = completion(tool_calls=[tool_call("cancel_order", {"order_id": "ORD-1002", "reason": "不想要了"})])


def status(orders_file, order_id: str) -> str:
    return next(o["status"] for o in json.loads(orders_file.read_text("utf-8"))["orders"] if o["order_id"] == order_id)


@pytest.mark.parametrize("command", ["repl", "ask"])
def test_y_typed_while_the_model_works_does_not_approve_the_call_it_proposes(command, orders_file, tmp_path):
    arrived, release = threading.Event(), threading.Event()

    def proposes_a_cancellation(request):
        arrived.set()
        release.wait(WAIT)
        return CANCEL

    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env |= {"ORDERBOT_STATE_DIR": str(tmp_path / "state"), "NO_COLOR": "1", "TERM": "xterm", "HOME": str(tmp_path)}
    with FakeAPI() as api:
        api.enqueue("chat", proposes_a_cancellation, completion("好的，没有取消。"))
        flags = ["--orders", str(orders_file), "--user", "C001", "--provider", "chat", "--base-url", api.url,
                 "--model", "fake-model"]  # fmt: skip
        if command == "repl":
            child = orderbot_process_in_a_terminal(["repl", *flags], env=env, dimensions=(40, 120), timeout=WAIT)
            child.expect_exact("orderbot C001> ")
            child.sendline("取消 ORD-1002")
        else:
            child = orderbot_in_a_terminal(["ask", *flags, "取消 ORD-1002"], env=env, dimensions=(40, 120),
                                           timeout=WAIT)  # fmt: skip
        assert arrived.wait(WAIT), "the request never reached the fake API"
        child.expect_exact("waiting for the model")
        child.send("y\r")  # typed ahead: the prompt is not on screen yet
        release.set()
        child.expect_exact("[y/N]")
        assert status(orders_file, "ORD-1002") == "处理中"
        child.send("n\r")  # the answer the person gives once they have read the question
        child.expect_exact("rejected")
        if command == "repl":
            child.expect_exact("orderbot C001> ")
            child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
    assert status(orders_file, "ORD-1002") == "处理中"
