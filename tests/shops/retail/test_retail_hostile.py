"""Hostile models against the retail shop's boundaries: each test has a scripted model try to
break one rule of who the customer is, or of the policy, through the real runner, with a
person standing by who would approve anything. Each attempt is refused before anyone is
asked, with a code the model can explain, and the shop is left as it was. Each test fails
when the check of its rule is taken out (orderbot/shops/retail/actions.py, tools.py, the
loop's sign-in and per-step checks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clikit import cli
from retailkit import copy_sqlite, open_retail
from runkit import open_store

from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Limits, StopReason
from orderbot.loop.items import FunctionCallOutput
from orderbot.loop.state import RunState
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.shops.retail import data
from orderbot.shops.retail.jsonstore import JsonShopStore
from orderbot.shops.retail.tools import retail_tools

DB = Path(__file__).parents[2] / "fixtures" / "tau2-retail" / "db.json"
ORIGINAL = json.loads(DB.read_text(encoding="utf-8"))

OLIVIA = "olivia_ito_3591"  # the customer of these tests
OLIVIA_EMAIL = "olivia.ito5204@example.com"
DELIVERED = "#W5866402"  # Olivia's, paid by paypal_8049766: espresso machine 6242772310, sneakers 9727387530
PROCESSED = "#W5353646"  # Olivia's
PENDING = "#W5442520"  # Olivia's, paid by credit_card_9753331: gaming mouse 3330317167, patio umbrella, hiking boots
MOUSE, MOUSE_OTHER, MOUSE_GONE = "3330317167", "8896479688", "7420906769"
UMBRELLA_OTHER = "2001307871"
SNEAKERS, SNEAKERS_OTHER, SNEAKERS_GONE = "9727387530", "2509076505", "3631875806"
ESPRESSO, ESPRESSO_DEAREST = "6242772310", "3951031513"  # 2,996.03 → 3,289.46
PAYPAL, CARD, GIFT_CARD = "paypal_8049766", "credit_card_9753331", "gift_card_7794233"  # the gift card holds 56.00
SOPHIA, SOPHIAS_ORDER, SOPHIAS_CARD = "sophia_thomas_5301", "#W4862767", "credit_card_7326294"
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "73301"}


@pytest.fixture(params=["json", "sqlite"])
def store(request, tmp_path):
    """tau2's shop, private to the test, in the JSON file store and in SQLite."""
    if request.param == "json":
        path = tmp_path / "db.json"
        shutil.copyfile(DB, path)
        opened = JsonShopStore.load(path)
    else:
        opened = open_retail(copy_sqlite(request.getfixturevalue("retail_sqlite_template"), tmp_path / "shop.db"))
    yield opened
    opened.close()


class Attempt:
    """A run of a scripted model on the store, with a person who approves whatever is asked."""

    def __init__(self, store, tmp_path: Path) -> None:
        self.store, self.runs = store, open_store(tmp_path / "state")
        self.asked: list[str] = []

    def __call__(self, *turns, user: str | None = OLIVIA, per_step: int = 1) -> RunState:
        model = ScriptedModel([*turns, text("Sorry, I cannot do that.")])
        state = RunState.start("please", user=user)

        def approve(pending) -> bool:
            self.asked.append(pending.name)
            return True

        runner = Runner(Toolbox(retail_tools(self.store)), model, self.runs, provider="scripted")
        runner.start(state, Limits(max_steps=20, max_tool_calls=20, max_calls_per_step=per_step), approver=approve)
        return state

    def shop(self) -> dict:
        return data.document(self.store.export())


@pytest.fixture
def attempt(store, tmp_path) -> Attempt:
    return Attempt(store, tmp_path)


def results(state: RunState) -> list[dict]:
    return [json.loads(i.output) for i in state.items if isinstance(i, FunctionCallOutput)]


def refused(state: RunState) -> list[str]:
    return [r.get("code") for r in results(state) if not r["ok"]]


def one(name: str, **arguments) -> object:
    return calls(call(name, arguments))


def assert_refused(attempt: Attempt, state: RunState, *codes: str) -> None:
    assert refused(state) == list(codes)
    assert attempt.asked == []  # nobody was asked to approve what cannot happen
    assert unchanged(attempt.store)  # and nothing changed


def unchanged(store) -> bool:
    """Whether the shop is as tau2 wrote it. The SQLite store is the database's only writer
    here, so no row changed through its connection says it without exporting every record."""
    if isinstance(store, JsonShopStore):
        return data.document(store.export()) == ORIGINAL
    return store.connection.total_changes == 0


# ---- who the customer is ----------------------------------------------------------------------

CUSTOMER_TOOLS = [
    ("get_user_details", {}),
    ("get_order_details", {"order_id": PENDING}),
    ("get_product_details", {"product_id": "9523456873"}),
    ("get_item_details", {"item_id": MOUSE}),
    ("list_all_product_types", {}),
    ("cancel_pending_order", {"order_id": PENDING, "reason": "no longer needed"}),
    ("modify_pending_order_address", {"order_id": PENDING, **ADDRESS}),
    ("modify_pending_order_payment", {"order_id": PENDING, "payment_method_id": PAYPAL}),
    ("modify_user_address", ADDRESS),
    ("return_delivered_order_items", {"order_id": DELIVERED, "item_ids": [SNEAKERS], "payment_method_id": PAYPAL}),
]


@pytest.mark.parametrize(("name", "arguments"), CUSTOMER_TOOLS, ids=[n for n, _ in CUSTOMER_TOOLS])
def test_nothing_about_a_customer_before_one_is_signed_in(attempt, name, arguments) -> None:
    state = attempt(calls(call(name, arguments)), user=None)
    assert_refused(attempt, state, "sign_in_required")
    assert state.user is None


OTHERS_ORDER = [
    ("get_order_details", {"order_id": SOPHIAS_ORDER}),
    ("cancel_pending_order", {"order_id": SOPHIAS_ORDER, "reason": "no longer needed"}),
    ("modify_pending_order_address", {"order_id": SOPHIAS_ORDER, **ADDRESS}),
    ("modify_pending_order_payment", {"order_id": SOPHIAS_ORDER, "payment_method_id": "paypal_5297429"}),
    ("modify_pending_order_items", {"order_id": SOPHIAS_ORDER, "item_ids": ["8479046075"],
                                    "new_item_ids": ["1"], "payment_method_id": SOPHIAS_CARD}),
    ("return_delivered_order_items", {"order_id": "#W6977171", "item_ids": ["1151293680"],
                                      "payment_method_id": "gift_card_6052478"}),
    ("exchange_delivered_order_items", {"order_id": "#W6977171", "item_ids": ["1151293680"],
                                        "new_item_ids": ["7706410293"], "payment_method_id": "gift_card_6052478"}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "arguments"), OTHERS_ORDER, ids=[n for n, _ in OTHERS_ORDER])
def test_another_customers_order_is_out_of_reach_and_looks_like_no_order(attempt, name, arguments) -> None:
    state = attempt(calls(call(name, arguments)), calls(call(name, {**arguments, "order_id": "#W0000000"})))
    assert_refused(attempt, state, "no_access", "no_access")
    theirs, missing = (r["error"] for r in results(state))
    assert theirs == missing and SOPHIA not in theirs


def test_one_customer_per_conversation(attempt) -> None:
    state = attempt(
        one("find_user_id_by_email", email=OLIVIA_EMAIL),
        one("find_user_id_by_email", email="sophia.thomas1364@example.com"),
        one("find_user_id_by_name_zip", first_name="Sophia", last_name="Thomas", zip="75396"),
        one("get_user_details"),
        user=None,
    )
    assert [r.get("code") for r in results(state)] == [None, "other_customer", "other_customer", None]
    assert results(state)[3]["data"]["user_id"] == OLIVIA and state.user == OLIVIA
    assert SOPHIA not in json.dumps(results(state)[1:3])
    assert unchanged(attempt.store)


def test_a_session_customer_cannot_be_swapped_by_a_lookup(attempt) -> None:
    state = attempt(one("find_user_id_by_email", email="sophia.thomas1364@example.com"), one("get_user_details"))
    assert refused(state) == ["other_customer"]
    assert results(state)[1]["data"]["user_id"] == OLIVIA and not state.signed_in


@pytest.mark.parametrize("name", ["get_user_details", "modify_user_address"])
def test_the_model_cannot_name_the_customer(attempt, name) -> None:
    arguments = {"user_id": SOPHIA, **(ADDRESS if name == "modify_user_address" else {})}
    state = attempt(calls(call(name, arguments)))
    assert_refused(attempt, state, "invalid_arguments")
    assert "user_id" in results(state)[0]["error"]


def test_another_customers_payment_method_is_refused(attempt) -> None:
    state = attempt(
        one("modify_pending_order_payment", order_id=PENDING, payment_method_id=SOPHIAS_CARD),
        one("return_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], payment_method_id=SOPHIAS_CARD),
        one("modify_pending_order_items", order_id=PENDING, item_ids=[MOUSE], new_item_ids=[MOUSE_OTHER],
            payment_method_id=SOPHIAS_CARD),
    )  # fmt: skip
    assert_refused(attempt, state, *["not_your_payment_method"] * 3)


# ---- the policy ---------------------------------------------------------------------------------


def test_cancel_only_a_pending_order(attempt) -> None:
    state = attempt(
        one("cancel_pending_order", order_id=PROCESSED, reason="no longer needed"),
        one("cancel_pending_order", order_id=DELIVERED, reason="ordered by mistake"),
    )
    assert_refused(attempt, state, "not_pending", "not_pending")


def test_cancel_only_for_one_of_the_two_reasons(attempt) -> None:
    state = attempt(one("cancel_pending_order", order_id=PENDING, reason="found it cheaper elsewhere"))
    assert_refused(attempt, state, "bad_reason")


def test_modify_only_a_pending_order(attempt) -> None:
    state = attempt(
        one("modify_pending_order_address", order_id=PROCESSED, **ADDRESS),
        one("modify_pending_order_payment", order_id=DELIVERED, payment_method_id=GIFT_CARD),
        one("modify_pending_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], new_item_ids=[SNEAKERS_OTHER],
            payment_method_id=PAYPAL),
    )  # fmt: skip
    assert_refused(attempt, state, "not_pending", "not_pending", "not_pending")


def test_items_are_modified_once_and_then_the_order_is_neither_modified_nor_cancelled(attempt) -> None:
    state = attempt(
        one("modify_pending_order_items", order_id=PENDING, item_ids=[MOUSE], new_item_ids=[MOUSE_OTHER],
            payment_method_id=CARD),
        one("modify_pending_order_items", order_id=PENDING, item_ids=["2648909398"], new_item_ids=["1615379700"],
            payment_method_id=CARD),
        one("modify_pending_order_address", order_id=PENDING, **ADDRESS),
        one("modify_pending_order_payment", order_id=PENDING, payment_method_id=PAYPAL),
        one("cancel_pending_order", order_id=PENDING, reason="no longer needed"),
    )  # fmt: skip
    assert refused(state) == ["already_modified"] * 4
    assert attempt.asked == ["modify_pending_order_items"]  # the first, which was allowed
    after = attempt.shop()
    assert after["orders"][PENDING]["status"] == "pending (item modified)"
    assert after["orders"][PENDING]["address"] == ORIGINAL["orders"][PENDING]["address"]
    assert len(after["orders"][PENDING]["payment_history"]) == 2  # the payment and the difference, no more


def test_return_and_exchange_only_a_delivered_order(attempt) -> None:
    state = attempt(
        one("return_delivered_order_items", order_id=PENDING, item_ids=[MOUSE], payment_method_id=CARD),
        one("exchange_delivered_order_items", order_id=PROCESSED, item_ids=["1"], new_item_ids=["2"],
            payment_method_id=PAYPAL),
    )  # fmt: skip
    assert_refused(attempt, state, "not_delivered", "not_delivered")


def test_only_items_the_order_holds_as_often_as_it_holds_them(attempt) -> None:
    state = attempt(
        one("return_delivered_order_items", order_id=DELIVERED, item_ids=[MOUSE], payment_method_id=PAYPAL),
        one("return_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS, SNEAKERS],
            payment_method_id=PAYPAL),
        one("exchange_delivered_order_items", order_id=DELIVERED, item_ids=[MOUSE], new_item_ids=[MOUSE_OTHER],
            payment_method_id=PAYPAL),
        one("modify_pending_order_items", order_id=PENDING, item_ids=[SNEAKERS], new_item_ids=[SNEAKERS_OTHER],
            payment_method_id=CARD),
    )  # fmt: skip
    assert_refused(attempt, state, *["item_not_in_order"] * 4)


def test_an_item_changes_only_to_an_available_other_variant_of_its_product(attempt) -> None:
    state = attempt(
        one("exchange_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], new_item_ids=[MOUSE_OTHER],
            payment_method_id=PAYPAL),
        one("exchange_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], new_item_ids=[SNEAKERS_GONE],
            payment_method_id=PAYPAL),
        one("exchange_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], new_item_ids=[SNEAKERS],
            payment_method_id=PAYPAL),
        one("modify_pending_order_items", order_id=PENDING, item_ids=[MOUSE], new_item_ids=[UMBRELLA_OTHER],
            payment_method_id=CARD),
        one("modify_pending_order_items", order_id=PENDING, item_ids=[MOUSE], new_item_ids=[MOUSE_GONE],
            payment_method_id=CARD),
        one("modify_pending_order_items", order_id=PENDING, item_ids=[MOUSE, "2648909398"],
            new_item_ids=[MOUSE_OTHER], payment_method_id=CARD),
    )  # fmt: skip
    assert_refused(
        attempt,
        state,
        "not_same_product",
        "variant_unavailable",
        "same_item",
        "not_same_product",
        "variant_unavailable",
        "count_mismatch",
    )


def test_a_gift_card_pays_only_what_it_covers(attempt) -> None:
    state = attempt(
        one("modify_pending_order_payment", order_id=PENDING, payment_method_id=GIFT_CARD),
        one("exchange_delivered_order_items", order_id=DELIVERED, item_ids=[ESPRESSO],
            new_item_ids=[ESPRESSO_DEAREST], payment_method_id=GIFT_CARD),
    )  # fmt: skip
    assert_refused(attempt, state, "gift_card_insufficient", "gift_card_insufficient")


def test_a_refund_goes_to_the_original_payment_method_or_a_gift_card(attempt) -> None:
    state = attempt(
        one("return_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], payment_method_id=CARD),
    )
    assert_refused(attempt, state, "bad_refund_method")
    allowed = attempt(
        one("return_delivered_order_items", order_id=DELIVERED, item_ids=[SNEAKERS], payment_method_id=GIFT_CARD)
    )
    assert refused(allowed) == [] and attempt.asked == ["return_delivered_order_items"]


def test_a_new_payment_method_is_another_one(attempt) -> None:
    state = attempt(one("modify_pending_order_payment", order_id=PENDING, payment_method_id=CARD))
    assert_refused(attempt, state, "same_payment_method")


def test_one_tool_call_per_turn(attempt) -> None:
    state = attempt(
        calls(
            call("get_order_details", {"order_id": PENDING}),
            call("cancel_pending_order", {"order_id": PENDING, "reason": "no longer needed"}),
        ),
        per_step=1,
    )
    assert state.stop_reason is StopReason.TOOL_CALL_LIMIT
    assert [c.decision for c in state.calls] == ["not_executed", "not_executed"]
    assert attempt.asked == [] and unchanged(attempt.store)


def test_the_retail_shops_own_limit_is_one_call_per_turn() -> None:
    from orderbot.settings import load_settings
    from orderbot.shops.session import session_over

    session = session_over(DB, writable=False)
    try:
        assert session.limits(load_settings()).max_calls_per_step == 1
        assert session.limits(load_settings(max_calls_per_step=2)).max_calls_per_step == 2  # a flag still wins
    finally:
        session.store.close()


# ---- through the command line: the customer a run signed in is the run's --------------------------


def test_a_signed_in_run_is_resumed_for_its_customer_only(tmp_path, use_model) -> None:
    path = tmp_path / "db.json"
    shutil.copyfile(DB, path)
    use_model(
        ScriptedModel(
            [
                one("find_user_id_by_email", email=OLIVIA_EMAIL),
                one("cancel_pending_order", order_id=PENDING, reason="no longer needed"),
                text("Cancelled."),
            ]
        )
    )
    asked = cli("ask", "--provider", "scripted", "--orders", str(path), "--json", "cancel my order")
    assert asked.exit_code == 4, asked.output
    document = json.loads(asked.stdout)
    assert document["user"] == OLIVIA and "--user" not in document["resume_command"]
    assert [t["kind"] for t in document["transitions"]].count("signed_in") == 1
    run_id = document["run_id"]
    other = cli("resume", run_id, "--approve", "--orders", str(path), "--user", SOPHIA)
    assert other.exit_code == 6 and f"signed in customer {OLIVIA}, not {SOPHIA}" in other.stderr
    assert JsonShopStore.load(path).order(PENDING).status == "pending"
    resumed = cli("resume", run_id, "--approve", "--orders", str(path), "--json")
    assert resumed.exit_code == 0, resumed.output
    assert JsonShopStore.load(path).order(PENDING).status == "cancelled"
