"""One sanitiser for everything that goes back to the model, fed nasty exceptions."""

from __future__ import annotations

import json
import logging
import traceback
import unicodedata

import pytest
from fuzz import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from orderbot.errors import ToolError
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.envelope import fail
from orderbot.loop.items import FunctionCall
from orderbot.loop.redact import MAX_ERROR_CHARS, sanitize
from orderbot.loop.tools import Tool, ToolContext


class Args(BaseModel):
    order_id: str


def raised(exc: BaseException) -> str:
    try:
        raise exc
    except BaseException:  # noqa: BLE001
        return traceback.format_exc()


# (message, strings that must not reach the model)
NASTY = [
    (raised(RuntimeError("boom at /srv/app/db.py")), ["Traceback", "/srv/app", "db.py", "line"]),
    ("wrapper: " + raised(ValueError("x")), ["Traceback", "File", "ValueError"]),
    ('File "/home/x/orderbot/orders.py", line 12, in cancel', ["/home/x", "orders.py"]),
    ("cannot open /home/x/.config/orderbot/secret.json", ["/home/x", "secret.json", ".config"]),
    (r"cannot open C:\Users\Bob Smith\AppData\orders.json", ["Users", "Bob Smith", "AppData", "orders.json"]),
    (r"share \\fileserver\orders\x.json is offline", ["fileserver", "x.json"]),
    ("relative orderbot/models/openai.py failed", ["orderbot/models", "openai.py"]),
    ("OpenAI key sk-proj-AbCdEf1234567890XyZ rejected", ["sk-proj", "AbCdEf1234567890XyZ"]),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig", ["eyJhbGci", "eyJzdWIi"]),
    ("header bearer abc.def-ghi rejected", ["abc.def-ghi"]),
    ("password=hunter2; api_key: 12345", ["hunter2", "12345"]),
    ("aws AKIAIOSFODNN7EXAMPLE denied", ["AKIAIOSFODNN7EXAMPLE"]),
    ("token 0123456789abcdef0123456789abcdef01 leaked", ["0123456789abcdef0123456789abcdef01"]),
    ("GET http://10.0.0.5:8080/v1/orders?key=s3cret failed", ["10.0.0.5", "8080", "s3cret", "/v1/orders"]),
    ("postgres://admin:pw@db.internal:5432/orders down", ["admin", "pw@", "db.internal", "5432"]),
    ("connect db.internal refused", ["db.internal"]),
    ("redis at cache.prod.example.com:6379 timed out", ["cache.prod.example.com", "6379"]),
    ("bind 192.168.1.20 failed", ["192.168.1.20"]),
    ("bind fe80::1%eth0 and 2001:db8::8a2e:370:7334 and [::1]:8080", ["fe80", "2001:db8", "::1", "8080"]),
    ("mail ops@corp.example.com", ["ops@corp.example.com"]),
    ("bad\x1b[31m red \x1b]0;title\x07 \x00\x07\u202eevil\u200b", ["\x1b", "\x00", "\x07", "\u202e", "\u200b"]),
    ("first line\nsecond line with /etc/passwd", ["second", "/etc/passwd"]),
]


@pytest.mark.parametrize("message, hidden", NASTY, ids=range(len(NASTY)))
def test_nothing_secret_gets_through(message, hidden):
    clean = sanitize(message)
    for secret in hidden:
        assert secret not in clean
    assert_safe_shape(clean)


def assert_safe_shape(clean: str) -> None:
    assert clean and len(clean) <= MAX_ERROR_CHARS
    assert "\n" not in clean and "\r" not in clean
    assert not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in clean)


@pytest.mark.parametrize(
    "message",
    [
        "order ORD-1002 is 已发货; only orders that are 处理中 or 待付款 can be cancelled",
        "order_id: String should have at most 32 characters",
        "customer_id: Extra inputs are not permitted",
        "this needs a signed-in user: sign in with --user",
        "at 10:15:00 the std::vector and/or 1/2 of it",
    ],
)
def test_ordinary_messages_pass_unchanged(message):
    assert sanitize(message) == message


def test_very_long_text_is_bounded_and_a_cut_key_is_not_half_shown():
    message = "x " * 1000 + "sk-" + "A" * 5000
    clean = sanitize(message)
    assert len(clean) == MAX_ERROR_CHARS and clean.endswith("…")
    assert "sk-" not in clean and "AAAA" not in clean
    # A key cut by the pre-bound (1,200 characters here) leaves "sk-AB", too short to look
    # like a key; the URL before it shrinks to "<url>", so the stub would be visible.
    straddling = "http://" + "a" * 1187 + " " + "sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert sanitize(straddling) == "<url>"


def test_empty_or_only_secret_becomes_error():
    assert sanitize("") == "error"
    assert sanitize(raised(RuntimeError("x"))) == "error"


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=3000))
def test_any_text_comes_out_short_and_on_one_line(message):
    assert_safe_shape(sanitize(message))


# ---- every envelope passes through it ----------------------------------------------------


def run_tool(fn, user="C001") -> dict:
    toolbox = Toolbox([Tool("t", "test tool", Args, fn)])
    ctx = ToolContext(user=user, run_id="run-x")
    prepared = toolbox.prepare(FunctionCall(call_id="c1", name="t", arguments='{"order_id": "ORD-1"}'), ctx)
    return toolbox.execute(prepared, ctx)


def test_fail_sanitizes():
    assert fail("x", "see /home/x/log")["error"] == "see <path>"


def test_a_tool_error_message_is_sanitized():
    def tool(args, ctx):
        raise ToolError("lookup at http://10.0.0.5:8080/orders with sk-live-abcdefghijkl failed", "upstream")

    envelope = run_tool(tool)
    assert envelope == {"ok": False, "error": "lookup at <url> with <redacted> failed", "code": "upstream"}


def test_an_unexpected_exception_reaches_the_model_only_as_internal_error(caplog):
    def tool(args, ctx):
        raise RuntimeError("db.internal:5432 password=hunter2 at /srv/app.py")

    with caplog.at_level(logging.ERROR, logger="orderbot"):
        envelope = run_tool(tool)
    assert envelope == {
        "ok": False,
        "error": "the tool failed unexpectedly; the error was logged",
        "code": "internal_error",
    }
    assert "run-x" in caplog.text and "hunter2" in caplog.text  # the details are logged locally, not sent


def test_a_broken_permission_check_refuses_instead_of_crashing(caplog):
    def check(args, ctx):
        raise KeyError("/etc/orderbot/acl.json")

    toolbox = Toolbox([Tool("t", "test tool", Args, lambda a, c: "ran", check=check)])
    with caplog.at_level(logging.ERROR, logger="orderbot"):
        refused = toolbox.prepare(
            FunctionCall(call_id="c1", name="t", arguments='{"order_id": "ORD-1"}'),
            ToolContext(user="C001", run_id="run-x"),
        )
    assert refused.envelope["code"] == "internal_error" and "acl" not in json.dumps(refused.envelope)
    assert "acl.json" in caplog.text


def test_an_unknown_tool_name_is_sanitized_and_bounded():
    toolbox = Toolbox([])
    refused = toolbox.prepare(
        FunctionCall(call_id="c1", name="/home/x/" + "A" * 100, arguments="{}"), ToolContext(user=None, run_id="r")
    )
    assert refused.envelope["code"] == "unknown_tool" and "/home/x" not in refused.envelope["error"]
