"""The retail store interface on SQLite and PostgreSQL: every question answered as tau2's
own scan of db.json answers it, the one write as compare-and-set at most once per call
key (also with 20 writers at once), statements bounded by the run's time, hostile text."""

from __future__ import annotations

import io
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from retailkit import DB, open_retail
from saying import raises

from orderbot.errors import ConfigError, ToolError
from orderbot.shops.retail import data
from orderbot.shops.retail.store import Change, Write

SHOP = data.load_shop(DB)


def tau2_find_by_email(email: str) -> str | None:
    return next((u.user_id for u in SHOP.users.values() if u.email.lower() == email.lower()), None)


def tau2_find_by_name_zip(first: str, last: str, zip: str) -> str | None:
    return next(
        (
            u.user_id
            for u in SHOP.users.values()
            if u.name.first_name.lower() == first.lower()
            and u.name.last_name.lower() == last.lower()
            and u.address.zip == zip
        ),
        None,
    )


def cancelled(order: data.Order) -> data.Order:
    refunds = [p.model_copy(update={"transaction_type": "refund"}) for p in order.payment_history]
    return order.model_copy(
        update={
            "status": "cancelled",
            "cancel_reason": "no longer needed",
            "payment_history": [*order.payment_history, *refunds],
        }
    )


PENDING = next(o for o in SHOP.orders.values() if o.status == "pending")


def test_every_record_reads_back_equal_to_the_file(retail_db):
    store = retail_db.open()
    assert store.count() == len(SHOP.orders) == 1000
    for order_id, order in SHOP.orders.items():
        assert store.order(order_id) == order
    for user_id, user in SHOP.users.items():
        assert store.user(user_id) == user
    for product_id, product in SHOP.products.items():
        assert store.product(product_id) == product
        for item_id, variant in product.variants.items():
            assert store.item(item_id) == variant
    assert store.order("#W0000000") is None
    assert store.user("nobody_1") is None
    assert store.product("0") is None
    assert store.item("0") is None


def test_product_types_are_tau2s_list(retail_db):
    expected = json.loads(json.dumps({p.name: p.product_id for p in SHOP.products.values()}, sort_keys=True))
    assert retail_db.open().product_types() == expected
    assert list(retail_db.open().product_types()) == sorted(expected)


def test_customer_lookups_match_tau2s_first_match_ignoring_case(retail_db):
    store = retail_db.open()
    for user in list(SHOP.users.values())[::7]:
        for email in (user.email, user.email.upper(), user.email.title()):
            assert store.find_user_by_email(email) == tau2_find_by_email(email) == user.user_id
        name = user.name
        for first, last in ((name.first_name, name.last_name), (name.first_name.upper(), name.last_name.lower())):
            found = store.find_user_by_name_zip(first, last, user.address.zip)
            assert found == tau2_find_by_name_zip(first, last, user.address.zip)
            assert found is not None
    some = next(iter(SHOP.users.values()))
    assert store.find_user_by_email("nobody@example.com") is None
    assert store.find_user_by_name_zip(some.name.first_name, some.name.last_name, "00000") is None
    assert store.find_user_by_name_zip(some.name.first_name, some.name.last_name, " " + some.address.zip) is None


def test_the_export_is_tau2s_file_byte_for_byte(retail_db):
    out = io.StringIO()
    data.write_document(retail_db.open().export(), out)
    assert out.getvalue() == DB.read_text(encoding="utf-8")


def test_a_write_replaces_its_records_and_is_applied_at_most_once_per_call_key(retail_db):
    store = retail_db.open()
    user = SHOP.users[PENDING.user_id]
    new_user = user.model_copy(update={"email": "moved@example.com"})
    write = Write((Change(PENDING, cancelled(PENDING)), Change(user, new_user)), {"order_id": PENDING.order_id})
    assert store.apply(write, "run-1/call_1") == {"order_id": PENDING.order_id}
    again = retail_db.open()
    assert again.order(PENDING.order_id) == cancelled(PENDING)
    assert again.user(user.user_id) == new_user
    assert again.find_user_by_email("MOVED@example.com") == user.user_id
    assert again.find_user_by_email(user.email) is None
    # The same call key again, even with another write: the first answer, nothing written.
    other = Write((Change(cancelled(PENDING), PENDING),), {"something": "else"})
    assert again.apply(other, "run-1/call_1") == {"order_id": PENDING.order_id}
    assert retail_db.open().order(PENDING.order_id) == cancelled(PENDING)


def test_a_write_computed_from_a_record_that_changed_since_is_refused_whole(retail_db):
    store = retail_db.open()
    user = SHOP.users[PENDING.user_id]
    stale_user = user.model_copy(update={"email": "not-what-is-stored@example.com"})
    write = Write(
        (Change(PENDING, cancelled(PENDING)), Change(stale_user, user.model_copy(update={"email": "x@example.com"}))),
        "done",
    )
    with pytest.raises(ToolError) as refused:
        store.apply(write, "run-2/call_1")
    assert refused.value.code == "changed_meanwhile"
    fresh = retail_db.open()
    assert fresh.order(PENDING.order_id) == PENDING  # the order's change was undone with the refusal
    assert fresh.user(user.user_id) == user
    # The refused key was not kept: the same key with a write that fits now applies.
    assert fresh.apply(Write((Change(PENDING, cancelled(PENDING)),), "ok"), "run-2/call_1") == "ok"
    assert retail_db.open().order(PENDING.order_id) == cancelled(PENDING)


def test_a_store_opened_read_only_refuses_to_write(retail_db):
    store = retail_db.open(writable=False)
    with pytest.raises(ToolError) as refused:
        store.apply(Write((Change(PENDING, cancelled(PENDING)),), "x"), "k")
    assert refused.value.code == "read_only"
    assert retail_db.open().order(PENDING.order_id) == PENDING


@pytest.mark.parametrize("same_key", [True, False], ids=["one-call-key", "twenty-call-keys"])
def test_twenty_writers_of_one_order_at_once_change_it_once(retail_db, same_key):
    """Twenty processes approving at the same moment: with one call key every one gets the
    first answer; with twenty keys exactly one wins and the others are told it changed."""
    stores = [retail_db.open() for _ in range(20)]
    start = threading.Barrier(20)

    def approve(number: int):
        write = Write((Change(PENDING, cancelled(PENDING)),), {"by": number})
        start.wait()
        try:
            return stores[number].apply(write, "run/call" if same_key else f"run-{number}/call", timeout=30)
        except ToolError as exc:
            return exc.code

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(approve, range(20)))
    won = [outcome for outcome in outcomes if isinstance(outcome, dict)]
    if same_key:
        assert len(won) == 20 and len({json.dumps(w) for w in won}) == 1
    else:
        assert len(won) == 1
        assert sorted(outcomes[i] for i in range(20) if not isinstance(outcomes[i], dict)) == ["changed_meanwhile"] * 19
    final = retail_db.open().order(PENDING.order_id)
    assert final == cancelled(PENDING)
    assert len(final.payment_history) == 2 * len(PENDING.payment_history)  # refunded once


HOSTILE = ["#W2611340\x00", "\x00", "#W26\x1b[2J11340", "noah_brown_6181\n", "\ud800", "a" * 10_000, "#W2611340\u202e"]


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_hostile_text_matches_nothing_and_never_reaches_the_database_as_an_error(retail_db, text):
    store = retail_db.open()
    assert store.order(text) is None
    assert store.user(text) is None
    assert store.product(text) is None
    assert store.item(text) is None
    assert store.find_user_by_email(text) is None
    assert store.find_user_by_name_zip(text, text, text) is None
    assert store.find_user_by_name_zip("Noah", "Brown", text) is None
    assert store.order("#W2611340") is not None  # the connection is still good


def test_an_unknown_schema_version_is_refused(retail_db):
    store = retail_db.open()
    with store._transaction(None) as run:
        run("UPDATE retail_schema SET version = ?", (99,))
    with raises(ConfigError, match="retail shop schema version 99, and this orderbot reads version 1"):
        open_retail(retail_db.source)


def test_a_write_waits_for_another_writer_no_longer_than_the_run_has_left(retail_db):
    """Another connection holds the order locked; the write gives up within its 0.2 s
    (a database error would say store_unavailable; a timeout says so)."""
    holder = retail_db.open()
    if retail_db.kind == "sqlite":
        holder.connection.execute("BEGIN IMMEDIATE")
    else:
        holder.connection.execute("BEGIN")
        holder.connection.execute("SELECT 1 FROM retail_orders WHERE order_id = %s FOR UPDATE", (PENDING.order_id,))
    store = retail_db.open()
    with pytest.raises(ToolError) as refused:
        store.apply(Write((Change(PENDING, cancelled(PENDING)),), "x"), "k", timeout=0.2)
    assert refused.value.code in ("busy", "timeout")
    holder.connection.execute("ROLLBACK")
    assert store.apply(Write((Change(PENDING, cancelled(PENDING)),), "x"), "k", timeout=5) == "x"
