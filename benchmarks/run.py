"""orderbot's benchmarks: one command, a table of ratios measured side by side in one run.

    python benchmarks/run.py                  # everything, 1M orders included (several minutes)
    python benchmarks/run.py --quick          # fewer rounds, no 1M file (about two minutes)
    python benchmarks/run.py --only loop,cold --sizes 10k --json out.json
    python benchmarks/run.py --check          # exit 1 when a target is missed
    python benchmarks/run.py --smoke --json out.json   # seconds: every section on tiny data, no figure

--smoke is what the test suite runs (tests/benchmarks/): each section once or twice on tiny
data, its outputs and counts checked, so a moved class or a changed exit code fails a test
rather than a person minutes into a real run. Its times are not measurements.

Absolute times on a shared machine are noise; ratios of variants measured in the same run,
interleaved round by round, are much less so. Every figure shows the minimum and the
median over at least 3 rounds of both sides; the ratio judged against a target is the
median of the per-round ratios (each round measures both sides back to back). Below the
table, each figure says exactly what it compares. Sections:

  loop     the two-turn scenario in-process: orderbot's Engine vs a plain hand-written
           loop (plain_loop.py) (and vs pydantic-ai and openai-agents when they are installed)
  cold     whole-process wall time: --help, an offline run, an openai run over loopback
  imports  orderbot's own modules' import time on an offline `ask -q` vs the libraries' (-X importtime)
  orders   order files (10k, 100k, 1M): load time and peak memory vs json.load with the
           collector paused as orderbot pauses it (and with it on), lookup, one cancellation
  records  a whole offline run keeping its record vs the same run with --no-log; `runs`
           (with and without a filter) at 10,000 records vs at 10

Each section also checks what it measured (an answer printed, orders loaded, records kept or
not, runs listed): a benchmark that no longer does what its figure says stops with the reason.

Generated files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

QUESTION = "请查询订单 ORD-1001 的状态。"
ANSWER = "订单 ORD-1001 的状态是：已发货。"
MIN_ROUNDS = 3


@dataclass
class Figure:
    section: str
    name: str
    ours: list[float]  # one sample per round, in `unit`
    base: list[float] = field(default_factory=list)  # the baseline's samples, paired round by round
    target: float | None = None  # the median ratio must stay at or under this
    compared: str = ""  # exactly what is measured against what
    unit: str = "s"  # "s" or "bytes"
    checks: dict[str, object] = field(default_factory=dict)  # what the section verified it measured
    judged: bool = True  # False on the smoke path: its figures are not measurements

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.ours, self.base, strict=True)]

    @property
    def ratio(self) -> float | None:
        return statistics.median(self.ratios) if self.base else None

    @property
    def ratio_of_mins(self) -> float | None:
        return min(self.ours) / min(self.base) if self.base else None

    @property
    def verdict(self) -> str:
        if not self.judged:
            return "not judged"
        if self.target is None or self.ratio is None:
            return "info"
        return "ok" if self.ratio <= self.target else "MISSED"

    def as_dict(self) -> dict:
        return {
            "section": self.section,
            "name": self.name,
            "unit": self.unit,
            "ours": self.ours,
            "base": self.base,
            "ratio_median": self.ratio,
            "ratio_of_mins": self.ratio_of_mins,
            "target": self.target,
            "verdict": self.verdict,
            "compared": self.compared,
            "checks": self.checks,
        }


@dataclass(frozen=True)
class Effort:
    """How many rounds and how much data each section uses."""

    loop: tuple[int, int]  # rounds, runs per round
    cold_rounds: int  # the --help pair gets twice as many
    order_rounds: tuple[int, int]  # below 100k orders, from 100k up
    record_rounds: int
    runs_counts: tuple[int, int]  # `runs` with this many records vs with that many
    smoke: bool = False


FULL = Effort(loop=(21, 1000), cold_rounds=15, order_rounds=(5, MIN_ROUNDS), record_rounds=15, runs_counts=(10, 10_000))
QUICK = Effort(loop=(5, 300), cold_rounds=5, order_rounds=(5, MIN_ROUNDS), record_rounds=5, runs_counts=(10, 10_000))
# Each variant once after its warm-up run, on tiny data: checks that everything runs and counts right.
SMOKE = Effort(loop=(2, 20), cold_rounds=1, order_rounds=(1, 1), record_rounds=1, runs_counts=(10, 100), smoke=True)


def show(values: list[float], unit: str) -> str:
    """`min / median` of the samples, in a unit that fits."""
    if not values:
        return ""
    low, mid = min(values), statistics.median(values)
    if unit == "bytes":
        return f"{low / 2**20:.0f} / {mid / 2**20:.0f} MiB"
    for scale, name, digits in ((1, "s", 2), (1e3, "ms", 1), (1e6, "µs", 1)):
        if mid * scale >= 1 or name == "µs":
            return f"{low * scale:.{digits}f} / {mid * scale:.{digits}f} {name}"
    raise AssertionError("unreachable")


def rounds_of(variants: dict[str, Callable[[], float]], rounds: int, *, warm_up: bool = True) -> dict[str, list[float]]:
    """Each variant once per round, in the same order every round; one sample each."""
    if warm_up:
        for measure in variants.values():
            measure()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, measure in variants.items():
            times[name].append(measure())
    return times


def per_run(run: Callable[[], None], batch: int) -> Callable[[], float]:
    """A measurement: `batch` runs back to back, CPU seconds per run (collector settled
    first). CPU time of this thread, not wall time: on a machine shared with other work the
    wall clock also counts the time this process waits for a core, which no ratio survives."""

    def measure() -> float:
        gc.collect()
        began = time.thread_time()
        for _ in range(batch):
            run()
        return (time.thread_time() - began) / batch

    return measure


# ---- 1. loop overhead -------------------------------------------------------------------


def loop_overhead(effort: Effort) -> list[Figure]:
    """orderbot's Engine vs the plain loop, the same scenario from fresh turns."""
    from io import StringIO

    import peers
    import plain_loop
    from rich.console import Console

    from orderbot.loop.dispatch import Toolbox
    from orderbot.loop.engine import Engine, Limits, StopReason
    from orderbot.loop.state import RunState
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.shops.sample.model import SAMPLE_PATH
    from orderbot.shops.sample.stores.jsonfile import JsonStore as OrderStore
    from orderbot.shops.sample.tools import order_tools
    from orderbot.ui.render import TransitionView

    store = OrderStore.load(SAMPLE_PATH)  # in memory from here on: get_order_status only reads
    toolbox = Toolbox(order_tools(store))
    limits = Limits()
    console = Console(file=StringIO(), width=120)  # as `orderbot ask | cat`: the table is drawn at the end
    answered: Counter[str] = Counter()  # runs that gave the scripted answer, by side

    def orderbot_run() -> None:
        # What a piped `orderbot ask` wires up, minus the drawing at the end and the record
        # (measured below): the transition view collecting rows, a new run id, and the
        # model's turns built afresh as a provider builds them from each response, like the
        # plain loop's scripted client.
        model = ScriptedModel(
            [calls(call("get_order_status", plain_loop.ARGUMENTS, call_id="call_1")), text(plain_loop.ANSWER)]
        )
        view = TransitionView(console, limits)
        state = Engine(model, toolbox, limits, observers=[view]).run(RunState.start(QUESTION))
        if state.stop_reason is not StopReason.ANSWERED or state.answer != ANSWER:
            raise AssertionError(f"orderbot stopped with {state.stop_reason}")
        answered["orderbot"] += 1

    def engine_alone() -> None:
        # The shape of an outside harness (and of a program embedding the engine): everything
        # a question needs built for it, as the plain loop builds its client and script (the
        # tools declared over the store, the whitelist, the engine, the model's turns), and
        # no observer: no view, no record.
        model = ScriptedModel(
            [calls(call("get_order_status", plain_loop.ARGUMENTS, call_id="call_1")), text(plain_loop.ANSWER)]
        )
        engine = Engine(model, Toolbox(order_tools(store)), Limits())
        state = engine.run(RunState.start(QUESTION))
        if state.stop_reason is not StopReason.ANSWERED or state.answer != ANSWER:
            raise AssertionError(f"orderbot's engine alone stopped with {state.stop_reason}")
        answered["engine alone"] += 1

    def plain_run() -> None:
        if plain_loop.run_workflow(plain_loop.ScriptedClient(plain_loop.two_turn_script()), QUESTION) != ANSWER:
            raise AssertionError("the plain loop did not answer")
        answered["plain loop"] += 1

    runners, missing = peers.available()
    rounds, batch = effort.loop
    variants = {
        "orderbot": per_run(orderbot_run, batch),
        "plain": per_run(plain_run, batch),
        "engine alone": per_run(engine_alone, batch),
    }
    for name, run in runners.items():  # milliseconds per run: fewer runs per round
        variants[name] = per_run(run, max(10, batch // 50))
    t = rounds_of(variants, rounds)
    same = (
        f"{rounds} rounds × {batch} runs, alternating; both sides get the two turns built afresh per run "
        "(a get_order_status call, then the answer)"
    )
    figures = [
        Figure(
            "loop",
            "two-turn run, in-process",
            t["orderbot"],
            t["plain"],
            10.0,
            "Engine.run (limits, validation, envelopes, transitions, new run id, the transition view of a piped "
            f"ask collecting rows) vs the plain run_workflow (benchmarks/plain_loop.py); CPU time; {same}",
            checks={"runs answered": dict(answered)},
        ),
        Figure(
            "loop",
            "  engine alone, built per run",
            t["engine alone"],
            t["plain"],
            15.0,
            "per run, what a program embedding the engine builds for a question, as the plain loop builds its "
            "client: the four order tools declared over the store, the Toolbox, Engine and a ScriptedModel, then "
            f"Engine.run with no observer (no view, no record), vs the plain run_workflow; CPU time; {same}",
        ),
    ]
    for name in runners:
        figures.append(
            Figure(
                "loop",
                f"  peer: {name}, same scenario",
                t[name],
                t["plain"],
                None,
                f"{name} with its function/test model, awaited on one event loop, vs the plain loop",
            )
        )
        figures.append(
            Figure(
                "loop",
                f"  {name} vs orderbot",
                t[name],
                t["orderbot"],
                None,
                f"{name} vs orderbot's Engine on the same scenario (above 1: orderbot is faster)",
            )
        )
    for name, why in missing.items():
        figures.append(Figure("loop", f"  peer: {name}", [], [], None, f"left out: {why}"))
    return figures


# ---- 2. cold start ----------------------------------------------------------------------


def _orderbot_command() -> list[str]:
    script = Path(sys.executable).with_name("orderbot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "orderbot"]


def _wall(
    command: list[str], *, env: dict, cwd: Path, expect: int = 0, shows: str | None = None
) -> Callable[[], float]:
    """A measurement: the command's wall time, its exit code checked. With `shows`, the first
    run (the untimed warm-up of rounds_of) also checks that its output holds that text: a
    variant that stopped doing its job (an error that exits 0, an empty answer) is caught
    rather than timed. The timed runs write to /dev/null, as before."""
    first = [shows is not None]

    def measure() -> float:
        out = subprocess.PIPE if first[0] else subprocess.DEVNULL
        began = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - began
        if done.returncode != expect:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
        if first[0]:
            first[0] = False
            if shows not in done.stdout.decode(errors="replace"):
                raise RuntimeError(f"{' '.join(command)} did not print {shows!r}: {done.stdout.decode()[-500:]}")
        return seconds

    return measure


def _process_env(work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORDERBOT_", "OPENAI_")) and k != "MODEL_NAME"}
    env |= {
        "NO_COLOR": "1",
        "ORDERBOT_STATE_DIR": str(work / "state"),
        "PYTHONPATH": str(HERE),
        # Bytecode cached, as for any installed program (the warm-up run fills the cache):
        # with PYTHONDONTWRITEBYTECODE, as some sandboxes set, every run would recompile
        # orderbot's sources (an editable install has no .pyc of its own).
        "PYTHONPYCACHEPREFIX": str(work / "pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# The imports-only floor: the libraries an offline run cannot do without, loaded as orderbot
# loads them, and one pydantic model; no option parsed, nothing printed, no orderbot code.
FLOOR = (
    "import typer, typer._adapters, rich.console, rich.table, rich.live, rich.panel, pydantic_settings\n"
    "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\n"
)


# A script run as orderbot's command line ends: what its imports made frozen at exit (gc.freeze,
# as orderbot.cli.main does), so Python's last collections do not free it object by object.
FROZEN_AT_EXIT = (
    "import atexit, gc, runpy, sys\n"
    "atexit.register(gc.freeze)\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def cold_start(effort: Effort, tmp: Path) -> list[Figure]:
    from bare_app import generate
    from loopback import Loopback

    work = tmp / "cold"
    work.mkdir()
    bare, fair = work / "bare_app.py", work / "fair_floor.py"
    bare.write_text(generate(), encoding="utf-8")
    fair.write_text(generate(job=True), encoding="utf-8")
    env = _process_env(work)
    orderbot, py = _orderbot_command(), sys.executable
    rounds = effort.cold_rounds
    question = "查询 ORD-1001"
    with Loopback() as api:
        env_openai = env | {"OPENAI_API_KEY": "sk-benchmark"}
        # The --help pair is cheap and its gap small: twice the rounds, so load from other
        # work on a shared machine does not decide the verdict.
        t = rounds_of(
            {
                "orderbot --help": _wall([*orderbot, "--help"], env=env, cwd=work, shows="Usage"),
                "bare --help": _wall([py, str(bare), "--help"], env=env, cwd=work, shows="Usage"),
            },
            2 * rounds,
        )
        offline = ["ask", "--provider", "offline", question]
        offline_q = ["ask", "-q", "--provider", "offline", question]
        variants = {
            "orderbot offline": ([*orderbot, *offline], ANSWER),
            "orderbot offline -q": ([*orderbot, *offline_q], ANSWER),
            "import typer, rich, pydantic": ([py, "-c", "import typer, rich, pydantic"], None),
            # Where the offline figure's time goes: Typer's own parsing of the same options
            # (it builds a pydantic adapter per option), the fair floor (that, one settings
            # model, one table) and the libraries orderbot stands on, imported only.
            "bare ask": ([py, str(bare), *offline], None),
            "fair floor": ([py, str(fair), *offline_q], question),
            "imports-only floor": ([py, "-c", FLOOR], None),
            "orderbot openai": ([*orderbot, "ask", "--provider", "openai", "--base-url", api.url, question], ANSWER),
            "import openai + requests": ([py, str(HERE / "openai_baseline.py"), api.url], ANSWER),
            "openai floor": ([py, str(HERE / "openai_baseline.py"), api.url, "--floor"], ANSWER),
            # The baselines ending as orderbot ends: what orderbot's work alone adds, its exit aside.
            "fair floor, frozen at exit": ([py, "-c", FROZEN_AT_EXIT, str(fair), *offline_q], question),
            "openai baseline, frozen at exit": (
                [py, "-c", FROZEN_AT_EXIT, str(HERE / "openai_baseline.py"), api.url],
                ANSWER,
            ),
        }
        t |= rounds_of({k: _wall(v, env=env_openai, cwd=work, shows=text) for k, (v, text) in variants.items()}, rounds)

    def fig(name: str, ours: str, base: str, target: float | None, compared: str) -> Figure:
        shown = {side: variants[side][1] for side in (ours, base) if side in variants}
        printed = {f"{side} printed": text for side, text in shown.items() if text}
        return Figure("cold", name, t[ours], t[base], target, compared, checks=printed)

    whole = "whole-process wall time, stdout not a terminal, bytecode cached, interleaved"
    floor_job = (
        "benchmarks/bare_app.py --job: a bare Typer app with orderbot's root options and ask's, that "
        "parses them, builds one pydantic-settings model with the fields of orderbot's Settings from them "
        "(and the environment, .env) and prints one Rich table (the question and the settings not at their "
        "default), run as `ask -q --provider offline`"
    )
    return [
        fig(
            "orderbot --help",
            "orderbot --help",
            "bare --help",
            1.1,
            f"`orderbot --help` vs a generated bare Typer app with the same commands and help; {whole}, "
            f"{2 * rounds} rounds",
        ),
        fig(
            "ask --provider offline",
            "orderbot offline",
            "import typer, rich, pydantic",
            None,
            f'`orderbot ask --provider offline "{question}"` (tables drawn, record written) vs '
            f'`python -c "import typer, rich, pydantic"`; {whole}, {rounds} rounds',
        ),
        fig(
            "  share: bare Typer app, same ask options",
            "bare ask",
            "import typer, rich, pydantic",
            None,
            "the bare app parsing ask's options (the command does nothing) vs the same import line",
        ),
        fig(
            "  share: fair floor",
            "fair floor",
            "import typer, rich, pydantic",
            None,
            f"the fair floor ({floor_job}) vs the same import line",
        ),
        fig(
            "  share: imports-only floor",
            "imports-only floor",
            "import typer, rich, pydantic",
            None,
            "Typer with its option parsing, pydantic-settings, Rich table/live/panel and one pydantic model, "
            "imported only, vs the import line",
        ),
        fig(
            "ask -q offline vs the fair floor",
            "orderbot offline -q",
            "fair floor",
            1.25,
            f'`orderbot ask -q --provider offline "{question}"` (the answer only, record written) vs the fair '
            f"floor ({floor_job}); what orderbot adds over any Typer + Rich + pydantic program doing this job; "
            f"{whole}, {rounds} rounds",
        ),
        fig(
            "  ask -q offline vs the imports-only floor",
            "orderbot offline -q",
            "imports-only floor",
            None,
            "the same run vs the imports-only floor (the libraries imported, one model, nothing parsed or "
            "printed): the floor the offline target was judged against before the fair floor",
        ),
        fig(
            "  ask -q offline vs the fair floor, both frozen at exit",
            "orderbot offline -q",
            "fair floor, frozen at exit",
            None,
            "the same run vs the fair floor ending as orderbot's command line ends (what its imports made "
            "frozen at exit, gc.freeze, so Python's last collections do not free it): orderbot's work alone",
        ),
        fig(
            "  ask offline (tables) vs the fair floor",
            "orderbot offline",
            "fair floor",
            None,
            "`ask` drawing its transitions table and answer panel vs the fair floor",
        ),
        fig(
            "ask --provider openai (loopback)",
            "orderbot openai",
            "import openai + requests",
            1.2,
            "`orderbot ask --provider openai --base-url <loopback>` vs benchmarks/openai_baseline.py: "
            f"import openai, a client, the plain loop, the same 2 requests to the same server; {whole}, "
            f"{rounds} rounds",
        ),
        fig(
            "  openai vs the baseline, both frozen at exit",
            "orderbot openai",
            "openai baseline, frozen at exit",
            None,
            "the same run vs the openai baseline ending as orderbot's command line ends (gc.freeze at exit): "
            "orderbot's work alone",
        ),
        fig(
            "  share: + Typer, Rich, pydantic-settings",
            "openai floor",
            "import openai + requests",
            None,
            "the baseline with orderbot's command-line libraries loaded first vs the baseline",
        ),
        fig(
            "  orderbot openai vs that floor",
            "orderbot openai",
            "openai floor",
            None,
            "what orderbot itself adds on top of its libraries",
        ),
    ]


# ---- 2b. the import budget -----------------------------------------------------------------

IMPORT_FLOOR = "import typer, rich, pydantic, pydantic_settings"
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)")


def _imports_of(
    command: list[str], *, env: dict, cwd: Path, shows: str | None = None
) -> list[tuple[str, int, int, int]]:
    """What the command imports, from Python's own -X importtime (PYTHONPROFILEIMPORTTIME,
    which the orderbot script honours too): (module, self µs, cumulative µs, depth), in order."""
    done = subprocess.run(command, env=env | {"PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, capture_output=True)
    if done.returncode != 0 or (shows is not None and shows not in done.stdout.decode(errors="replace")):
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    found = []
    for line in done.stderr.decode(errors="replace").splitlines():
        if match := IMPORT_LINE.match(line):
            found.append((match[4], int(match[1]), int(match[2]), len(match[3]) - 1))
    return found


def import_budget(effort: Effort, tmp: Path) -> list[Figure]:
    """orderbot's own modules on an offline `ask -q` against the libraries it stands on."""
    work = tmp / "imports"
    work.mkdir()
    env, question = _process_env(work), "查询 ORD-1001"
    ask = [*_orderbot_command(), "ask", "-q", "--provider", "offline", question]
    floor = [sys.executable, "-c", IMPORT_FLOOR]
    ours: list[float] = []
    base: list[float] = []
    own: dict[str, list[int]] = {}
    for index in range(effort.cold_rounds + 1):  # the first fills the bytecode cache, and is not kept
        modules = _imports_of(ask, env=env, cwd=work, shows=ANSWER)
        line = _imports_of(floor, env=env, cwd=work)
        if index == 0:
            continue
        first = next(i for i, (name, *_) in enumerate(line) if name == "typer")  # after Python's own start-up
        base.append(sum(cumulative for _, _, cumulative, depth in line[first:] if depth == 0) / 1e6)
        mine = [(name, self) for name, self, _, _ in modules if name == "orderbot" or name.startswith("orderbot.")]
        ours.append(sum(self for _, self in mine) / 1e6)
        for name, self in mine:
            own.setdefault(name, []).append(self)
    heaviest = sorted(own.items(), key=lambda item: -statistics.median(item[1]))[:8]
    return [
        Figure(
            "imports",
            "orderbot's own imports on ask -q",
            ours,
            base,
            0.2,
            f'-X importtime of `orderbot ask -q --provider offline "{question}"`: the self time of every '
            f"orderbot module it imports (its own code at import: classes, models, tables) vs the cumulative "
            f'time of `python -c "{IMPORT_FLOOR}"`; separate processes, interleaved, bytecode cached, '
            f"{len(ours)} rounds",
            checks={
                "ask -q printed": ANSWER,
                "orderbot modules imported": len(own),
                "heaviest (median self time)": ", ".join(
                    f"{name} {statistics.median(times) / 1e3:.1f} ms" for name, times in heaviest
                ),
            },
        )
    ]


# ---- 3. order files at scale ------------------------------------------------------------


def _worker(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(HERE / "load_worker.py"), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"load_worker {' '.join(args)} failed: {done.stderr[-800:]}")
    return json.loads(done.stdout)


def _label(size: int) -> str:
    if size < 1000:
        return str(size)
    return f"{size // 1000}k" if size < 1_000_000 else f"{size // 1_000_000}M"


def order_files(sizes: list[int], tmp: Path, effort: Effort) -> list[Figure]:
    from gen_orders import write

    figures = []
    for size in sizes:
        path = write(size, tmp / f"orders-{size}.json")
        label, mb = _label(size), path.stat().st_size / 1e6
        runs: dict[str, list[dict]] = {"json-gc-off": [], "json-gc-on": [], "orderbot": []}
        small, large = effort.order_rounds
        for _ in range(large if size >= 100_000 else small):  # interleaved, each in a fresh process
            for mode, results in runs.items():
                loaded = _worker(mode, str(path))
                if loaded["count"] != size:
                    raise RuntimeError(f"{mode} loaded {loaded['count']} of the {size} orders in {path.name}")
                results.append(loaded)

        def samples(mode: str, key: str) -> list[float]:
            return [r[key] for r in runs[mode]]  # noqa: B023 - used within this iteration

        how = f"{len(runs['orderbot'])} rounds, each load in a fresh process, interleaved"
        figures += [
            Figure(
                "orders",
                f"load {label} orders ({mb:.0f} MB)",
                samples("orderbot", "seconds"),
                samples("json-gc-off", "seconds"),
                1.5,
                "OrderStore.load (every order validated) vs json.load + a dict by id with the collector "
                f"paused and the result frozen, as orderbot does; both timed with a final gc.collect(); {how}",
                checks={"orders loaded by each": size},
            ),
            Figure(
                "orders",
                f"  load {label} vs json.load, collector on",
                samples("orderbot", "seconds"),
                samples("json-gc-on", "seconds"),
                None,
                "the same, against json.load as a plain script runs it (collector on as Python starts)",
            ),
            Figure(
                "orders",
                f"peak memory {label}",
                samples("orderbot", "peak_bytes"),
                samples("json-gc-off", "peak_bytes"),
                2.0,
                "rise of the resident-set high-water mark during the load, same pair as above",
                unit="bytes",
            ),
            Figure(
                "orders",
                f"lookup by id {label}",
                [us / 1e6 for us in samples("orderbot", "lookup_us")],
                compared="store.get(order_id) over 1,000 ids × 200",
            ),
        ]
        copy = tmp / f"cancel-{size}.json"
        cancels = []
        for _ in range(large):
            shutil.copyfile(path, copy)
            done = _worker("cancel", str(copy))
            if done["status_after"] != done["cancelled"]:
                raise RuntimeError(f"the cancellation left {done['order_id']} {done['status_after']!r}")
            cancels.append(done["seconds"])
        figures.append(
            Figure(
                "orders",
                f"one cancellation {label}",
                cancels,
                compared="OrderStore.cancel on a copy of the file: lock, re-read, validate, atomic rewrite",
                checks={"orders cancelled, read back from the file": len(cancels)},
            )
        )
        for leftover in (copy, path):
            leftover.unlink(missing_ok=True)
    return figures


# ---- 4. run records and `orderbot runs` ------------------------------------------------


def _filesystem(path: Path) -> str:
    """The file-system type `path` is on (fsync's cost depends on it), from /proc/mounts."""
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _, point, fstype, *_ = line.split()
                if str(path.resolve()).startswith(point.rstrip("/") + "/") and len(point) > len(best):
                    best, kind = point, fstype
    except OSError:
        pass
    return kind


def _fill_runs(state: Path, count: int, template: Path) -> None:
    """`count` runs made from the newest run of the state directory `template`, each under its
    own run id (one an hour back in time), in one transaction straight into the database: the
    benchmark needs many runs, not many fsyncs. The key comes along, so each record verifies."""
    import sqlite3

    from orderbot.runs.sqlite import SqliteRunStore

    shutil.rmtree(state, ignore_errors=True)
    SqliteRunStore.in_state_dir(state).close()  # the tables, as orderbot makes them
    shutil.copyfile(template / "record.key", state / "record.key")
    with sqlite3.connect(template / "runs.db") as source:
        columns = [row[1] for row in source.execute("PRAGMA table_info(runs)")]
        row = dict(zip(columns, source.execute("SELECT * FROM runs ORDER BY created_at DESC").fetchone(), strict=True))
    base = time.time() - count * 3600
    rows = []
    for index in range(count):
        wall = base + index * 3600
        run_id = time.strftime("%y%m%d-%H%M%S", time.gmtime(wall)) + f"-{index % 65536:04x}"
        started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + ".000000Z"
        record = row["record"].replace(row["run_id"], run_id)
        rows.append(tuple({**row, "run_id": run_id, "created_at": started, "record": record}[c] for c in columns))
    with sqlite3.connect(state / "runs.db") as db:
        db.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * len(columns))})", rows)


def _listed(env: dict, cwd: Path, limit: int, *flags: str) -> int:
    """How many runs `orderbot runs --json` lists (at most `limit`): what a person would see."""
    command = [*_orderbot_command(), "runs", "--json", "-n", str(limit), *flags]
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-500:]}")
    return len(json.loads(done.stdout))


def run_records(effort: Effort, tmp: Path) -> list[Figure]:
    """A whole offline run keeping its record vs the same run with --no-log; `runs` at scale."""
    work = tmp / "records"
    work.mkdir()
    env = _process_env(work)
    kept, unkept = env | {"ORDERBOT_STATE_DIR": str(work / "kept")}, env | {"ORDERBOT_STATE_DIR": str(work / "unkept")}
    orderbot, rounds = _orderbot_command(), effort.record_rounds
    ask = [*orderbot, "ask", "--provider", "offline", "查询 ORD-1001"]
    t = rounds_of(
        {
            "record": _wall(ask, env=kept, cwd=work, shows=ANSWER),
            "no record": _wall([*ask, "--no-log"], env=unkept, cwd=work, shows=ANSWER),
        },
        rounds,
    )
    # Each side in a state directory of its own: one run kept per run made (the warm-up's
    # too), none with --no-log. Counted as `orderbot runs` sees them, whatever the store.
    made = rounds + 1
    checks = {"runs kept by ask": _listed(kept, work, 2 * made), "runs kept by ask --no-log": _listed(unkept, work, 10)}
    if checks != {"runs kept by ask": made, "runs kept by ask --no-log": 0}:
        raise RuntimeError(f"{made} runs each side, but `orderbot runs` lists {checks}")
    figures = [
        Figure(
            "records",
            "offline run, record written",
            t["record"],
            t["no record"],
            1.1,
            '`orderbot ask --provider offline "查询 ORD-1001"` keeping its record (with fsync) vs the same '
            f"command with --no-log (the same modules imported, the same store opened, no record kept); "
            f"state directory on {_filesystem(work)}; whole process, {rounds} rounds interleaved",
            checks=checks,
        )
    ]

    # `runs` at few and at many records, made from the record the runs above wrote.
    few, many = effort.runs_counts
    lists, envs = {}, {}
    for count in (few, many):
        other = tmp / f"runs-{count}"
        _fill_runs(other / "state", count, work / "kept")
        envs[count] = _process_env(other) | {"ORDERBOT_KEEP_RUNS": str(count * 2)}
        lists[f"runs {count}"] = _wall([*orderbot, "runs"], env=envs[count], cwd=work)
        lists[f"filter {count}"] = _wall([*orderbot, "runs", "--user", "nobody"], env=envs[count], cwd=work)
    t = rounds_of(lists, rounds)
    listed, expected = {}, {}
    for count in (few, many):
        listed[f"runs listed at {count}"] = _listed(envs[count], work, count + 1)
        listed[f"runs of user nobody at {count}"] = _listed(envs[count], work, 10, "--user", "nobody")
        expected |= {f"runs listed at {count}": count, f"runs of user nobody at {count}": 0}
    if listed != expected:
        raise RuntimeError(f"the stores filled with {few} and {many} runs list {listed}")
    for what, name in (("runs", "orderbot runs"), ("filter", "orderbot runs --user nobody")):
        figures.append(
            Figure(
                "records",
                f"`{name}` at {_label(many)} records",
                t[f"{what} {many}"],
                t[f"{what} {few}"],
                1.2,
                f"`{name}` (newest 20{'; a filter that matches no run' if what == 'filter' else ''}) "
                f"with {many:,} records vs with {few}; whole process, {rounds} rounds interleaved",
                checks={k: v for k, v in listed.items() if ("nobody" in k) == (what == "filter")},
            )
        )
    return figures


# ---- the table --------------------------------------------------------------------------


def print_table(figures: list[Figure]) -> None:
    rows = [("section", "figure", "orderbot min / median", "baseline min / median", "ratio", "of mins", "target", "")]
    for f in figures:
        rows.append(
            (
                f.section,
                f.name,
                show(f.ours, f.unit),
                show(f.base, f.unit),
                _times(f.ratio),
                _times(f.ratio_of_mins),
                "" if f.target is None else f"≤ {f.target:g}×",
                f.verdict,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    print("\nratio: median of the per-round ratios (judged against the target); of mins: min ÷ min.")
    print("What each figure compares:")
    for f in figures:
        if f.compared:
            print(f"  {f.section} · {f.name.strip()}: {f.compared}")
    print("What was checked while measuring (a run stops when a check fails):")
    for f in figures:
        for what, value in f.checks.items():
            print(f"  {f.section} · {f.name.strip()}: {what}: {value}")


def _times(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.0f}×" if ratio >= 100 else f"{ratio:.2f}×"


def progress(what: str) -> None:
    print(f"  measuring {what} ...", file=sys.stderr, flush=True)


def machine() -> str:
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()} · {platform.system()} {platform.machine()}"
    )


def parse_sizes(text: str) -> list[int]:
    units = {"k": 1_000, "m": 1_000_000}
    return [int(s[:-1]) * units[s[-1].lower()] if s[-1].lower() in units else int(s) for s in text.split(",") if s]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (still at least 3), no 1M-order file")
    parser.add_argument(
        "--smoke", action="store_true", help="every section on tiny data, checked but not judged (what the tests run)"
    )
    parser.add_argument("--only", default="loop,cold,imports,orders,records", help="comma-separated sections")
    parser.add_argument(
        "--sizes", help="order-file sizes, e.g. 10k,100k (default 10k,100k,1M; --quick 10k,100k; --smoke 1000)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--check", action="store_true", help="exit 1 when any measured figure misses its target")
    args = parser.parse_args(argv)
    if args.smoke and (args.check or args.quick):
        parser.error("--smoke measures nothing: it cannot be --check'ed, nor be --quick")
    effort = SMOKE if args.smoke else QUICK if args.quick else FULL
    sections = set(args.only.split(","))
    sizes = parse_sizes(args.sizes or ("1000" if args.smoke else "10k,100k" if args.quick else "10k,100k,1M"))
    stamp = machine()  # when the run started
    mode = " · smoke: checks that everything runs, no figure is a measurement" if args.smoke else ""
    print(stamp + (" · quick" if args.quick else "") + mode, flush=True)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="orderbot-bench-") as name:
        tmp = Path(name)
        if "loop" in sections:
            progress("loop overhead")
            figures += loop_overhead(effort)
        if "cold" in sections:
            progress("cold start")
            figures += cold_start(effort, tmp)
        if "imports" in sections:
            progress("the import budget")
            figures += import_budget(effort, tmp)
        if "orders" in sections:
            progress(f"order files ({', '.join(map(_label, sizes))})")
            figures += order_files(sizes, tmp, effort)
        if "records" in sections:
            progress("run records and `orderbot runs`")
            figures += run_records(effort, tmp)
    if args.smoke:
        for figure in figures:
            figure.judged = False
    print()
    print_table(figures)
    if args.json:
        doc = {"machine": stamp, "quick": args.quick, "smoke": args.smoke, "figures": [f.as_dict() for f in figures]}
        args.json.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    missed = [f.name.strip() for f in figures if f.verdict == "MISSED"]
    if args.check and missed:
        print(f"\ntargets missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
