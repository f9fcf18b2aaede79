"""Property: whatever a model says, turn after turn, every run ends in a clean stop that
keeps its limits.

Random models mix text, floods of calls, unknown tools, broken or huge JSON, smuggled
identities, other customers' ids, failures and slow answers (on a fake clock) under random
limits and users. The engine runs in-process over a store loaded from a private file.
After each run: one stop reason with its exit code; model requests = steps <= max steps;
executed calls <= the run's cap and the per-step cap; nothing with a side effect ran
without a yes and the file is byte for byte the same; the fake clock never passed the
timeout; every result the model saw is paired with its call and is a bounded envelope.

At least 2,000 examples (the `orderbot-faults` profile in conftest.py); set
ORDERBOT_FUZZ_EXAMPLES for more.
"""

from __future__ import annotations

import json
import shutil
from itertools import count

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from orderbot.commands.common import EXIT_CODES
from orderbot.errors import ModelError, ModelTimeout
from orderbot.loop.dispatch import Toolbox
from orderbot.loop.engine import Engine, Limits, StopReason
from orderbot.loop.items import FunctionCall, FunctionCallOutput, assistant
from orderbot.loop.model import ModelRequest, Turn
from orderbot.loop.redact import MAX_ERROR_CHARS
from orderbot.loop.state import RunState
from orderbot.shops.sample.model import SAMPLE_PATH
from orderbot.shops.sample.stores.jsonfile import JsonStore
from orderbot.shops.sample.tools import order_tools

STORE = JsonStore.load(SAMPLE_PATH)  # for the ids the strategies draw from
SIDE_EFFECTS = {"cancel_order"}


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    """One private orders file for all examples (each example must stay cheap): its path,
    its bytes before any run, and the toolbox over it."""
    path = tmp_path_factory.mktemp("fuzz") / "orders.json"
    shutil.copyfile(SAMPLE_PATH, path)
    return path, path.read_bytes(), Toolbox(order_tools(JsonStore.load(path)))


IDS = sorted(STORE.orders) + ["ORD-9999", "ord-1001", "", "ORD-" + "9" * 40, "ORD-1001\x00\x1b[2J"]
NAMES = [
    "get_order_status",
    "get_order_details",
    "list_my_orders",
    "cancel_order",
    "delete_order",
    "",
    "get_order_status ",
    "__import__('os')",
    "x" * 300,
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
plausible = st.fixed_dictionaries(
    {"order_id": st.sampled_from(IDS)},
    optional={
        "reason": st.text(max_size=20),
        "customer_id": st.sampled_from(["C001", "C002"]),
        "user": st.just("C002"),
        "force": st.booleans(),
    },
)
arguments = st.one_of(
    plausible.map(lambda d: json.dumps(d, ensure_ascii=False)),
    json_values.map(json.dumps),
    st.text(max_size=30),  # not JSON at all
    st.sampled_from(['{"order_id": "ORD-1001"', "null", "[]", '{"order_id": ' + '"9' * 3000 + '"}']),
)
_ids = count()
call = st.builds(
    lambda name, args, reuse: FunctionCall(
        call_id="call_dup" if reuse else f"call_{next(_ids)}", name=name, arguments=args
    ),
    st.sampled_from(NAMES),
    arguments,
    st.sampled_from([False] * 9 + [True]),
)
CANCELLABLE = sorted(o.order_id for o in STORE.orders.values() if o.status in ("待付款", "处理中"))
cancel = st.sampled_from(CANCELLABLE).map(
    lambda oid: FunctionCall(
        call_id=f"call_{next(_ids)}",
        name="cancel_order",
        arguments=json.dumps({"order_id": oid, "reason": "不要了"}, ensure_ascii=False),
    )
)
turn = st.one_of(
    st.lists(cancel, min_size=1, max_size=2).map(lambda cs: Turn(tuple(cs))),
    st.text(max_size=40).map(lambda t: Turn((assistant(t),))),
    st.lists(call, min_size=1, max_size=6).map(lambda cs: Turn(tuple(cs))),
    st.tuples(st.text(max_size=10), st.lists(call, min_size=1, max_size=3)).map(
        lambda p: Turn((assistant(p[0]), *p[1]))
    ),
    st.integers(20, 30).map(
        lambda n: Turn(
            tuple(
                FunctionCall(call_id=f"flood_{i}", name="get_order_status", arguments='{"order_id": "ORD-1001"}')
                for i in range(n)
            )
        )
    ),
    st.just(Turn((assistant("很长" * 12_000),))),
)
move = st.tuples(
    st.sampled_from([0.0, 0.0, 0.0, 0.01, 0.5, 3.0, 40.0]), st.sampled_from(["turn"] * 8 + ["error", "timeout"]), turn
)
limits = st.builds(
    Limits,
    max_steps=st.integers(1, 5),
    timeout=st.floats(1, 30),
    max_tool_calls=st.integers(0, 8),
    max_calls_per_step=st.integers(1, 5),
    max_response_chars=st.sampled_from([100, 2000, 16_000]),
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Adversary:
    """Plays the drawn moves; each takes `delay` seconds of fake time, within the request's
    timeout like a well-behaved adapter (a slower answer becomes ModelTimeout)."""

    provider = "fuzz"
    name = "fuzz"

    def __init__(self, moves: list, clock: Clock, max_steps: int) -> None:
        self.moves, self.clock, self.max_steps = moves, clock, max_steps
        self.requests: list[ModelRequest] = []
        self.turns: list[Turn] = []

    def respond(self, request: ModelRequest) -> Turn:
        assert request.timeout > 0, "asked the model with no time left"
        self.requests.append(request)
        # Fail here rather than loop forever if the engine ever stops counting steps.
        assert len(self.requests) <= self.max_steps, "more model requests than max_steps"
        delay, kind, drawn = self.moves[min(len(self.requests), len(self.moves)) - 1]
        if kind == "timeout" or delay >= request.timeout:
            self.clock.now += request.timeout
            raise ModelTimeout("no answer in time")
        self.clock.now += delay
        if kind == "error":
            raise ModelError("the service failed")
        self.turns.append(drawn)
        return drawn


@pytest.mark.slow
@settings(settings.get_profile("orderbot-faults"))
@given(
    moves=st.lists(move, min_size=1, max_size=6),
    limits=limits,
    user=st.sampled_from([None, "C001", "C002"]),
    approver=st.sampled_from([None, "reject"]),
)
def test_any_model_ends_in_a_clean_bounded_stop(fuzz_store, moves, limits, user, approver):
    orders, before, toolbox = fuzz_store
    clock = Clock()
    model = Adversary(moves, clock, limits.max_steps)
    seen = []
    engine = Engine(
        model,
        toolbox,
        limits,
        clock=clock,
        wall_clock=clock,
        observers=[lambda t, s: seen.append(t)],
        approver=None if approver is None else (lambda pending: False),
    )

    state = engine.run(RunState.start("查询订单", user=user))

    event(str(state.stop_reason))
    # One stop reason, with its exit code; no request after the stop.
    assert state.stop_reason in EXIT_CODES
    assert len(model.requests) == state.steps <= limits.max_steps
    # The caps.
    executed = [c for c in state.calls if c.decision == "executed"]
    assert len(executed) <= limits.max_tool_calls
    for step in {c.step for c in executed}:
        assert sum(c.step == step for c in executed) <= limits.max_calls_per_step
    assert all(t.steps_used <= limits.max_steps and t.calls_used <= limits.max_tool_calls for t in seen)
    # Nothing with a side effect without a yes; the file untouched.
    assert not [c for c in executed if c.name in SIDE_EFFECTS]
    assert orders.read_bytes() == before
    # Time: the fake clock never passed the deadline.
    assert clock.now <= limits.timeout
    # Every result the model saw is paired with an earlier call and is a bounded envelope.
    called: set[str] = set()
    for item in state.items:
        if isinstance(item, FunctionCall):
            called.add(item.call_id)
        elif isinstance(item, FunctionCallOutput):
            assert item.call_id in called
            envelope = json.loads(item.output)
            assert isinstance(envelope["ok"], bool)
            if not envelope["ok"]:
                assert len(envelope["error"]) <= MAX_ERROR_CHARS
                assert "Traceback" not in envelope["error"]
                assert not any(ord(ch) < 32 for ch in envelope["error"])
    # The stop matches what happened.
    last = model.turns[-1] if len(model.turns) == len(model.requests) else None
    if state.stop_reason is StopReason.ANSWERED:
        assert last is not None and not last.calls and state.answer == last.text.rstrip()
    if state.stop_reason is StopReason.STEP_LIMIT:
        assert state.steps == limits.max_steps and last is not None and last.calls
    if (
        state.stop_reason
        in (
            StopReason.STEP_LIMIT,
            StopReason.RESPONSE_TOO_LARGE,
            StopReason.RESPONSE_TRUNCATED,
            StopReason.TOOL_CALL_LIMIT,
        )
        and last is not None
    ):
        ids = {c.call_id for c in last.calls}
        assert not [c for c in state.calls if c.step == state.steps and c.call_id in ids and c.executed]
    if state.stop_reason is StopReason.AWAITING_APPROVAL:
        assert approver is None and state.pending and all(p.name in SIDE_EFFECTS for p in state.pending)
    else:
        assert seen[-1].to == "finish"
