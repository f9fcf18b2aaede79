"""benchmarks/run.py and what it runs: its smoke path (every section on tiny data, to its table
and JSON, with what each section counted), and in the quick loop the parts that run in-process:
the loop section, the loop's instruction count's scenario and the fair floor's generated app."""

from __future__ import annotations

import json
import os
import re

import pytest
from benchkit import load, run
from typer.testing import CliRunner

ANSWER = "订单 ORD-1001 的状态是：已发货。"
COLD = [
    "orderbot --help",
    "ask --provider offline",
    "share: bare Typer app, same ask options",
    "share: fair floor",
    "share: imports-only floor",
    "ask -q offline vs the fair floor",
    "ask -q offline vs the imports-only floor",
    "ask -q offline vs the fair floor, both frozen at exit",
    "ask offline (tables) vs the fair floor",
    "ask --provider openai (loopback)",
    "openai vs the baseline, both frozen at exit",
    "share: + Typer, Rich, pydantic-settings",
    "orderbot openai vs that floor",
]
ORDERS = [
    "load 1k orders",
    "load 1k vs json.load, collector on",
    "peak memory 1k",
    "lookup by id 1k",
    "one cancellation 1k",
]
RECORDS = [
    "offline run, record written",
    "`orderbot runs` at 100 records",
    "`orderbot runs --user nobody` at 100 records",
]


@pytest.mark.slow
def test_the_smoke_path_runs_every_section_to_its_table_and_json_and_counts_what_it_measured(tmp_path):
    out = tmp_path / "figures.json"
    done = run("run.py", "--smoke", "--json", str(out), cwd=tmp_path)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["smoke"] is True
    figures = {re.sub(r" \(\d+ MB\)", "", f["name"].strip()): f for f in doc["figures"]}
    loop = [name for name, f in figures.items() if f["section"] == "loop"]
    assert loop[:2] == ["two-turn run, in-process", "engine alone, built per run"]
    assert all(name.startswith("peer: ") or name.endswith(" vs orderbot") for name in loop[2:])  # when installed
    assert [n for n, f in figures.items() if f["section"] == "cold"] == COLD
    assert [n for n, f in figures.items() if f["section"] == "imports"] == ["orderbot's own imports on ask -q"]
    assert [n for n, f in figures.items() if f["section"] == "orders"] == ORDERS
    assert [n for n, f in figures.items() if f["section"] == "records"] == RECORDS
    for figure in doc["figures"]:
        assert figure["name"].strip() in done.stdout  # the table
        assert figure["verdict"] == "not judged"
        if figure["base"]:  # one sample a side per round
            assert len(figure["ours"]) == len(figure["base"]) > 0 and figure["ratio_median"] > 0

    # What each section checked while it ran: a benchmark that stopped doing its job says so.
    answered = {"orderbot": 60, "plain loop": 60, "engine alone": 60}
    assert figures["two-turn run, in-process"]["checks"] == {"runs answered": answered}
    assert figures["ask -q offline vs the fair floor"]["checks"] == {
        "orderbot offline -q printed": ANSWER,
        "fair floor printed": "查询 ORD-1001",
    }
    assert figures["ask -q offline vs the fair floor, both frozen at exit"]["checks"] == {
        "orderbot offline -q printed": ANSWER,
        "fair floor, frozen at exit printed": "查询 ORD-1001",
    }
    assert figures["openai vs the baseline, both frozen at exit"]["checks"] == {
        "orderbot openai printed": ANSWER,
        "openai baseline, frozen at exit printed": ANSWER,
    }
    assert figures["ask --provider openai (loopback)"]["checks"] == {
        "orderbot openai printed": ANSWER,
        "import openai + requests printed": ANSWER,
    }
    imports = figures["orderbot's own imports on ask -q"]["checks"]
    assert imports["ask -q printed"] == ANSWER and imports["orderbot modules imported"] > 40
    assert imports["heaviest (median self time)"].startswith("orderbot.")
    assert figures["load 1k orders"]["checks"] == {"orders loaded by each": 1000}
    assert figures["one cancellation 1k"]["checks"] == {"orders cancelled, read back from the file": 1}
    # A warm-up and one round a side: two runs kept by `ask`, none by `ask --no-log`.
    assert figures["offline run, record written"]["checks"] == {"runs kept by ask": 2, "runs kept by ask --no-log": 0}
    assert figures["`orderbot runs` at 100 records"]["checks"] == {"runs listed at 10": 10, "runs listed at 100": 100}
    assert figures["`orderbot runs --user nobody` at 100 records"]["checks"] == {
        "runs of user nobody at 10": 0,
        "runs of user nobody at 100": 0,
    }


def test_the_loop_section_answers_every_run_on_both_sides():
    bench = load("run")
    [figure, alone, *peers] = bench.loop_overhead(bench.SMOKE)
    rounds, batch = bench.SMOKE.loop
    assert figure.name == "two-turn run, in-process" and len(figure.ours) == len(figure.base) == rounds
    assert alone.name.strip() == "engine alone, built per run" and len(alone.ours) == len(alone.base) == rounds
    runs = (rounds + 1) * batch  # a warm-up and the rounds
    assert figure.checks == {"runs answered": {"orderbot": runs, "plain loop": runs, "engine alone": runs}}
    for peer in peers:  # pydantic-ai and openai-agents: measured when installed, else said why not
        assert peer.ours or peer.compared.startswith("left out: ")


def test_the_instruction_counts_scenario_answers():
    assert load("loop_instructions").runs(3) == 3


def test_the_fair_floor_parses_asks_options_into_one_settings_model_and_prints_one_table(tmp_path, monkeypatch):
    bare_app = load("bare_app")
    (tmp_path / "fair_floor.py").write_text(bare_app.generate(job=True), encoding="utf-8")
    (tmp_path / "bare_app.py").write_text(bare_app.generate(), encoding="utf-8")
    fair, bare = load("fair_floor", tmp_path / "fair_floor.py"), load("generated_bare_app", tmp_path / "bare_app.py")
    cli = CliRunner()
    monkeypatch.setenv("MODEL_NAME", "from-the-environment")  # read as orderbot's Settings reads it
    monkeypatch.setenv("COLUMNS", "100")
    command = ["ask", "-q", "--provider", "offline", "--max-steps", "2", "--user", "C001", "--trace", "查询 ORD-1001"]
    result = cli.invoke(fair.app, command)
    assert result.exit_code == 0, result.output
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.output.splitlines()]
    rows = dict(row for row in cells if len(row) == 2 and row[0] != "setting")
    assert rows == {
        "question": "查询 ORD-1001",
        "max_steps": "2",
        "provider": "offline",
        "model": "from-the-environment",
        "user": "C001",
        "state_dir": os.environ["ORDERBOT_STATE_DIR"],  # the test's own (conftest.isolated)
        "trace": "True",
    }
    assert result.output.count("┏") == 1  # one table
    # The same command line, ask's help and parsing are the bare app's: only the work differs.
    assert cli.invoke(bare.app, command).output == ""
    assert cli.invoke(fair.app, ["ask", "--help"]).output == cli.invoke(bare.app, ["ask", "--help"]).output
    # The only command it builds is ask, as orderbot builds only the command it runs.
    assert cli.invoke(fair.app, ["runs"]).exit_code == 2 and cli.invoke(bare.app, ["runs"]).exit_code == 0
