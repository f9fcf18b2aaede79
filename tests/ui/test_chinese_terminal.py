"""Everything orderbot says, in Chinese: every catalogue entry, and a pseudo-terminal session
in zh_CN.UTF-8 of every command and its error paths, hold no English word of orderbot's own.

An English word is a run of two or more Latin letters in a piece of text that is not a
value: a piece holding a digit, `_ / : . = @ \\ { } < >` or starting with `-` is an id, a
flag, a path, a URL or JSON, and is left alone. What remains may still be a value people
type or copy (a command, a provider, a stop reason, a unit such as UTC): those are
ALLOWED. Words of the data (the orders, the eval suite, the questions) may appear too.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import threading
from pathlib import Path

import pexpect
import pytest
from clikit import cli
from fakeapi import FakeAPI, completion, hang
from forked_terminal import orderbot_in_a_terminal, orderbot_process_in_a_terminal
from runkit import plant_runs, write_record
from saying import stop_said

from orderbot.answers.evaluate import DEFAULT_SUITE as SUITE_PATH
from orderbot.commands import COMMAND_HELP
from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.limits import StopReason
from orderbot.loop.model_text import TEXTS
from orderbot.shops.sample.model import SAMPLE_PATH

pytestmark = pytest.mark.slow  # whole sessions in a terminal

VALUE = re.compile(r"[0-9_/:.=@\\{}<>]")
PIECES = re.compile(r"[\s\u3000-\u303f\uff00-\uffef·→…│╭╮╰╯─├┤┬┴┼+|!?,;()\[\]“”‘’]+")
CALL = re.compile(r"\b[a-z_]+\([^()]*\)")  # a tool call as shown: its arguments are the model's
# Words that are values or names, the same in every language.
ALLOWED = {
    *COMMAND_HELP, "orderbot", "show", "list", "import", "export", "approve", "reject", "verify",
    "offline", "openai", "OpenAI", "chat", "auto", "planner", "gpt", "mini", "fake", "sample", "retail", "tau", "bench",
    *(str(reason) for reason in StopReason), "incomplete",
    "on", "off", "y", "N", "Ctrl", "UTC", "URL", "API", "JSON", "ID", "SQLite", "PostgreSQL", "PayPal",
    "SIGTERM", "echo", "all", "exit", "quit", "help", "clear", "MCP", "Bearer", "PGOPTIONS", "chmod", "none",
    "ASCII", "NUL", "ORD", "psycopg", "http", "https", "llama", "cpp", "vLLM", "jinja", "zh", "en", "true", "false",
    "null", "ok", "HTTP", "Responses", "choices", "message", "tokens", "add", "revoke", "TOKEN", "NAME",
}  # fmt: skip


def english_words(text: str, allowed: set[str] = ALLOWED) -> list[str]:
    found = []
    for piece in PIECES.split(CALL.sub(" ", text)):
        if not piece or piece.startswith("-") or VALUE.search(piece):
            continue
        found += [w for w in re.findall(r"[A-Za-z]+", piece) if len(w) > 1 and w not in allowed]
    return found


def data_words(*paths: Path) -> set[str]:
    """Every word of some data files: what orderbot shows from them is theirs, not ours. With
    the start of each: a tool's JSON result folds at its column's edge, inside a key ("item|s")."""
    words = {w for path in paths for w in re.findall(r"[A-Za-z]+", path.read_text("utf-8"))}
    return words | {w[:n] for w in words for n in range(2, len(w))}


def lose_chinese(monkeypatch, message_id: str) -> str:
    """Give the entry its English text in Chinese too, as a forgotten translation would;
    returns that English."""
    english = MESSAGES[message_id]["en"]
    monkeypatch.setitem(MESSAGES, message_id, {"en": english, "zh": english})
    return english


def test_every_catalogue_entry_is_chinese_in_chinese():
    found = {}
    for message_id, texts in MESSAGES.items():
        words = english_words(re.sub(r"\{[^}]*\}", " ", texts["zh"]))
        if words:
            found[message_id] = words
    assert not found, f"English in the Chinese text of: {found}"


def test_the_walk_finds_an_entry_that_lost_its_chinese(monkeypatch):
    lose_chinese(monkeypatch, "outcome.to_resume")
    found = [i for i, texts in MESSAGES.items() if english_words(re.sub(r"\{[^}]*\}", " ", texts["zh"]))]
    assert found == ["outcome.to_resume"]


# ---- a session in a Chinese terminal ---------------------------------------------------------


def environment(state: Path, orders: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "ORDERBOT_", "OPENAI_"))}
    return env | {
        "LANG": "zh_CN.UTF-8",
        "NO_COLOR": "1",
        "TERM": "xterm",
        "ORDERBOT_STATE_DIR": str(state),
        "ORDERBOT_ORDERS": str(orders),
        "HOME": str(state),
    }


def in_terminal(env: dict, *args: str, answers: tuple[str, ...] = ()) -> str:
    child = orderbot_in_a_terminal(list(args), env=env, dimensions=(40, 120))
    for answer in answers:
        child.expect_exact("[y/N]")
        child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    return child.before


# Each command, as a person would type it; the state they run in is made by the ones before.
SESSION = [
    ("ask", "--user", "C001", "查询 ORD-1001 和 ORD-1002 的详情"),
    ("ask", "--user", "C001", "取消 ORD-1002"),  # asked at the prompt: answered n
    ("ask", "--trace", "--user", "C001", "查询 ORD-1001 和 ORD-9999"),
    ("ask", "--max-steps", "1", "查询 ORD-1003"),
    ("resume", "last", "--max-steps", "3"),
    ("runs",),
    ("runs", "show", "last"),
    ("runs", "show", "last", "--trace"),
    ("replay", "last"),
    ("doctor", "--ping"),
    ("eval",),
    ("orders", "list", "--user", "C001"),
    ("orders", "show", "ORD-1001", "--user", "C001"),
    ("approvals",),
    ("audit",),
    # error paths
    ("ask", "--user", "bad/user", "x"),
    ("ask", "--orders", "nothere.json", "x"),
    ("runs", "show", "nosuch"),
    ("ask", "--bogus", "x"),
    ("ask", "--max-steps", "x", "y"),
    ("ask", ""),
    ("ask",),
    ("nosuch",),
    ("orders", "list"),
    ("resume", "last", "--approve", "--reject"),
]


@pytest.fixture
def chinese(tmp_path: Path, orders_file: Path) -> dict:
    state = tmp_path / "state"
    return {"env": environment(state, orders_file), "state": state, "orders": orders_file}


def session_output(chinese: dict) -> str:
    env = chinese["env"]
    said = []
    for args in SESSION:
        said.append(in_terminal(env, *args, answers=("n",) if "取消 ORD-1002" in args else ()))
    paused = cli("ask", "--user", "C001", "取消 ORD-1002", env=env)  # piped: it waits
    assert paused.exit_code == 4, paused.output
    said.append(in_terminal(env, "approvals"))  # the paused run waits in the queue
    said.append(in_terminal(env, "resume", "last", "--reject"))
    said.append(in_terminal(env, "audit"))
    said.append(in_terminal(env | {"ORDERBOT_MAX_STEPS": "abc"}, "ask", "x"))
    for kind in NOT_JSON:  # last: the broken run record is the newest run
        said.append(in_terminal(env, *not_json_command(chinese["state"], kind)))
    said.append(in_terminal(env, "runs"))  # the broken record's row
    return "\n".join(said)


# Files that are not JSON, each read by a command: the parser's own words on where it broke
# (pydantic's for orders, a retail shop and an eval suite; Python's json module's for a run
# record) follow orderbot's sentence, and must be Chinese too.
NOT_JSON = {
    "orders": '{"orders": [{"order_id": "ORD-1001"}',
    "shop": '{"products": {}, "users": {} "orders": {}}',
    "suite": '{"cases": [}',
    "record": '{"format": "orderbot-run", "state": {"question": "unfinished',
}
BROKEN_RUN = "991231-235959-abcd"


def not_json_command(state: Path, kind: str) -> tuple[str, ...]:
    """The command that reads a `kind` of file holding NOT_JSON[kind], the file written."""
    if kind == "record":
        plant_runs([BROKEN_RUN], state)
        write_record(BROKEN_RUN, NOT_JSON[kind], state)
        return ("runs", "show", BROKEN_RUN)
    path = state.parent / f"broken-{kind}.json"
    path.write_text(NOT_JSON[kind], encoding="utf-8")
    if kind == "orders":
        return ("ask", "--orders", str(path), "x")
    if kind == "shop":
        return ("orders", "import", str(path), "--to", f"sqlite:///{state.parent / 'shop.db'}")
    return ("eval", str(path))


# The sentence each of those commands shows before the parser's own words.
NOT_JSON_SAYS = {
    "orders": "error.not_json",
    "shop": "error.not_json",
    "suite": "error.not_json",
    "record": "runs.record_not_json",
}


@pytest.mark.parametrize("kind", NOT_JSON)
@pytest.mark.parametrize("lost", [False, True])
def test_a_file_that_is_not_json_is_chinese_up_to_the_parsers_own_words(chinese, monkeypatch, kind, lost):
    """orderbot's sentence holds no English; after it the parser's own words, as it wrote them
    (never translated by matching them); and the check sees the sentence once it lost its Chinese."""
    if lost:
        lose_chinese(monkeypatch, NOT_JSON_SAYS[kind])
    result = cli("--lang", "zh", *not_json_command(chinese["state"], kind), env=chinese["env"])
    assert result.exit_code == 6, result.output
    sentence, said, parser = result.stderr.partition("JSON：")
    if not lost:
        assert said and not english_words(sentence), result.stderr
        assert re.search(r"line 1 column \d+", parser), result.stderr  # the parser's words, whole
    else:
        english = re.findall(r"[A-Za-z]{2,}", MESSAGES[NOT_JSON_SAYS[kind]]["en"])
        assert set(english_words(result.stderr)) & set(english), result.stderr


# Files that parse but are broken, each read by a command: the sentence naming the file, the
# record and the field, pydantic's words on what the field should be, the count of the other
# problems; and a run record that is not UTF-8 at all, with Python's words on the byte.
RETAIL_USER = json.loads((Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json").read_text("utf-8"))[
    "users"
]["noah_brown_6181"]
BAD_ORDER = {
    "order_id": "ORD-1001", "customer_id": "C001", "status": "处理中", "total": -5, "currency": "cny",
    "items": [{"sku": "A1", "name": "x", "quantity": 1, "unit_price": 1}],
    "created_at": "2024-01-01T00:00:00+08:00", "updated_at": "2024-01-01T00:00:00+08:00",
}  # fmt: skip
BROKEN = {
    "orders": json.dumps({"orders": [BAD_ORDER]}).encode(),
    "shop": json.dumps(
        {"products": {}, "users": {"u1": RETAIL_USER | {"user_id": "u1", "orders": [], "email": 7}}, "orders": {}}
    ).encode(),
    "record": b'{"format": "orderbot-run", "state": {"question": "\xff"}}',
}
# What each says in English, as it always has ({path} is the file).
BROKEN_IN_ENGLISH = {
    "orders": "{path}: order #1 (ORD-1001), field total: input should be greater than or equal to 0 "
    "(and 1 more problem)",
    "shop": "{path}: users.u1.email: input should be a valid string",
    "record": "{path}: the run record is corrupt (not valid JSON: 'utf-8' codec can't decode byte 0xff "
    "in position 50: invalid start byte)",
}
# The entries each shows, and a piece of the Chinese.
BROKEN_SAYS = {
    "orders": (("orders.bad_field", "orders.where_order_id", "pydantic.greater_than_equal", "error.and_more",
                "count.more_problem"), "第 1 个订单（ORD-1001）的字段 total：应大于或等于 0"),
    "shop": (("retail.bad_field", "pydantic.string_type"), "users.u1.email：应为文字"),
    "record": (("runs.record_not_json", "decode.byte", "decode.reason.invalid_start_byte"),
               "不是有效的 JSON：第 50 个字节 0xff 不是有效的 utf-8 编码：无效的起始字节"),
}  # fmt: skip


def broken_command(state: Path, kind: str) -> tuple[tuple[str, ...], Path | str]:
    """The command that reads a `kind` of file holding BROKEN[kind], and how it names the file."""
    if kind == "record":
        plant_runs([BROKEN_RUN], state)
        write_record(BROKEN_RUN, BROKEN[kind], state)
        return ("runs", "show", BROKEN_RUN), f"{state / 'runs.db'} run {BROKEN_RUN}"
    path = state.parent / f"broken-{kind}.json"
    path.write_bytes(BROKEN[kind])
    if kind == "orders":
        return ("ask", "--orders", str(path), "x"), path
    return ("orders", "import", str(path), "--to", f"sqlite:///{state.parent / 'shop.db'}"), path


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_file_is_said_as_before_in_english(chinese, kind):
    args, path = broken_command(chinese["state"], kind)
    result = cli("--lang", "en", *args, env=chinese["env"])
    assert result.exit_code == 6
    assert result.stderr == "orderbot: " + BROKEN_IN_ENGLISH[kind].format(path=path) + "\n"


def said_in_chinese(chinese: dict, kind: str) -> tuple[bool, str]:
    """Whether the command reading a broken `kind` of file says it in Chinese: the expected
    Chinese piece (which holds the full-width colons of the sentences without words), and no
    English word anywhere."""
    args, _ = broken_command(chinese["state"], kind)
    result = cli("--lang", "zh", *args, env=chinese["env"])
    assert result.exit_code == 6, result.output
    words = english_words(result.stderr, ALLOWED | {"total"})  # the field's name is the file's
    return BROKEN_SAYS[kind][1] in result.stderr and not words, result.stderr


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_file_is_chinese_after_the_colon(chinese, kind):
    chinese_throughout, stderr = said_in_chinese(chinese, kind)
    assert chinese_throughout, stderr


@pytest.mark.parametrize(("kind", "message_id"), [(k, i) for k, (ids, _) in BROKEN_SAYS.items() for i in ids])
def test_the_broken_file_check_finds_an_entry_that_lost_its_chinese(chinese, monkeypatch, kind, message_id):
    lose_chinese(monkeypatch, message_id)
    chinese_throughout, stderr = said_in_chinese(chinese, kind)
    assert not chinese_throughout, stderr


# Orders sources that cannot be used, each the one error line before a run: the entries it
# shows, and a piece of the Chinese.
RETAIL_DB = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
BAD_SOURCES = {
    "ftp://shop/orders": (("orders.unknown_source",), "无法识别的订单来源"),
    "sqlite://shop.db": (("orders.bad_sqlite_url",), "SQLite 数据库请写成"),
    "sqlite:///{tmp}/none.db": (("orders.no_sqlite_database",), "没有这个 SQLite 数据库"),
    str(RETAIL_DB): (("retail.no_customer",), "这个商店中没有客户 'nobody'"),
}
NOT_A_SOURCE = {"ftp://shop/orders", "sqlite://shop.db"}  # refused as typed: a usage error, not a setting


def source_said_in_chinese(chinese: dict, source: str) -> tuple[bool, str]:
    given = source.format(tmp=chinese["state"].parent)
    result = cli("--lang", "zh", "ask", "--orders", given, "--user", "nobody", "x", env=chinese["env"])
    assert result.exit_code == (2 if source in NOT_A_SOURCE else 6), result.output
    words = english_words(result.stderr, ALLOWED | {"nobody"})  # the --user given
    return BAD_SOURCES[source][1] in result.stderr and not words, result.stderr


@pytest.mark.parametrize("source", BAD_SOURCES)
def test_an_orders_source_that_cannot_be_used_is_said_in_chinese(chinese, source):
    chinese_throughout, stderr = source_said_in_chinese(chinese, source)
    assert chinese_throughout, stderr


@pytest.mark.parametrize(("source", "message_id"), [(s, i) for s, (ids, _) in BAD_SOURCES.items() for i in ids])
def test_the_source_check_finds_an_entry_that_lost_its_chinese(chinese, monkeypatch, source, message_id):
    lose_chinese(monkeypatch, message_id)
    chinese_throughout, stderr = source_said_in_chinese(chinese, source)
    assert not chinese_throughout, stderr


# Sentences said before a run or inside one, checked in this process (cheap: no terminal):
# the command, what it adds to the environment, the entry it shows, and a piece of the Chinese.
IN_PROCESS = {
    "unknown provider, flag": (("ask", "--provider", "foo", "x"), {}, "error.unknown_provider", "模型提供方"),
    "unknown provider, setting": (("ask", "x"), {"ORDERBOT_PROVIDER": "foo"}, "error.unknown_provider", "模型提供方"),
    "openai without a key": (("ask", "--provider", "openai", "x"), {}, "error.needs_api_key", "API 密钥"),
    # the decision in words; the envelope the model got holds its own English (model_text), as data
    "a refusal in the trace": (
        ("ask", "--trace", "--user", "C001", "查询订单 ORD-1003 的详情"),
        {},
        "decision.no_access",
        "拒绝：无权访问",
    ),
    # the help's usage line (the help texts themselves are English), and a usage error's line
    "-h, its usage line": (("ask", "-h"), {}, "usage.prefix", "用法：orderbot ask [选项]"),
    "-h, its placeholder": (("runs", "-h"), {}, "usage.options", "用法：orderbot runs [选项] 命令"),
    "a retail order": (
        ("orders", "show", "#W5866402", "--orders", str(RETAIL_DB), "--user", "olivia_ito_3591"),
        {},
        "retail_orders.fulfilment",
        "发货：运单 203283266934",
    ),
    "a usage error": (
        ("ask", "--bogus", "x"),
        {},
        "usage.line",
        "orderbot：没有 --bogus 这个选项（见 orderbot ask --help）",
    ),
}


def said_in_process(chinese: dict, case: str) -> tuple[bool, str]:
    args, env, _message_id, piece = IN_PROCESS[case]
    result = cli("--lang", "zh", *args, env=chinese["env"] | env)
    said = result.output
    if "-h" in args:
        said = next(line for line in said.splitlines() if "orderbot " in line)
    retail = data_words(RETAIL_DB) if str(RETAIL_DB) in args else set()  # the shop's data is its own
    words = english_words(said, allowed_here(chinese) | retail | MODEL_TEXT | {"foo"})
    return piece in said and not words, said


# What the model reads from orderbot: its own English, shown as the data the model got.
MODEL_TEXT = {w for text in TEXTS.values() for w in re.findall(r"[A-Za-z]+", text)}


@pytest.mark.parametrize("case", IN_PROCESS)
def test_what_is_said_before_and_inside_a_run_is_chinese(chinese, case):
    chinese_throughout, output = said_in_process(chinese, case)
    assert chinese_throughout, output


@pytest.mark.parametrize("case", IN_PROCESS)
def test_the_in_process_check_finds_an_entry_that_lost_its_chinese(chinese, monkeypatch, case):
    lose_chinese(monkeypatch, IN_PROCESS[case][2])
    chinese_throughout, output = said_in_process(chinese, case)
    assert not chinese_throughout, output


def repl_output(chinese: dict) -> str:
    """The REPL: its banner, every slash command, a run with its step lines, a limit stop,
    and Ctrl-C during a model request."""
    arrived = threading.Event()

    def hold(request):
        arrived.set()
        return hang()

    with FakeAPI() as api:
        api.enqueue("chat", hold, completion("好的。"))
        env = chinese["env"]
        child = orderbot_process_in_a_terminal(["repl", "--user", "C001"], env=env, dimensions=(40, 120))
        said = ""
        for line in ("/help", "/limits", "/limits steps=0", "/limits bogus=1", "/trace", "/trace on",
                     "查询 ORD-1001", "/trace off", "/user", "/runs", "/reset", "/nope", "/user bad/user",
                     "/limits steps=1", "ORD-1013 的详情"):  # fmt: skip
            child.expect_exact("C001> ")
            said += child.before
            child.sendline(line)
        child.expect_exact("按 c")
        child.send("x")
        child.expect_exact("C001> ")
        said += child.before
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        said += child.before
        args = ["repl", "--user", "C001", "--provider", "chat", "--base-url", api.url, "--model", "fake"]
        child = orderbot_process_in_a_terminal(args, env=env, dimensions=(40, 120))
        child.expect_exact("C001> ")
        child.sendline("第一个问题")
        assert arrived.wait(30)
        child.sendintr()  # Ctrl-C while the model is asked
        child.expect_exact("C001> ")
        said += child.before
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
    return said


def allowed_here(chinese: dict) -> set[str]:
    typed = {w for args in SESSION for arg in args for w in re.findall(r"[A-Za-z]+", arg)}
    operator = set(re.findall(r"[A-Za-z]+", getpass.getuser()))  # who runs orderbot: audit and approvals name them
    return ALLOWED | typed | operator | data_words(SAMPLE_PATH, chinese["orders"], SUITE_PATH)


def test_a_chinese_session_holds_no_english_of_orderbots_own(chinese):
    said = session_output(chinese) + repl_output(chinese)
    said = re.sub(r"JSON：[^\n]*", "JSON：", said)  # where a file is not JSON, the parser's own words follow
    assert "已停止" in said and "运行编号" in said and "（见 orderbot ask --help）" in said  # it ran, in Chinese
    words = english_words(said, allowed_here(chinese))
    assert not words, f"English in a Chinese terminal: {sorted(set(words))}"


def test_the_session_finds_each_entry_that_lost_its_chinese(chinese, monkeypatch):
    """The forked terminals share this process's catalogue: an entry in English shows. The
    entries lose their Chinese together and the session runs once, and each one's English
    must be among the words found (a session takes seconds: once, not once per entry)."""
    lost = {message_id: lose_chinese(monkeypatch, message_id) for message_id in LOST_IN_THE_SESSION}
    words = set(english_words(session_output(chinese), allowed_here(chinese)))
    missed = [i for i, english in lost.items() if not words & set(re.findall(r"[A-Za-z]{2,}", english))]
    assert not missed, (missed, sorted(words))


LOST_IN_THE_SESSION = ["outcome.answer", "event.started", "decision.executed", "usage.line"]


def test_json_stays_the_same_in_a_chinese_terminal(chinese):
    doc = json.loads(in_terminal(chinese["env"], "ask", "--json", "--max-steps", "1", "查询 ORD-1001"))
    assert doc["stop_reason"] == "step_limit" and stop_said(doc).startswith("the model asked for")


# ---- orders list and orders show: their headings and field names, apart from the data --------
# The session above cannot tell a heading from the data: `status` and `total` are words of the
# orders file too. Here every heading and every field name is read on its own and must hold no
# Latin letter; the data beside it may hold any.

LABELS = sorted(i for i in MESSAGES if i.startswith(("orders.heading.", "orders.field", "orders.item")))
LATIN = re.compile(r"[A-Za-z]")


def order_labels(chinese: dict) -> tuple[list[str], list[str]]:
    """(the headings of `orders list --all`, the field names of `orders show --all` for
    orders that have every field between them) as a Chinese terminal shows them."""
    orders = json.loads(chinese["orders"].read_text("utf-8"))
    cancelled = next(o for o in orders["orders"] if o["order_id"] == "ORD-1005")
    cancelled |= {"status": "已取消", "cancelled_at": "2026-11-30T10:00:00+08:00", "cancel_reason": "不想要了"}
    chinese["orders"].write_text(json.dumps(orders, ensure_ascii=False), "utf-8")
    listing = in_terminal(chinese["env"], "orders", "list", "--all").splitlines()
    headings = re.split(r"\s{2,}", listing[0].strip())
    names = []
    for order_id in ("ORD-1001", "ORD-1005"):
        for line in in_terminal(chinese["env"], "orders", "show", order_id, "--all").splitlines():
            name, colon, _ = line.partition("：")
            names.append(name if colon else line)  # no Chinese colon: the whole line is the name
    return headings, names


def test_orders_headings_and_field_names_are_chinese(chinese):
    headings, names = order_labels(chinese)
    assert len(headings) == 5 and not [h for h in headings if LATIN.search(h)], headings
    assert not [name for name in names if LATIN.search(name)], names
    zh = {MESSAGES[i]["zh"] for i in LABELS if "{" not in MESSAGES[i]["zh"]}
    assert zh <= set(headings) | set(names), zh - set(headings) - set(names)  # every one was shown


@pytest.mark.parametrize(
    "message_id", ["orders.heading.status", "orders.field", "orders.field.shipping.city", "orders.item",
                   "orders.field.cancel_reason"],
)  # fmt: skip
def test_the_orders_check_finds_a_heading_or_field_that_lost_its_chinese(chinese, monkeypatch, message_id):
    """One of each kind (the test above walks them all in the real output): the check sees it."""
    lose_chinese(monkeypatch, message_id)
    headings, names = order_labels(chinese)
    assert [label for label in headings + names if LATIN.search(label)], (headings, names)
