"""Two outcomes of a tool call that change the run, whatever the shop: a sign-in lookup that
names the run's customer, and a hand-off that ends the run as `transferred`. Small tools of
the test's own drive the real engine, runner and record."""

from __future__ import annotations

import json
import time

from pydantic import BaseModel, ConfigDict
from runkit import open_store
from saying import raises

from orderbot.commands.common import EXIT_CODES
from orderbot.errors import ConfigError, RecordError
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.items import FunctionCallOutput
from orderbot.loop.state import Event, Phase, RunState
from orderbot.loop.tools import HandedOff, SignedIn, Tool
from orderbot.loop.transitions import SignIn
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.runner import Runner
from orderbot.runs.resume import check_resume
from orderbot.ui.describe import describe
from orderbot.ui.presentation import resume_command

CUSTOMERS = {"ann@example.com": "ann_1", "bob@example.com": "bob_2"}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmailArgs(Strict):
    email: str


class NoArgs(Strict):
    pass


class SummaryArgs(Strict):
    summary: str


def find_by_email(args: EmailArgs, ctx) -> SignedIn:
    return SignedIn(CUSTOMERS[args.email], CUSTOMERS[args.email])


def whoami(args: NoArgs, ctx) -> dict:
    return {"customer": ctx.user}


def change(args: NoArgs, ctx) -> dict:
    return {"changed_for": ctx.user}


def hand_off(args: SummaryArgs, ctx) -> HandedOff:
    return HandedOff(args.summary, "Transfer successful")


def toolbox(*extra: Tool) -> Toolbox:
    return Toolbox(
        [
            Tool("find_by_email", "Find a customer by e-mail.", EmailArgs, find_by_email, sign_in_with=("email",)),
            Tool("whoami", "The signed-in customer.", NoArgs, whoami, needs_user=True),
            Tool("change", "Change something of the customer's.", NoArgs, change, needs_user=True, side_effect=True),
            Tool("hand_off", "Hand the conversation to a person.", SummaryArgs, hand_off, hands_off=True),
            *extra,
        ]
    )


def run(steps, *, user=None, limits=None, tools=None) -> tuple[RunState, list]:
    seen = []
    limits = limits or Limits(max_steps=10)
    engine = Engine(ScriptedModel(steps), tools or toolbox(), limits, observers=[lambda t, s: seen.append(t)])
    return engine.run(RunState.start("help me", user=user)), seen


def envelopes(state: RunState) -> list[dict]:
    return [json.loads(i.output) for i in state.items if isinstance(i, FunctionCallOutput)]


# ---- sign-in ---------------------------------------------------------------------------------


def test_a_sign_in_lookup_names_the_runs_customer_and_a_transition_says_so() -> None:
    state, seen = run(
        [
            calls(call("whoami")),
            calls(call("find_by_email", {"email": "ann@example.com"})),
            calls(call("whoami")),
            text("ok"),
        ]
    )
    assert state.stop_reason is StopReason.ANSWERED
    assert [e.get("code") or e["data"] for e in envelopes(state)] == [
        "sign_in_required",
        "ann_1",
        {"customer": "ann_1"},
    ]
    assert (state.user, state.signed_in) == ("ann_1", True)
    [signed] = [t for t in seen if t.kind is Event.SIGNED_IN]
    assert (signed.from_, signed.to, describe(signed, "en").event) == (Phase.OBSERVE, Phase.OBSERVE, "signed in")
    assert signed.payload == SignIn("ann_1", "find_by_email")
    assert "find_user_id" in envelopes(state)[0]["error"] or "--user" in envelopes(state)[0]["error"]


def test_a_call_after_a_sign_in_in_the_same_round_is_the_customers() -> None:
    state, _ = run(
        [calls(call("find_by_email", {"email": "ann@example.com"}), call("whoami")), text("ok")],
        limits=Limits(max_steps=10, max_calls_per_step=2),
    )
    assert envelopes(state)[1] == {"ok": True, "data": {"customer": "ann_1"}}


def test_a_later_lookup_finding_someone_else_is_refused_and_reveals_nothing() -> None:
    state, seen = run(
        [
            calls(call("find_by_email", {"email": "ann@example.com"})),
            calls(call("find_by_email", {"email": "bob@example.com"})),
            calls(call("whoami")),
            text("ok"),
        ]
    )
    refused = envelopes(state)[1]
    assert refused["ok"] is False and refused["code"] == "other_customer"
    assert "bob" not in json.dumps(refused)
    assert state.user == "ann_1" and envelopes(state)[2]["data"] == {"customer": "ann_1"}
    assert sum(t.kind is Event.SIGNED_IN for t in seen) == 1


def test_a_session_customer_is_never_replaced_by_a_lookup() -> None:
    state, seen = run(
        [
            calls(call("find_by_email", {"email": "ann@example.com"})),
            calls(call("find_by_email", {"email": "bob@example.com"})),
            text("ok"),
        ],
        user="ann_1",
    )
    assert [e["ok"] for e in envelopes(state)] == [True, False]
    assert (state.user, state.signed_in) == ("ann_1", False)
    assert not any(t.kind is Event.SIGNED_IN for t in seen)


def test_only_a_tool_declared_a_sign_in_lookup_can_name_the_customer() -> None:
    impostor = Tool("impostor", "Claims to sign in.", NoArgs, lambda args, ctx: SignedIn("bob_2", "bob_2"))
    state, _ = run([calls(call("impostor")), calls(call("whoami")), text("ok")], tools=toolbox(impostor))
    assert [e.get("code") for e in envelopes(state)] == ["internal_error", "sign_in_required"]
    assert state.user is None
    liar = Tool("liar", "Says it signs in.", EmailArgs, lambda args, ctx: {"x": 1}, sign_in_with=("email",))
    state, _ = run([calls(call("liar", {"email": "a"})), text("ok")], tools=toolbox(liar))
    assert envelopes(state)[0]["code"] == "internal_error"


def test_the_identity_check_lets_a_sign_in_lookup_take_its_credentials_only() -> None:
    with raises(ConfigError, match="identity must come from the session"):
        Tool("by_email", "x", EmailArgs, find_by_email)  # e-mail smells of identity: refused unless declared

    class EmailAndUser(Strict):
        email: str
        user_name: str

    with raises(ConfigError, match="'user_name' from the model"):
        Tool("sneaky", "x", EmailAndUser, find_by_email, sign_in_with=("email",))

    class ById(Strict):
        customer_id: str

    with raises(ConfigError, match="never an id"):
        Tool("by_id", "x", ById, find_by_email, sign_in_with=("customer_id",))
    with raises(ConfigError, match="does not take"):
        Tool("by_phone", "x", EmailArgs, find_by_email, sign_in_with=("email", "phone"))
    with raises(ConfigError, match="cannot also"):
        Tool("writes", "x", EmailArgs, find_by_email, sign_in_with=("email",), side_effect=True)


def test_a_signed_in_run_resumes_without_user_and_refuses_another(tmp_path) -> None:
    runs = open_store(tmp_path / "state")
    tools = toolbox()
    state = RunState.start("change it")
    model = ScriptedModel([calls(call("find_by_email", {"email": "ann@example.com"})), calls(call("change"))])
    record = Runner(tools, model, runs, provider="scripted").start(state, Limits()).record
    assert record.state.stop_reason is StopReason.AWAITING_APPROVAL
    assert record.state.pending[0].user == "ann_1"
    assert resume_command(record.state) == f"orderbot resume {state.run_id} --approve"
    stored = runs.load(state.run_id)
    assert (stored.state.user, stored.state.signed_in) == ("ann_1", True)  # the record keeps it
    check_resume(stored, tools, user=None, approve=True, now=time.time(), ttl_hours=24)
    check_resume(stored, tools, user="ann_1", approve=True, now=time.time(), ttl_hours=24)
    with raises(RecordError, match="signed in customer ann_1, not bob_2"):
        check_resume(stored, tools, user="bob_2", approve=True, now=time.time(), ttl_hours=24)
    resumed = Runner(tools, ScriptedModel([text("done")]), runs, provider="scripted").resume(
        stored, Limits(), approve=True
    )
    assert resumed.state.stop_reason is StopReason.ANSWERED
    assert envelopes(resumed.state)[-1] == {"ok": True, "data": {"changed_for": "ann_1"}}


def test_a_run_given_its_user_still_needs_that_user_to_resume(tmp_path) -> None:
    runs = open_store(tmp_path / "state")
    tools = toolbox()
    state = RunState.start("change it", user="ann_1")
    Runner(tools, ScriptedModel([calls(call("change"))]), runs, provider="scripted").start(state, Limits())
    stored = runs.load(state.run_id)
    with raises(RecordError, match="pass --user"):
        check_resume(stored, tools, user=None, approve=True, now=time.time(), ttl_hours=24)


# ---- hand-off --------------------------------------------------------------------------------


def test_a_hand_off_ends_the_run_as_transferred_with_its_summary() -> None:
    state, seen = run(
        [calls(call("hand_off", {"summary": "wants to undo\na cancellation"}), call("whoami")), text("never asked")],
        limits=Limits(max_steps=10, max_calls_per_step=2),
    )
    assert state.stop_reason is StopReason.TRANSFERRED and EXIT_CODES[state.stop_reason] == 8
    assert state.stop_detail == "wants to undo a cancellation"
    assert [c.decision for c in state.calls] == ["executed", "not_executed"]
    assert seen[-1].kind is Event.FINISHED and seen[-1].stop_reason is StopReason.TRANSFERRED
    assert envelopes(state) == [{"ok": True, "data": "Transfer successful"}]


def test_a_hand_off_drops_the_calls_waiting_for_approval_in_its_round() -> None:
    state, _ = run(
        [calls(call("change"), call("hand_off", {"summary": "over to you"})), text("never asked")],
        user="ann_1",
        limits=Limits(max_steps=10, max_calls_per_step=2),
    )
    assert state.stop_reason is StopReason.TRANSFERRED and state.pending == []
    assert [c.decision for c in state.calls] == ["executed", "not_executed"]
    assert [c.name for c in state.calls] == ["hand_off", "change"]


def test_only_a_tool_declared_a_hand_off_can_end_the_run() -> None:
    quitter = Tool("quitter", "x", SummaryArgs, hand_off)
    state, _ = run([calls(call("quitter", {"summary": "bye"})), text("still here")], tools=toolbox(quitter))
    assert state.stop_reason is StopReason.ANSWERED
    assert envelopes(state)[0]["code"] == "internal_error"
