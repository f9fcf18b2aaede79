"""The subset of tau2's training tasks that runs on the JSON file and on PostgreSQL still
covers what all 74 cover (tau2replay.py says how it was chosen)."""

from __future__ import annotations

from tau2replay import ORACLE, SUBSET, TASKS, WRITES, features

from orderbot.shops.retail.tools import retail_tools


def test_the_subset_covers_every_feature_of_the_training_tasks() -> None:
    every = set().union(*(features(ORACLE[task]) for task in TASKS))
    covered = set().union(*(features(ORACLE[task]) for task in SUBSET))
    assert sorted(every - covered) == []
    assert {"sign-in", "session user", "anonymous", "several writes", "refused write"} <= covered
    assert "tool:transfer_to_human_agents" in covered  # the hand-off


def test_the_subset_runs_every_tool_the_tasks_call_and_every_write_they_make() -> None:
    called = {action["name"] for task in TASKS for action in ORACLE[task]["actions"]}
    in_subset = {action["name"] for task in SUBSET for action in ORACLE[task]["actions"]}
    assert in_subset == called
    assert WRITES & called <= in_subset
    # The shop's tools no training task calls are run on every store by the store contract
    # and hostile tests instead; this list is what those must keep covering.
    uncalled = {tool.name for tool in retail_tools(None)} - called
    assert uncalled <= {"list_all_product_types", "modify_pending_order_payment"}
