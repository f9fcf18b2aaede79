"""The proof against tau2: the 74 training tasks through the real command line, all of them
on SQLite (test_tau2_replay_sqlite.py) and a covering subset on the JSON file and on
PostgreSQL (test_tau2_replay_json.py, _postgres.py: one file per store, so the test workers
share them out).

How the subset is chosen: each task has features (`features`): every tool it calls, every
refusal it meets (by the refused tool), whether the customer signs in, comes from the session
or is nobody, whether it writes more than once, whether a write is refused. `SUBSET` is a
greedy cover of the features of all 74 (take the task that adds most features not yet
covered, fewer actions first on a tie, until none is left): 9 tasks, 52 of the 365 actions,
which run every tool the tasks call, every write path, sign-in, the hand-off and every kind
of refusal on every store. The store contract tests (test_retail_store_contract.py) prove
that the stores agree record by record beyond that; test_tau2_subset.py checks that the
subset still covers every feature, so a change of the tasks or of the list fails there.

A scripted model proposes the task's reference actions, one per turn, then answers. The run
is an `orderbot ask --json` on tau2's shop (the customer from `--user`, or signed in by the
task's own lookup), and each time it pauses for approval (exit 4) `orderbot resume RUN
--approve --json` grants it. At the end the shop, exported in tau2's shape by `orderbot orders
export`, must equal the end state tau2's own tools reach (expected-train.json), and the run
must exit 0, or 8 when the task ends in a hand-off. A database store starts from a template
made once by `orderbot orders import` of tau2's db.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clikit import cli
from retailkit import copy_sqlite, open_retail

from orderbot.models.scripted import ScriptedModel, call, calls, text
from orderbot.shops.retail import data
from orderbot.shops.source import parse_source

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


def replay(task: dict, shop: str, *flags: str) -> tuple[int, list[dict]]:
    """The task through ask, then resume --approve while it waits; the exit code and every
    --json document. A customer given with --user is given again to resume; one the run
    signed in needs none."""
    who = () if task["authenticates"] or task["user"] is None else ("--user", task["user"])
    question = task["question"] or "Hello"
    result = cli("ask", "--provider", "scripted", "--orders", shop, "--json", *who, *flags, question)
    documents = [json.loads(result.stdout)]
    while result.exit_code == 4:
        result = cli("resume", documents[-1]["run_id"], "--approve", "--orders", shop, "--json", *who)
        documents.append(json.loads(result.stdout))
    return result.exit_code, documents


@dataclass
class Shop:
    """tau2's shop in one store, private to a test: `url` is what --orders takes."""

    kind: str
    url: str


def sqlite_template(directory: Path) -> Path:
    """tau2's shop imported into SQLite once, with `orderbot orders import`."""
    path = directory / "template.db"
    result = cli("orders", "import", str(FIXTURES / "db.json"), "--to", f"sqlite:///{path}")
    assert result.exit_code == 0, result.output
    return path


def sqlite_copy(template: Path, directory: Path) -> Shop:
    return Shop("sqlite", copy_sqlite(template, directory / "shop.db").url)


def postgres_template(server) -> str:
    """tau2's shop imported into a PostgreSQL database once, with `orderbot orders import`."""
    name = server.new_database()
    result = cli("orders", "import", str(FIXTURES / "db.json"), "--to", server.url(name))
    assert result.exit_code == 0, result.output
    return name


def exported(shop: Shop, directory: Path) -> dict:
    """The shop as `orderbot orders export` writes it; on SQLite, where the full matrix runs,
    the same document read from the store in-process (the export command's 3 MB of JSON written
    and read back for each of 74 tasks cost more than the task: the subset's stores keep it)."""
    if shop.kind == "sqlite":
        store = open_retail(parse_source(shop.url), writable=False)
        try:
            return data.document(store.export())
        finally:
            store.close()
    out = directory / "exported.json"
    result = cli("orders", "export", "--orders", shop.url, str(out))
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def check_task(task_id: str, shop: Shop, directory: Path, use_model) -> None:
    """One training task through ask and resume on `shop`; its export is tau2's end state."""
    task = ORACLE[task_id]
    model = script(task)
    use_model(model)
    code, documents = replay(task, shop.url, "--max-steps", "20", "--max-tool-calls", "20", "--max-calls-per-step", "1")
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
    assert changed(exported(shop, directory)) == at_cents(task["changed"])


TASKS = sorted(ORACLE, key=int)
SUBSET = ["2", "21", "35", "46", "50", "59", "67", "105", "109"]


def features(task: dict) -> set[str]:
    """What a task exercises, as the subset is chosen by (see the module's docstring)."""
    out = {f"tool:{action['name']}" for action in task["actions"]}
    out |= {f"refused:{name}" for name in task["refused"]}
    out.add("sign-in" if task["authenticates"] else "anonymous" if task["user"] is None else "session user")
    if task["writes"] > 1:
        out.add("several writes")
    if any(name in WRITES for name in task["refused"]):
        out.add("refused write")
    return out
