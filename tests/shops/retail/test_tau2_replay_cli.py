"""The proof against tau2: each of the 74 training tasks through the real command line.

A scripted model proposes the task's reference actions, one per turn, then answers. The run
is an `orderbot ask --json` on tau2's shop (the customer from `--user`, or signed in by the
task's own lookup), and each time it pauses for approval (exit 4) `orderbot resume RUN
--approve --json` grants it. At the end the shop, exported in tau2's shape, must equal the
end state tau2's own tools reach (expected-train.json), and the run must exit 0, or 8 when
the task ends in a hand-off.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orderbot.cli import app
from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.retail import data
from orderbot.shops.retail.jsonstore import JsonShopStore

FIXTURES = Path(__file__).parents[2] / "fixtures" / "tau2-retail"
ORACLE = json.loads((FIXTURES / "expected-train.json").read_text(encoding="utf-8"))
ORIGINAL = json.loads((FIXTURES / "db.json").read_text(encoding="utf-8"))
WRITES = {
    "cancel_pending_order",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
    "exchange_delivered_order_items",
}
IDENTITY = ("user_id",)  # tau2's identity arguments: orderbot takes the customer from the session

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def at_cents(value):
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {key: at_cents(item) for key, item in value.items()}
    if isinstance(value, list):
        return [at_cents(item) for item in value]
    return value


def changed(document: dict) -> dict:
    """Every record of an exported shop that differs from tau2's db.json."""
    out: dict[str, dict] = {}
    for section, records in document.items():
        for key, record in records.items():
            if record != ORIGINAL[section].get(key):
                out.setdefault(section, {})[key] = record
    return out


def script(task: dict) -> ScriptedModel:
    turns = []
    for action in task["actions"]:
        arguments = {k: v for k, v in action["arguments"].items() if k not in IDENTITY}
        turns.append(calls(call(action["name"], arguments)))
    turns.append(text("Done."))
    return ScriptedModel(turns)


def replay(task: dict, shop: Path, *flags: str) -> tuple[int, list[dict]]:
    """The task through ask, then resume --approve while it waits; the exit code and every
    --json document. A customer given with --user is given again to resume; one the run
    signed in needs none."""
    who = () if task["authenticates"] or task["user"] is None else ("--user", task["user"])
    question = task["question"] or "Hello"
    result = cli("ask", "--provider", "scripted", "--orders", str(shop), "--json", *who, *flags, question)
    documents = [json.loads(result.stdout)]
    while result.exit_code == 4:
        result = cli("resume", documents[-1]["run_id"], "--approve", "--orders", str(shop), "--json", *who)
        documents.append(json.loads(result.stdout))
    return result.exit_code, documents


@pytest.mark.parametrize("task_id", sorted(ORACLE, key=int))
def test_each_training_task_reaches_tau2s_end_state_through_the_cli(task_id, tmp_path, use_model) -> None:
    task = ORACLE[task_id]
    shop = tmp_path / "db.json"
    shutil.copyfile(FIXTURES / "db.json", shop)
    model = script(task)
    use_model(model)
    code, documents = replay(task, shop, "--max-steps", "20", "--max-tool-calls", "20", "--max-calls-per-step", "1")
    hand_off = any(a["name"] == "transfer_to_human_agents" for a in task["actions"])
    assert code == (8 if hand_off else 0), documents[-1]
    if not hand_off:
        model.assert_complete()
    last = documents[-1]
    refused_writes = sum(1 for c in last["calls"] if c["name"] in WRITES and c["decision"] != "executed")
    # One pause per write the policy lets through: each paused (exit 4) and was resumed.
    assert len(documents) == 1 + task["writes"] - refused_writes
    if task["user"] is not None:
        assert last["user"] == task["user"]
    refused = [c["name"] for c in last["calls"] if c["result"] and not c["result"]["ok"]]
    assert refused == task["refused"]
    exported = data.document(JsonShopStore.load(shop).export())
    assert changed(exported) == at_cents(task["changed"])
