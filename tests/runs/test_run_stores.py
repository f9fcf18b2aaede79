"""The run store's contract, over both databases behind its one interface: SQLite (the state
directory's store, the default, and a team's sqlite:/// file: the same code, kept apart only
by what the state directory adds) and PostgreSQL. Records, listings, the approval queue, the
executing mark, the audit log; every store opened afresh as another process would."""

from __future__ import annotations

import json
import time

import pytest
from saying import raises

from orderbot.errors import ConfigError, RecordError
from orderbot.i18n import say
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.state import RunState, new_run_id
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.audit import verify
from orderbot.runs.base import operator_name
from orderbot.runs.record import COMMITTED
from orderbot.runs.resume import check_resume
from orderbot.runs.sql import SCHEMA_VERSION
from orderbot.runs.stores import open_run_store
from orderbot.settings import load_settings

CANCEL = {"order_id": "ORD-1002", "reason": "不要了"}


class Stores:
    """One kind of run store, private to a test; `open()` is a new connection to it."""

    def __init__(self, kind: str, url: str | None, state_dir, operator: str | None = None) -> None:
        self.kind, self.url, self.state_dir = kind, url, state_dir
        self.operator = operator or operator_name()  # PostgreSQL: the role; else the login name
        self.opened = []

    def open(self):
        store = open_run_store(load_settings(runs=self.url, state_dir=self.state_dir))
        self.opened.append(store)
        return store

    def raw(self, sql: str, params: tuple = ()):
        """A statement run behind orderbot's back (SQL stores only)."""
        store = self.open()
        if self.kind in ("state", "sqlite"):
            return store.connection.execute(sql, params).fetchall()
        cursor = store.connection.execute(sql.replace("?", "%s"), params or None)
        return cursor.fetchall() if cursor.description else []


def made_stores(kind: str, request, tmp_path):
    url = server = database = None
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.db'}"
    elif kind == "postgres":
        server = request.getfixturevalue("postgres_server")
        database = server.new_database()
        url = server.url(database)
    made = Stores(kind, url, tmp_path / "state", server.user if database else None)
    yield made
    for store in made.opened:
        store.close()
    if database:
        server.drop_database(database)


@pytest.fixture(params=["state", "sqlite", "postgres"])
def stores(request, tmp_path):
    yield from made_stores(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", "postgres"])
def sql_stores(request, tmp_path):
    yield from made_stores(request.param, request, tmp_path)


def paused(store, toolbox, *, user="C001", call_id="c1"):
    """A run that asked to cancel ORD-1002 and waits for approval."""
    model = ScriptedModel([calls(call("cancel_order", CANCEL, call_id=call_id))])
    state = RunState.start("取消 ORD-1002", user=user)
    result = Runner(toolbox, model, store, provider="scripted").start(state, Limits())
    assert state.stop_reason is StopReason.AWAITING_APPROVAL
    return result.record


def answered(store, toolbox, question="查询 ORD-1001", user="C001", started=None):
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
    state = RunState.start(question, user=user, run_id=None if started is None else new_run_id(started))
    Runner(toolbox, model, store, provider="scripted").start(state, Limits())
    return state.run_id


def approve(store, toolbox, run_id, *, reason=None, approve=True):
    record = store.load(run_id)
    check_resume(record, toolbox, user=record.state.user, approve=approve, now=time.time(), ttl_hours=24)
    model = ScriptedModel([text("已取消" if approve else "没有取消")])
    return Runner(toolbox, model, store, provider="scripted").resume(record, Limits(), approve=approve, reason=reason)


def test_a_record_comes_back_from_a_new_connection_as_it_was_saved(stores, toolbox):
    run_id = answered(stores.open(), toolbox)
    again = stores.open().load(run_id)
    assert again.run_id == run_id and again.state.stop_reason is StopReason.ANSWERED
    assert again.state.answer == "已发货" and [c.name for c in again.state.calls] == ["get_order_status"]
    assert again.operator == stores.operator and again.segments[0].operator == stores.operator
    assert stores.open().document(run_id)["run_id"] == run_id


def test_listing_is_newest_first_with_filters_and_names_customer_and_operator(stores, toolbox):
    store = stores.open()
    first = answered(store, toolbox, user="C001", started=time.time() - 20)  # run ids sort by their start
    second = answered(store, toolbox, user="C002", started=time.time() - 10)
    waiting = paused(store, toolbox).run_id
    listed = list(stores.open().summaries())
    assert [s.run_id for s in listed] == [waiting, second, first]
    assert {s.operator for s in listed} == {stores.operator}
    assert [s.run_id for s in stores.open().summaries(user="C002")] == [second]
    assert [s.run_id for s in stores.open().summaries(status="awaiting_approval")] == [waiting]
    assert stores.open().resolve(second[:13]) == second
    assert stores.open().resolve("last") == waiting


def test_runs_started_within_one_second_are_listed_by_when_they_started_not_by_their_ids(stores, toolbox):
    """Two runs of one second whose random parts sort the other way round: the one started
    later is listed first, on every store and after a new connection."""
    second = new_run_id(time.time())[:13]
    store = stores.open()
    older, newer = f"{second}-ffff", f"{second}-0000"
    for run_id in (older, newer):
        model = ScriptedModel([text("已发货")])
        Runner(toolbox, model, store, provider="scripted").start(RunState.start("查询", run_id=run_id), Limits())
    assert [s.run_id for s in stores.open().summaries()] == [newer, older]
    assert [s.run_id for s in stores.open().summaries(status="answered")] == [newer, older]


def test_a_store_of_the_second_layout_is_migrated_and_lists_by_start(sql_stores, toolbox):
    """Version 2 kept starts to the second and listed by id: opened by this orderbot, its
    starts gain their microseconds and its listing is by start."""
    store = sql_stores.open()
    second = new_run_id(time.time())[:13]
    for run_id in (f"{second}-ffff", f"{second}-0000"):
        Runner(toolbox, ScriptedModel([text("已发货")]), store, provider="scripted").start(
            RunState.start("查询", run_id=run_id), Limits()
        )
    for statement in (
        "DROP INDEX runs_by_start",
        "DROP INDEX runs_by_customer",
        "DROP INDEX runs_by_status",
        "CREATE INDEX runs_by_customer ON runs (customer, run_id)",
        "CREATE INDEX runs_by_status ON runs (status, run_id)",
        "UPDATE runs SET created_at = substr(created_at, 1, 19) || 'Z'",
        "UPDATE run_schema SET version = 2",
    ):
        sql_stores.raw(statement)
    listed = [s.run_id for s in sql_stores.open().summaries()]
    assert sql_stores.raw("SELECT version FROM run_schema") == [(SCHEMA_VERSION,)]
    assert {len(c) for (c,) in sql_stores.raw("SELECT created_at FROM runs")} == {27}
    assert sorted(listed) == [f"{second}-0000", f"{second}-ffff"]  # one second: either order, both listed


def test_the_queue_lists_what_a_run_waits_for_with_who_asked(stores, toolbox):
    record = paused(stores.open(), toolbox)
    [waiting] = stores.open().waiting()
    assert (waiting.run_id, waiting.call_id, waiting.tool) == (record.run_id, "c1", "cancel_order")
    assert waiting.customer == "C001" and waiting.requested_by == stores.operator
    assert "ORD-1002" in waiting.description and json.loads(waiting.arguments)["order_id"] == "ORD-1002"


def test_the_queue_is_asked_for_one_customer_or_one_operator(stores, toolbox):
    mine = paused(stores.open(), toolbox).run_id
    cancel = call("cancel_order", {"order_id": "ORD-1008", "reason": "不要了"}, call_id="c2")
    state = RunState.start("取消 ORD-1008", user="C002")
    Runner(toolbox, ScriptedModel([calls(cancel)]), stores.open(), provider="scripted").start(state, Limits())
    store = stores.open()
    assert [w.run_id for w in store.waiting(customer="C002")] == [state.run_id]
    assert [w.run_id for w in store.waiting(customer="C001")] == [mine]
    assert {w.run_id for w in store.waiting(requested_by=stores.operator)} == {mine, state.run_id}
    assert store.waiting(requested_by="nobody-here") == [] and store.waiting(customer="C003") == []


def test_a_record_is_exported_as_kept_tagged_for_its_store(stores, toolbox):
    run_id = answered(stores.open(), toolbox)
    raw = stores.open().export(run_id)
    assert json.loads(raw)["run_id"] == run_id and raw.endswith(b'"}')
    assert raw.rsplit(b',"integrity":"hmac-sha256:', 1)[1][:-2].isalnum()  # the tag is its last member
    assert stores.open().document(run_id) == json.loads(raw)


def test_approving_executes_once_and_leaves_proposed_approved_executed_in_a_valid_chain(stores, toolbox, store):
    run_id = paused(stores.open(), toolbox).run_id
    approve(stores.open(), toolbox, run_id)
    assert store.get("ORD-1002").status == "已取消"
    assert stores.open().waiting() == []
    record = stores.open().load(run_id)
    assert record.side_effects == {"c1": COMMITTED}
    decision = record.decisions["c1"]
    assert decision.approved and decision.decided_by == stores.operator == decision.requested_by
    entries = list(stores.open().audit_entries())
    assert [e.event for e in entries] == ["proposed", "approved", "executed"]
    assert {(e.run_id, e.call_id, e.tool, e.customer) for e in entries} == {(run_id, "c1", "cancel_order", "C001")}
    assert json.loads(entries[-1].result)["ok"] is True
    check = verify(entries)
    assert check.intact and check.entries == 3 and stores.open().audit_problems() == []


def test_a_rejection_keeps_its_reason_in_the_record_and_the_log(stores, toolbox, store):
    run_id = paused(stores.open(), toolbox).run_id
    approve(stores.open(), toolbox, run_id, approve=False, reason="客户改主意了")
    assert store.get("ORD-1002").status == "处理中"
    record = stores.open().load(run_id)
    assert record.decisions["c1"].approved is False and record.decisions["c1"].reason == "客户改主意了"
    assert [(e.event, e.reason) for e in stores.open().audit_entries()] == [
        ("proposed", None),
        ("rejected", "客户改主意了"),
    ]


def test_a_second_approver_holding_the_same_run_is_told_who_settled_it_and_nothing_runs(stores, toolbox, store):
    run_id = paused(stores.open(), toolbox).run_id
    first, second = stores.open(), stores.open()
    mine, theirs = first.load(run_id), second.load(run_id)  # both read it while it waited
    check_resume(theirs, toolbox, user="C001", approve=True, now=time.time(), ttl_hours=24)
    Runner(toolbox, ScriptedModel([text("已取消")]), first, provider="scripted").resume(mine, Limits(), approve=True)
    cancelled = store.get("ORD-1002").cancelled_at
    late = Runner(toolbox, ScriptedModel([text("x")]), second, provider="scripted")
    with raises(RecordError, match=f"already approved by {stores.operator}"):
        late.resume(theirs, Limits(), approve=True)
    assert store.get("ORD-1002").cancelled_at == cancelled
    assert [e.event for e in stores.open().audit_entries()] == ["proposed", "approved", "executed"]


def test_a_record_changed_behind_orderbots_back_is_refused(stores, toolbox):
    run_id = paused(stores.open(), toolbox).run_id
    stores.raw("UPDATE runs SET record = replace(record, 'ORD-1002', 'ORD-1004')")
    with raises(RecordError, match="altered"):
        stores.open().load(run_id)
    assert stores.open().load(run_id, allow_altered=True).altered


def test_prune_keeps_the_summary_and_the_audit_log_and_refuses_a_resume(stores, toolbox):
    store = stores.open()
    old = paused(store, toolbox).run_id
    approve(stores.open(), toolbox, old)
    kept_log = [e.hash for e in stores.open().audit_entries()]
    assert stores.open().prune_older(1, now=time.time() + 3 * 86400) == 1
    [summary] = list(stores.open().summaries())
    assert summary.run_id == old and summary.status == "answered" and summary.pruned_at
    record = stores.open().load(old)
    assert record.pruned_at and record.state.items == [] and record.state.calls == [] and record.turns == []
    assert record.decisions["c1"].approved and record.side_effects == {"c1": COMMITTED}
    assert [e.hash for e in stores.open().audit_entries()] == kept_log
    assert verify(stores.open().audit_entries()).intact


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_newer_schema_is_refused_in_one_sentence(kind, request, tmp_path):
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        url = server.url(server.new_database())
    made = Stores(kind, url, tmp_path / "state")
    made.open()  # makes the tables
    made.raw("UPDATE run_schema SET version = 99")
    with raises(ConfigError, match="schema version 99 is newer than this orderbot reads"):
        made.open()
    for store in made.opened:
        store.close()


def test_an_unknown_run_store_url_is_one_sentence_without_its_password(tmp_path):
    with pytest.raises(ConfigError) as caught:
        open_run_store(load_settings(runs="mysql://desk1:hunter2@db/runs", state_dir=tmp_path))
    assert "hunter2" not in say(caught.value, "en") and "unknown kind of run store" in say(caught.value, "en")


def test_the_prune_setting_keeps_only_summaries_of_old_runs_after_each_run(stores, toolbox):
    old_start = time.time() - 3 * 86400
    store = stores.open()
    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
    old = RunState.start("查询 ORD-1001", user="C001", run_id=new_run_id(old_start))
    Runner(toolbox, model, store, provider="scripted", wall_clock=lambda: old_start).start(old, Limits())
    pruning = open_run_store(load_settings(runs=stores.url, state_dir=stores.state_dir, prune_after_days=1))
    stores.opened.append(pruning)
    fresh = answered(pruning, toolbox)  # the setting prunes once this run has finished
    by_id = {s.run_id: s for s in stores.open().summaries()}
    assert by_id[old.run_id].pruned_at and by_id[old.run_id].status == "answered"
    assert by_id[fresh].pruned_at is None and stores.open().load(fresh).state.items


def test_a_new_run_whose_id_is_taken_draws_another_before_anything_and_never_overwrites_the_other(stores, toolbox):
    first = paused(stores.open(), toolbox)
    same = RunState.start("取消 ORD-1002", user="C001", run_id=first.run_id)  # the same second, the same 16 bits
    model = ScriptedModel([calls(call("cancel_order", CANCEL, call_id="c9"))])
    result = Runner(toolbox, model, stores.open(), provider="scripted").start(same, Limits())
    assert same.run_id != first.run_id and result.record.run_id == same.run_id
    assert same.stop_reason is StopReason.AWAITING_APPROVAL and len(model.requests) == 1
    kept = stores.open().load(first.run_id)
    assert kept.state.question == "取消 ORD-1002" and [p.call_id for p in kept.state.pending] == ["c1"]
    assert stores.open().load(same.run_id).state.pending[0].call_id == "c9"
    assert sorted(w.call_id for w in stores.open().waiting()) == ["c1", "c9"]


def test_tokens_are_kept_as_hashes_listed_without_them_and_revoked_once(stores):
    """The bearer tokens of orderbot mcp (orderbot.runs.tokens): the store keeps a token's
    hash and whom it names, finds it by that hash, lists tokens without it, and revokes
    one once; an operator's token is made only in the operator's own name."""
    from orderbot.errors import OperatorRefused
    from orderbot.runs.tokens import new_token, token_hash

    store = stores.open()
    assert store.tokens() == [] and not store.tokens_exist()
    secret = new_token()
    made = store.add_token(token_hash(secret), customer="C001", operator=None, expires_at="2099-01-01T00:00:00Z")
    mine = store.add_token(token_hash(new_token()), customer=None, operator=stores.operator, expires_at=None)
    if stores.kind != "postgres":  # there the store's owner may (tests/security/test_mcp_token_store.py: a desk)
        with raises(OperatorRefused, match="only in its own name"):
            store.add_token(token_hash(new_token()), customer=None, operator="someone-else", expires_at=None)
    again = stores.open()  # another process
    assert again.tokens_exist() and again.token(token_hash(secret)) == made
    assert again.token(token_hash(new_token())) is None
    assert (made.customer, made.operator, made.created_by) == ("C001", None, stores.operator)
    assert sorted(t.id for t in again.tokens()) == sorted([made.id, mine.id])
    assert [(t.customer, t.operator) for t in again.tokens() if t.id == mine.id] == [(None, stores.operator)]
    revoked, now = again.revoke_token(made.id)
    assert now and revoked.revoked_by == stores.operator and revoked.state(time.time()) == "revoked"
    assert again.revoke_token(made.id)[1] is False  # once
    assert stores.open().token(token_hash(secret)).revoked_at is not None
    with raises(RecordError, match="no token"):
        again.revoke_token("000000000000")
    if stores.kind != "postgres":  # PostgreSQL: no operator reads run_tokens (tests/security/test_mcp_token_store.py)
        kept = stores.raw("SELECT hash FROM run_tokens WHERE id = ?", (made.id,))
        assert kept == [(token_hash(secret),)]
        everything = json.dumps(stores.raw("SELECT * FROM run_tokens"))
        assert secret not in everything
