"""A team's runs from the command line: `--runs`, the queue (`orderbot approvals`), four eyes,
the audit log (`orderbot audit`, `--verify`), pruning; on SQLite and the file store here
(tests/runs/test_team_postgres.py has PostgreSQL with two roles)."""

from __future__ import annotations

import io
import json
import os
import shlex
import sqlite3
from pathlib import Path

import pytest
from clikit import cli
from runkit import run_ids, sql, state_dir
from saying import english

from orderbot.errors import ExitCode
from orderbot.runs.base import operator_name
from orderbot.runs.tagged import tag_record
from orderbot.shops.sample.stores.jsonfile import JsonStore

CANCEL = "取消订单 ORD-1002"


@pytest.fixture
def runs_db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def paused(orders_file: Path, runs: str | None) -> str:
    extra = ["--runs", runs] if runs else []
    result = cli("ask", "--json", "--user", "C001", "--orders", str(orders_file), *extra, CANCEL)
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    assert doc["user"] == "C001" and doc["operator"] == operator_name()
    if runs:  # the team's queue is where it is settled, and the hint names the store as given
        assert doc["resume_command"] == f"orderbot approvals approve {doc['run_id']} --runs {runs}"
    return doc["run_id"]


def status(orders_file: Path, order_id: str = "ORD-1002") -> str:
    return JsonStore.load(orders_file).get(order_id).status


def queue(runs: str) -> list[dict]:
    result = cli("approvals", "--json", "--runs", runs)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def audit(runs: str | None, *args: str) -> list[dict]:
    result = cli("audit", "--json", *(["--runs", runs] if runs else []), *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_queue_lists_a_paused_run_with_its_customer_action_and_requester(orders_file, runs_db):
    run_id = paused(orders_file, runs_db)
    [waiting] = queue(runs_db)
    assert waiting["run_id"] == run_id and waiting["customer"] == "C001" and waiting["tool"] == "cancel_order"
    assert waiting["requested_by"] == operator_name() and waiting["expired"] is False
    assert english(waiting["description"]).startswith("Cancel ORD-1002")
    assert waiting["arguments"] == {"order_id": "ORD-1002", "reason": "用户要求取消"}  # an object, not JSON text
    table = cli("approvals", "--runs", runs_db).output
    assert run_id in table and "Cancel ORD-1002" in table and operator_name() in table
    listed = cli("runs", "--runs", runs_db).output
    assert "operator" in listed.splitlines()[0] and operator_name() in listed


def test_approve_from_the_queue_runs_the_call_for_the_runs_customer_and_audits_it(orders_file, runs_db):
    run_id = paused(orders_file, runs_db)
    result = cli("approvals", "approve", run_id, "--runs", runs_db, "--json")  # no --user: the run's customer
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["stop_reason"] == "answered" and doc["operator"] == operator_name() and doc["user"] == "C001"
    assert status(orders_file) == "已取消"
    assert queue(runs_db) == []
    entries = audit(runs_db)
    assert [(e["event"], e["requested_by"], e["decided_by"]) for e in entries] == [
        ("proposed", operator_name(), None),
        ("approved", operator_name(), operator_name()),
        ("executed", operator_name(), operator_name()),
    ]
    again = cli("approvals", "approve", run_id, "--runs", runs_db)
    assert again.exit_code == ExitCode.REFUSED  # settled first, by someone: not a broken setting
    assert f"cancel_order was already approved by {operator_name()}" in again.output
    assert status(orders_file) == "已取消"
    assert len(audit(runs_db)) == 3


def test_four_eyes_refuses_the_requesters_own_approval_and_nothing_runs(orders_file, runs_db):
    run_id = paused(orders_file, runs_db)
    result = cli("approvals", "approve", run_id, "--runs", runs_db, env={"ORDERBOT_FOUR_EYES": "1"})
    assert result.exit_code == ExitCode.REFUSED
    assert f"four eyes: {operator_name()} asked for the action of run {run_id} and cannot approve it" in result.output
    assert "Traceback" not in result.output
    resumed = cli("resume", run_id, "--approve", "--user", "C001", "--runs", runs_db, env={"ORDERBOT_FOUR_EYES": "1"})
    assert resumed.exit_code == ExitCode.REFUSED and "four eyes" in resumed.output
    assert status(orders_file) == "处理中"
    assert [e["event"] for e in audit(runs_db)] == ["proposed"]
    assert len(queue(runs_db)) == 1  # still waiting for another operator


def test_the_stores_own_approver_list_and_four_eyes_policy_hold_without_any_setting(orders_file, runs_db, tmp_path):
    run_id = paused(orders_file, runs_db)
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("INSERT INTO run_approvers VALUES ('somebody-else')")
    database.commit()
    refused = cli("approvals", "approve", run_id, "--runs", runs_db)
    assert (
        refused.exit_code == ExitCode.REFUSED
        and "is not on the run store's list of operators who may approve" in refused.output
    )
    database.execute("DELETE FROM run_approvers")
    database.execute("INSERT INTO run_policy VALUES ('four_eyes', 'on')")
    database.commit()
    refused = cli("approvals", "approve", run_id, "--runs", runs_db)
    assert refused.exit_code == ExitCode.REFUSED and "four eyes" in refused.output
    assert status(orders_file) == "处理中"


def test_reject_needs_a_reason_which_the_audit_log_keeps(orders_file, runs_db):
    run_id = paused(orders_file, runs_db)
    assert cli("approvals", "reject", run_id, "--runs", runs_db).exit_code == 2  # --reason is required
    assert cli("approvals", "reject", run_id, "--runs", runs_db, "--reason", "  ").exit_code == 2
    result = cli("approvals", "reject", run_id, "--runs", runs_db, "--reason", "客户\n已改主意")
    assert result.exit_code == 0, result.output
    assert status(orders_file) == "处理中"
    [proposed, rejected] = audit(runs_db)
    assert rejected["event"] == "rejected" and rejected["reason"] == "客户 已改主意"
    assert audit(runs_db, "--customer", "C002") == [] and len(audit(runs_db, "--tool", "cancel_order")) == 2
    assert len(audit(runs_db, "--operator", operator_name())) == 2
    assert audit(runs_db, "--since", "2999-01-01") == [] and len(audit(runs_db, "--until", "2999-01-01")) == 2


def test_audit_verify_finds_an_entry_changed_or_removed_by_hand(orders_file, runs_db, tmp_path):
    run_id = paused(orders_file, runs_db)
    assert cli("approvals", "approve", run_id, "--runs", runs_db).exit_code == 0
    verified = cli("audit", "--verify", "--runs", runs_db)
    assert verified.exit_code == 0 and "The audit log is intact: 3 entries" in verified.output
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("UPDATE run_audit SET decided_by = 'desk9' WHERE seq = 2")
    database.commit()
    changed = cli("audit", "--verify", "--runs", runs_db)
    assert changed.exit_code == 1 and "entry 2 was changed" in changed.output
    database.execute("UPDATE run_audit SET decided_by = ? WHERE seq = 2", (operator_name(),))
    database.execute("DELETE FROM run_audit WHERE seq = 3")  # the last entry: no link breaks
    database.commit()
    removed = cli("audit", "--verify", "--runs", runs_db, "--json")
    assert removed.exit_code == 1
    assert json.loads(removed.stdout)["problems"] == [
        f"the outcome of call_offline_1 of run {run_id} is in the queue but missing from the log: removed"
    ]


def test_the_state_directorys_store_keeps_the_audit_log_that_verify_checks(orders_file):
    run_id = paused(orders_file, None)
    assert cli("resume", run_id, "--approve", "--user", "C001").exit_code == 0
    assert [e["event"] for e in audit(None)] == ["proposed", "approved", "executed"]
    assert cli("audit", "--verify").exit_code == 0
    assert oct((state_dir() / "runs.db").stat().st_mode & 0o777) == "0o600"
    sql("DELETE FROM run_audit WHERE seq = 2")  # the approval taken out, with sqlite3
    broken = cli("audit", "--verify")
    assert broken.exit_code == 1 and "entry 2 is missing: removed" in broken.output


def test_prune_keeps_summaries_and_the_audit_and_refuses_resume(orders_file, runs_db):
    run_id = paused(orders_file, runs_db)
    assert cli("approvals", "approve", run_id, "--runs", runs_db).exit_code == 0
    before = audit(runs_db)
    assert json.loads(cli("runs", "prune", "--older-than", "0", "--runs", runs_db, "--json").stdout)["pruned"] == 1
    [summary] = json.loads(cli("runs", "--json", "--runs", runs_db).stdout)
    assert summary["run_id"] == run_id and summary["status"] == "answered" and summary["pruned_at"]
    assert audit(runs_db) == before
    shown = cli("runs", "show", run_id, "--runs", runs_db)
    assert shown.exit_code == 0 and "only the summary is kept" in shown.output
    replayed = cli("replay", run_id, "--runs", runs_db)
    assert replayed.exit_code == 6 and "was pruned" in replayed.output


def test_a_run_store_that_cannot_be_opened_stops_ask_before_any_run(orders_file, tmp_path):
    result = cli("ask", "--runs", f"sqlite:///{tmp_path / 'no-such-folder' / 'runs.db'}", "查询 ORD-1001")
    assert result.exit_code == 6 and "does not exist" in result.output and "Traceback" not in result.output
    assert run_ids() == []  # no run recorded


def test_a_piped_repl_records_in_the_store_runs_names_and_pauses_into_its_queue(orders_file, runs_db):
    typed = "取消订单 ORD-1002\n"
    command = ["repl", "--runs", runs_db, "--orders", str(orders_file), "--user", "C001"]
    result = cli(*command, input=typed)
    assert result.exit_code == 4, result.output  # piped, a session that paused exits as ask does
    [waiting] = queue(runs_db)
    assert waiting["customer"] == "C001" and waiting["tool"] == "cancel_order"
    assert run_ids() == []  # not in the state directory


def test_the_audit_key_from_a_file_or_the_environment_keys_the_log_and_is_never_stored_nor_shown(
    orders_file, runs_db, tmp_path
):
    key = "k3y-" + "9f" * 20
    key_file = tmp_path / "audit.key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    by_file = {"ORDERBOT_AUDIT_KEY_FILE": str(key_file)}
    result = cli(
        "ask", "--json", "--user", "C001", "--orders", str(orders_file), "--runs", runs_db, CANCEL, env=by_file
    )
    run_id = json.loads(result.stdout)["run_id"]
    assert cli("approvals", "approve", run_id, "--runs", runs_db, env={"ORDERBOT_AUDIT_KEY": key}).exit_code == 0
    for env in (by_file, {"ORDERBOT_AUDIT_KEY": key}):
        verified = cli("audit", "--verify", "--runs", runs_db, env=env)
        assert verified.exit_code == 0 and "with the audit key from entry 1 on" in verified.output
        assert key not in verified.output
    assert json.loads(cli("audit", "--verify", "--json", "--runs", runs_db, env=by_file).stdout)["keyed_from"] == 1
    stored = (tmp_path / "runs.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("runs.db*") if p.is_file()
    )
    logged = b"".join(p.read_bytes() for p in Path(os.environ["ORDERBOT_STATE_DIR"]).rglob("*") if p.is_file())
    assert key.encode() not in stored and key.encode() not in logged


def test_in_a_keyed_sqlite_log_one_junk_row_stops_nobody_and_verify_names_it(orders_file, runs_db, tmp_path):
    """A row appended with sqlite3 whose link merely begins `hmac:` is not the desks' key's:
    the next desk links on from it, and --verify names that row and nothing else."""
    keyed = {"ORDERBOT_AUDIT_KEY": "k3y-" + "9f" * 20}
    first = cli("ask", "--json", "--user", "C001", "--orders", str(orders_file), "--runs", runs_db, CANCEL, env=keyed)
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute(
        "INSERT INTO run_audit SELECT seq + 1, at, 'proposed', run_id, 'call_junk', tool, arguments, customer, "
        "requested_by, NULL, NULL, NULL, hash, 'hmac:' || hex(zeroblob(32)) FROM run_audit"
    )
    database.commit()
    approved = cli("approvals", "approve", json.loads(first.stdout)["run_id"], "--runs", runs_db, env=keyed)
    assert approved.exit_code == 0, approved.output
    assert status(orders_file) == "已取消"
    found = cli("audit", "--verify", "--runs", runs_db, "--json", env=keyed)
    assert found.exit_code == 1
    problems = json.loads(found.stdout)["problems"]
    assert len(problems) == 2 and all(p.startswith("entry 2 ") for p in problems), problems
    other = cli("ask", "--runs", runs_db, "--orders", str(orders_file), "--user", "C001", "取消订单 ORD-1013",
                env={"ORDERBOT_AUDIT_KEY": "o" * 40})  # fmt: skip
    assert other.exit_code == 6 and "does not match this session's audit key" in other.output


def test_a_sqlite_run_copied_with_a_made_up_decision_is_found_and_verify_says_what_a_file_allows(
    orders_file, runs_db, tmp_path
):
    """SQLite holds against nobody who can write its file (docs/team.md): a record copied under
    a new id and re-tagged with the store's key to say desk2 approved its cancel is found by
    --verify, and an intact log says that whoever can write the file could have rewritten it."""
    run_id = paused(orders_file, runs_db)
    intact = cli("audit", "--verify", "--runs", runs_db)
    assert intact.exit_code == 0, intact.output
    assert f"Anyone who can write {runs_db} could also have rewritten the log" in " ".join(intact.output.split())
    database = sqlite3.connect(tmp_path / "runs.db")
    [(key,)] = database.execute("SELECT key FROM run_key").fetchall()
    [(record,)] = database.execute("SELECT record FROM runs").fetchall()
    doc = json.loads(record)
    del doc["integrity"]
    copy = run_id[:-4] + ("0000" if not run_id.endswith("0000") else "0001")
    doc["run_id"] = doc["state"]["run_id"] = copy
    doc["decisions"]["call_offline_1"] |= {"approved": True, "decided_by": "desk2"}
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
    database.execute(
        "INSERT INTO runs SELECT ?, created_at, written, customer, operator, status, summary, ?, 1, NULL FROM runs",
        (copy, tag_record(bytes.fromhex(key), body).decode()),
    )
    database.commit()
    found = cli("audit", "--verify", "--runs", runs_db)
    assert found.exit_code == 1
    said = " ".join(found.output.split())
    assert f"run {copy}'s record says desk2 approved call_offline_1, but neither the queue nor the log" in said


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"ORDERBOT_AUDIT_KEY": "short-k3y"}, "the audit key in ORDERBOT_AUDIT_KEY is shorter than 32 characters"),
        ({"ORDERBOT_AUDIT_KEY": "x" * 40, "ORDERBOT_AUDIT_KEY_FILE": "audit.key"}, "not both"),
        ({"ORDERBOT_AUDIT_KEY_FILE": "open.key"}, "can be read by others: make it private (chmod 600)"),
        ({"ORDERBOT_AUDIT_KEY_FILE": "missing.key"}, "cannot read the audit key file missing.key"),
    ],
)
def test_an_audit_key_that_cannot_be_used_is_one_sentence_before_anything_runs(runs_db, tmp_path, env, said):
    opened = Path("open.key")
    opened.write_text("y" * 40)
    opened.chmod(0o644)
    result = cli("audit", "--verify", "--runs", runs_db, env=env)
    assert result.exit_code == 6 and said in result.output and "Traceback" not in result.output
    assert "short-k3y" not in result.output and "y" * 40 not in result.output and "x" * 40 not in result.output


def test_verify_head_must_be_a_head_and_comes_with_verify(runs_db):
    assert cli("audit", "--head", "0" * 64, "--runs", runs_db).exit_code == 2
    bad = cli("audit", "--verify", "--head", "not-a-head", "--runs", runs_db)
    assert bad.exit_code == 2 and "is not a head --verify prints" in bad.output
    assert cli("audit", "--verify", "--head", "0" * 64, "--runs", runs_db).exit_code == 0  # an empty log's
    assert cli("audit", "--verify", "--head", "1" * 64, "--runs", runs_db).exit_code == 1


LONG_CANCEL = "取消订单 ORD-1002，原因：the customer ordered the wrong size and already bought the same pair elsewhere"
LONG_REASON = "the customer phoned back and decided to keep the order after all, so nothing should change"


def _long_pause(orders_file, runs_db) -> str:
    result = cli("ask", "--json", "--user", "C001", "--orders", str(orders_file), "--runs", runs_db, LONG_CANCEL)
    assert result.exit_code == 4, result.output
    return json.loads(result.stdout)["run_id"]


def _rendered(table, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, force_terminal=True, color_system=None, file=io.StringIO())
    console.print(table)
    return console.file.getvalue()


def _words(text: str) -> list[str]:
    """Every word of a table, its borders dropped."""
    return text.translate(str.maketrans("│╭╮╰╯─┬┴┼├┤", "           ")).split()


def test_piped_lists_show_the_action_the_call_and_a_rejections_reason_whole(orders_file, runs_db, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    run_id = _long_pause(orders_file, runs_db)
    [waiting] = queue(runs_db)
    listed = cli("approvals", "--runs", runs_db).stdout
    assert english(waiting["description"]) in listed  # one line, whole, however long
    assert LONG_CANCEL.split("：")[1] in cli("runs", "--runs", runs_db).stdout  # the question is not cut to `que…`
    assert cli("approvals", "reject", run_id, "--runs", runs_db, "--reason", LONG_REASON).exit_code == 0
    table = cli("audit", "--runs", runs_db).stdout
    assert 'order_id="ORD-1002"' in table and f"reason: {LONG_REASON}" in table  # the rejection says why
    assert "…" not in table and "…" not in listed


def test_at_80_columns_the_queue_and_the_audit_wrap_the_action_and_reason_at_word_boundaries(orders_file, runs_db):
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings
    from orderbot.ui.team import format_audit, format_waiting

    run_id = _long_pause(orders_file, runs_db)
    store = open_run_store(load_settings(runs=runs_db))
    try:
        rows = list(store.waiting(limit=5))
        waiting = _rendered(format_waiting(rows, plain=False, expired_before="2000-01-01T00:00:00Z", width=80), 80)
    finally:
        store.close()
    assert cli("approvals", "reject", run_id, "--runs", runs_db, "--reason", LONG_REASON).exit_code == 0
    store = open_run_store(load_settings(runs=runs_db))
    try:
        entries = [e for e in store.audit_entries() if not isinstance(e, str)]
        audited = _rendered(format_audit(entries, plain=False, width=80), 80)
    finally:
        store.close()
    for shown in (waiting, audited):
        assert max(map(len, shown.splitlines())) <= 80 and "…" not in shown
    # Every word of the action, the call and the reason is there whole: broken only between words.
    english = LONG_CANCEL.split("：")[1].split()
    assert all(word in _words(waiting) for word in english)
    assert all(word in _words(audited) for word in [*english[1:-1], *LONG_REASON.split()])
    assert 'order_id="ORD-1002"' in audited and "rejected" in _words(audited)


RETAIL = Path(__file__).parents[1] / "fixtures" / "tau2-retail" / "db.json"
OLIVIA = "olivia_ito_3591"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_at_80_columns_the_audit_and_the_runs_keep_every_value_whole(tmp_path, runs_db, lang):
    """A retail return's call (a long tool name, a list of item ids, a payment method), a
    customer's id and an e-mail in a question: each whole on one line of its table, the
    table within 80 columns; lines break between values, never inside one."""
    import shutil

    from orderbot.i18n import set_language
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings
    from orderbot.ui.run_list import format_runs
    from orderbot.ui.team import format_audit

    shop = tmp_path / "shop.json"
    shutil.copyfile(RETAIL, shop)
    where = ("--runs", runs_db, "--orders", str(shop))
    asked = cli("ask", "--json", *where, "--user", OLIVIA, "I want to return the sneakers from order #W5866402")
    run_id = json.loads(asked.stdout)["run_id"]
    assert cli("approvals", "approve", run_id, *where).exit_code == 0
    assert cli("ask", *where, "I am olivia.ito5204@example.com, where is #W5866402?").exit_code == 0
    set_language(lang)
    store = open_run_store(load_settings(runs=runs_db))
    try:
        audited = _rendered(format_audit(list(store.audit_entries()), plain=False, width=80), 80).splitlines()
        listed = _rendered(format_runs(list(store.summaries()), plain=False, width=80), 80).splitlines()
    finally:
        store.close()
        set_language(None)
    call = ["return_delivered_order_items", 'item_ids=["9727387530"]', 'payment_method_id="paypal_8049766"']
    for lines, values in ((audited, [*call, 'order_id="#W5866402"', OLIVIA, run_id]),
                          (listed, [OLIVIA, run_id, "olivia.ito5204@example.com,", "#W5866402"])):  # fmt: skip
        assert max(map(len, lines)) <= 80 and "…" not in "".join(lines), "\n".join(lines)
        for value in values:
            assert any(value in line for line in lines), f"{value!r} broken:\n" + "\n".join(lines)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_pause_under_four_eyes_says_another_operator_must_approve(orders_file, runs_db, quiet):
    """The requester may not approve it: the pause says so (with -q, in its one line on stderr)
    and gives the command for another operator's desk, its store the same file (SQLite names
    no login), instead of 'waiting for your approval'."""
    flags = ["-q"] if quiet else []
    env = {"ORDERBOT_FOUR_EYES": "1", "COLUMNS": "80"}
    result = cli("ask", *flags, "--user", "C001", "--orders", str(orders_file), "--runs", runs_db, CANCEL, env=env)
    assert result.exit_code == ExitCode.AWAITING_APPROVAL, result.output
    assert "Paused: another operator must approve this action." in result.output, result.output
    assert "your approval" not in result.output
    if not quiet:
        [run_id] = [row["run_id"] for row in queue(runs_db)]
        # Copied, it runs: at 80 columns it is continued between its arguments, as a shell continues a line.
        shown = result.output.split("To approve it, at another operator's desk:\n")[1].split("\n  (")[0]
        assert shlex.split(shown.replace("\\\n", "")) == ["orderbot", "approvals", "approve", run_id, "--runs", runs_db]


@pytest.mark.slow  # terminal sessions
def test_in_a_terminal_the_desk_is_asked_first_and_four_eyes_sends_it_to_the_queue(orders_file, runs_db):
    """What docs/team.md says a terminal does with its queue example: the desk that may
    approve is asked at the prompt (nothing queued meanwhile); with four eyes the run pauses
    into the queue without asking."""
    import pexpect
    from forked_terminal import orderbot_in_a_terminal

    args = ["ask", "--runs", runs_db, "--orders", str(orders_file), "--user", "C001", CANCEL]
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    child = orderbot_in_a_terminal(args, env=env, dimensions=(50, 100))
    child.expect_exact("? [y/N]")
    assert queue(runs_db) == []
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and status(orders_file) == "处理中"
    child = orderbot_in_a_terminal(args, env={**env, "ORDERBOT_FOUR_EYES": "1"}, dimensions=(50, 100))
    child.expect_exact("Paused: another operator must approve this action.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == ExitCode.AWAITING_APPROVAL
    assert [row["customer"] for row in queue(runs_db)] == ["C001"]
