"""`orderbot replay` in Chinese: every sentence of its report, each kind of difference and
note included, holds no English word of orderbot's own (the checker of
tests/ui/test_chinese_terminal.py, run in-process: a replay takes no terminal)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from clikit import cli
from runkit import only_run, open_store, record_bytes, write_record
from test_chinese_terminal import ALLOWED, data_words, english_words, lose_chinese

from orderbot.i18n.catalogue import MESSAGES
from orderbot.loop.limits import StopReason
from orderbot.shops.sample.model import SAMPLE_PATH


def _changed_orders(orders: Path, tmp: Path) -> Path:
    changed = tmp / "changed-orders.json"
    doc = json.loads(orders.read_text(encoding="utf-8"))
    doc["orders"][1]["status"] = "已发货"  # ORD-1002 shipped since the run
    changed.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return changed


def _versions(record) -> None:
    record.tool_versions["get_order_status"] = "0" * 12
    record.tool_versions["list_everything"] = "1" * 12


def _stop(record) -> None:
    record.state.stop_reason = StopReason.STEP_LIMIT


def _answer(record) -> None:
    record.state.answer = "别的回答"


def _calls(record) -> None:
    first, *rest = record.state.calls
    record.state.calls = [*rest, dataclasses.replace(first, call_id="gone")]


def _steps(record) -> None:
    del record.transition_texts[-2]  # the results returned: the answer comes where they were


def _last_step(record) -> None:
    del record.transition_texts[-1]


# Each kind of difference or note, made by changing the record (saved again, so its tag holds).
CHANGES = [_versions, _stop, _answer, _calls, _steps, _last_step]


def replay_report_in_chinese(orders: Path, tmp: Path) -> str:
    asked = cli("ask", "--user", "C001", "--orders", str(orders), "查询 ORD-1001 和 ORD-1002 的详情")
    assert asked.exit_code == 0, asked.output
    runs = open_store()
    run_id = only_run()
    original = record_bytes(run_id)
    said = [cli("--lang", "zh", "replay", run_id, "--orders", str(_changed_orders(orders, tmp))).output]
    for change in CHANGES:
        write_record(run_id, original)
        record = runs.load(run_id)
        change(record)
        runs.save(record)
        said.append(cli("--lang", "zh", "replay", run_id, "--orders", str(orders)).output)
    return "\n".join(said)


def english_of_ours(said: str, orders: Path) -> list[str]:
    typed = {"ORD", "C001"}
    return english_words(said, ALLOWED | typed | data_words(SAMPLE_PATH, orders))


def test_a_replay_report_is_chinese_throughout(orders_file, tmp_path):
    said = replay_report_in_chinese(orders_file, tmp_path)
    # every kind was said
    for piece in (
        "原来是",
        "是新的调用",
        "不再发生",
        "没有这一步",
        "以 step_limit 停止",
        "回答不同",
        "已不存在",
        "变了",
    ):
        assert piece in said, (piece, said)
    assert not english_of_ours(said, orders_file), (english_of_ours(said, orders_file), said)


def _detectable(english: str) -> set[str]:
    """The words of an entry's English that the checker sees (not its values, as `note:`)."""
    return set(english_words(re.sub(r"\{[^}]*\}", " ", english)))


REPORT_ENTRIES = [i for i in MESSAGES if i.startswith("replay.") and _detectable(MESSAGES[i]["en"])]


def test_the_replay_check_finds_each_entry_that_lost_its_chinese(orders_file, tmp_path, monkeypatch):
    lost = {message_id: lose_chinese(monkeypatch, message_id) for message_id in REPORT_ENTRIES}
    words = set(english_of_ours(replay_report_in_chinese(orders_file, tmp_path), orders_file))
    missed = [i for i, english in lost.items() if not words & _detectable(english)]
    assert not missed, (missed, sorted(words))
