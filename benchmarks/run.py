"""orderbot's benchmarks: one command, a table of ratios measured side by side in one run.

    python benchmarks/run.py            # everything, 1M orders included (several minutes)
    python benchmarks/run.py --quick    # fewer rounds, no 1M file (about a minute)
    python benchmarks/run.py --only loop,cold --json out.json

Absolute times on shared machines are noise; ratios of variants measured in the same run,
interleaved round by round, are not. Every figure is a median over rounds. Sections:

  loop     the article's two-turn scenario in-process: orderbot's Engine vs the plain loop
  cold     whole-process wall time: --help, an offline run, an openai run over loopback
  orders   order files of 10k/100k/1M: load time and peak memory vs json.load, lookup,
           one cancellation
  records  what writing the run record after each transition adds to an offline run

Generated files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

QUESTION = "请查询订单 ORD-1001 的状态。"
ANSWER = "订单 ORD-1001 的状态是：已发货。"


@dataclass
class Figure:
    section: str
    name: str
    measured: str  # the variant's median, in its unit
    baseline: str  # the baseline's median
    ratio: float | None
    target: float | None  # the ratio must stay at or under this
    note: str = ""

    @property
    def verdict(self) -> str:
        if self.target is None or self.ratio is None:
            return "info"
        return "ok" if self.ratio <= self.target else "MISSED"


def median(values: list[float]) -> float:
    return statistics.median(values)


# ---- 1. loop overhead -------------------------------------------------------------------


def loop_overhead(quick: bool) -> list[Figure]:
    """orderbot's Engine vs the article's run_workflow, same scenario, same scripted turns."""
    import plain_loop

    from orderbot.engine import Engine, Limits, RunState, StopReason
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.orders import SAMPLE_PATH, OrderStore, order_tools
    from orderbot.render import TransitionView, make_console
    from orderbot.tools import Toolbox

    store = OrderStore.load(SAMPLE_PATH)  # in memory from here on: get_order_status only reads
    toolbox = Toolbox(order_tools(store))
    limits = Limits()
    console = make_console()
    script = [calls(call("get_order_status", {"order_id": "ORD-1001"}, call_id="call_1")), text(ANSWER)]

    def orderbot_run() -> None:
        # What `orderbot ask` wires up, minus drawing: the transition view collects (the
        # run record is measured on its own, below).
        view = TransitionView(console, limits, enabled=False)
        engine = Engine(ScriptedModel(script), toolbox, limits, observers=[view])
        state = engine.run(RunState.start(QUESTION, run_id="bench"))
        if state.stop_reason is not StopReason.ANSWERED:
            raise AssertionError(state.stop_reason)

    def plain_run() -> None:
        if plain_loop.run_workflow(plain_loop.ScriptedClient(plain_loop.two_turn_script()), QUESTION) != ANSWER:
            raise AssertionError("the plain loop did not answer")

    orderbot_run(), plain_run()  # warm up, and check both really answer
    rounds, batch = (9, 300) if quick else (21, 1000)
    ours, theirs, ratios = [], [], []
    for _ in range(rounds):
        gc.collect()
        began = time.perf_counter()
        for _ in range(batch):
            orderbot_run()
        a = (time.perf_counter() - began) / batch
        gc.collect()
        began = time.perf_counter()
        for _ in range(batch):
            plain_run()
        b = (time.perf_counter() - began) / batch
        ours.append(a), theirs.append(b), ratios.append(a / b)
    return [
        Figure(
            "loop",
            "two-turn run, in-process",
            f"{median(ours) * 1e6:.0f} µs",
            f"{median(theirs) * 1e6:.1f} µs",
            median(ratios),
            10.0,
            f"{rounds} rounds × {batch} runs each",
        )
    ]


# ---- 2. cold start ----------------------------------------------------------------------


def _orderbot_command() -> list[str]:
    script = Path(sys.executable).with_name("orderbot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "orderbot"]


def _wall(command: list[str], *, env: dict, cwd: Path, expect: int = 0) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - began
    if done.returncode != expect:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return seconds


def _interleaved(variants: dict[str, list[str]], rounds: int, *, env: dict, cwd: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for command in variants.values():  # one untimed run each: file caches, .pyc
        _wall(command, env=env, cwd=cwd)
    for _ in range(rounds):
        for name, command in variants.items():
            times[name].append(_wall(command, env=env, cwd=cwd))
    return times


# The libraries an offline run cannot do without, loaded as orderbot loads them, with
# Typer's runtime option parsing and one pydantic model: no orderbot code at all.
FLOOR = (
    "import typer, typer._adapters, rich.console, rich.table, rich.live, rich.panel, pydantic_settings\n"
    "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\n"
)


def cold_start(quick: bool, tmp: Path) -> tuple[list[Figure], float]:
    from bare_app import generate
    from loopback import Loopback

    work = tmp / "cold"
    work.mkdir()
    bare = work / "bare_app.py"
    bare.write_text(generate(), encoding="utf-8")
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
    orderbot, py = _orderbot_command(), sys.executable
    rounds = 7 if quick else 15
    with Loopback() as api:
        env_openai = env | {"OPENAI_API_KEY": "sk-benchmark"}
        # The --help pair is cheap and its gap small: twice the rounds, so load from other
        # work on a shared machine does not decide the verdict.
        t = _interleaved(
            {"orderbot --help": [*orderbot, "--help"], "bare --help": [py, str(bare), "--help"]},
            2 * rounds,
            env=env,
            cwd=work,
        )
        variants = {
            "orderbot offline": [*orderbot, "ask", "--provider", "offline", "查询 ORD-1001"],
            "import typer, rich, pydantic": [py, "-c", "import typer, rich, pydantic"],
            # Where the offline figure's time goes: Typer's own parsing of the same options
            # (it builds a pydantic adapter per option), and the libraries orderbot stands on.
            "bare ask": [py, str(bare), "ask", "--provider", "offline", "查询 ORD-1001"],
            "dependency floor": [py, "-c", FLOOR],
            "orderbot openai": [*orderbot, "ask", "--provider", "openai", "--base-url", api.url, "查询 ORD-1001"],
            "import openai + requests": [py, str(HERE / "openai_baseline.py"), api.url],
            "openai floor": [py, str(HERE / "openai_baseline.py"), api.url, "--floor"],
        }
        t |= _interleaved(variants, rounds, env=env_openai, cwd=work)
    ms = {name: median(values) * 1000 for name, values in t.items()}

    def fig(name: str, ours: str, base: str, target: float | None, note: str) -> Figure:
        ratios = [a / b for a, b in zip(t[ours], t[base], strict=False)]
        return Figure("cold", name, f"{ms[ours]:.0f} ms", f"{ms[base]:.0f} ms", median(ratios), target, note)

    figures = [
        fig(
            "orderbot --help",
            "orderbot --help",
            "bare --help",
            1.2,
            f"vs a bare Typer app with the same commands; {2 * rounds} rounds",
        ),
        fig(
            "ask --provider offline",
            "orderbot offline",
            "import typer, rich, pydantic",
            2.5,
            f'vs python -c "import typer, rich, pydantic"; {rounds} rounds',
        ),
        fig(
            "  share: bare Typer app, same ask options",
            "bare ask",
            "import typer, rich, pydantic",
            None,
            "Typer parses the options, the command does nothing",
        ),
        fig(
            "  share: dependency floor",
            "dependency floor",
            "import typer, rich, pydantic",
            None,
            "the above + pydantic-settings, Rich table/live/panel, one model",
        ),
        fig(
            "  orderbot offline vs the floor",
            "orderbot offline",
            "dependency floor",
            None,
            "what orderbot itself adds on top of its libraries",
        ),
        fig(
            "ask --provider openai (loopback)",
            "orderbot openai",
            "import openai + requests",
            1.2,
            "vs import openai + the same 2 requests",
        ),
        fig(
            "  share: + Typer, Rich, pydantic-settings",
            "openai floor",
            "import openai + requests",
            None,
            "the baseline with orderbot's command-line libraries loaded first",
        ),
        fig(
            "  orderbot openai vs that floor",
            "orderbot openai",
            "openai floor",
            None,
            "what orderbot itself adds on top of its libraries",
        ),
    ]
    return figures, ms["orderbot offline"] / 1000


# ---- 3. order files at scale ------------------------------------------------------------


def _worker(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(HERE / "load_worker.py"), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"load_worker {' '.join(args)} failed: {done.stderr[-800:]}")
    return json.loads(done.stdout)


def order_files(quick: bool, tmp: Path) -> list[Figure]:
    from gen_orders import write

    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    figures = []
    for size in sizes:
        path = write(size, tmp / f"orders-{size}.json")
        rounds = 1 if size >= 1_000_000 else (3 if quick else 5)
        base, ours = [], []
        for _ in range(rounds):  # interleaved, each in a fresh process
            base.append(_worker("baseline", str(path)))
            ours.append(_worker("orderbot", str(path)))
        label = f"{size // 1000}k" if size < 1_000_000 else f"{size // 1_000_000}M"
        mb = path.stat().st_size / 1e6
        t_ratio = median([o["seconds"] / b["seconds"] for o, b in zip(ours, base, strict=False)])
        m_ratio = median([o["peak_bytes"] / b["peak_bytes"] for o, b in zip(ours, base, strict=False)])
        figures.append(
            Figure(
                "orders",
                f"load {label} orders ({mb:.0f} MB)",
                f"{median([o['seconds'] for o in ours]):.2f} s",
                f"{median([b['seconds'] for b in base]):.2f} s",
                t_ratio,
                1.5,
                f"validated vs json.load + dict by id; {rounds} round(s)",
            )
        )
        figures.append(
            Figure(
                "orders",
                f"peak memory {label}",
                f"{median([o['peak_bytes'] for o in ours]) / 2**20:.0f} MiB",
                f"{median([b['peak_bytes'] for b in base]) / 2**20:.0f} MiB",
                m_ratio,
                2.0,
                "rise of the resident-set high-water mark during the load",
            )
        )
        figures.append(
            Figure(
                "orders",
                f"lookup by id {label}",
                f"{median([o['lookup_us'] for o in ours]):.2f} µs",
                "",
                None,
                None,
                "store.get(order_id)",
            )
        )
        copy = tmp / f"cancel-{size}.json"
        shutil.copyfile(path, copy)
        cancel = _worker("cancel", str(copy))
        figures.append(
            Figure(
                "orders",
                f"one cancellation {label}",
                f"{cancel['seconds'] * 1000:.0f} ms",
                "",
                None,
                None,
                cancel["how"],
            )
        )
        for leftover in (copy, path):
            leftover.unlink(missing_ok=True)
    return figures


# ---- 4. run records ---------------------------------------------------------------------


def run_records(quick: bool, tmp: Path, offline_wall: float | None) -> list[Figure]:
    """The record's cost per run, measured in-process with and without the Recorder."""
    try:
        from orderbot.runs import Recorder, RunStore
    except ImportError:
        return [Figure("records", "run record per transition", "n/a", "", None, None, "orderbot.runs is missing")]
    from io import StringIO

    from rich.console import Console

    from orderbot.engine import Engine, Limits, RunState
    from orderbot.models.offline import OfflineModel
    from orderbot.orders import SAMPLE_PATH, OrderStore, order_tools
    from orderbot.render import TransitionView, print_outcome
    from orderbot.tools import Toolbox

    toolbox = Toolbox(order_tools(OrderStore.load(SAMPLE_PATH)))
    limits = Limits()
    store = RunStore(tmp / "records", keep=50)

    def offline_run(record: bool) -> None:
        # An offline run as `orderbot ask` does it, drawing into a string instead of a terminal.
        console = Console(file=StringIO(), width=120, no_color=True)
        view = TransitionView(console, limits)
        state = RunState.start("查询 ORD-1001")
        model = OfflineModel()
        observers = [view]
        recorder = None
        if record:
            recorder = Recorder.start(
                store, state, provider="offline", model=model.name, toolbox=toolbox, limits=limits, orders=SAMPLE_PATH
            )
            observers.append(recorder)
            model = recorder.wrap(model)
        Engine(model, toolbox, limits, observers=observers).run(state)
        if recorder is not None:
            recorder.close()
        view.close()
        print_outcome(console, state)

    offline_run(True), offline_run(False)
    rounds, batch = (7, 20) if quick else (15, 40)
    with_record, without = [], []
    for _ in range(rounds):
        for flag, sink in ((True, with_record), (False, without)):
            began = time.perf_counter()
            for _ in range(batch):
                offline_run(flag)
            sink.append((time.perf_counter() - began) / batch)
    added = median([a - b for a, b in zip(with_record, without, strict=False)])
    figures = [
        Figure(
            "records",
            "offline run in-process, with record",
            f"{median(with_record) * 1000:.2f} ms",
            f"{median(without) * 1000:.2f} ms",
            median([a / b for a, b in zip(with_record, without, strict=False)]),
            None,
            "engine + rendering only: the record's fsyncs dominate a sub-ms run",
        )
    ]
    if offline_wall:
        figures.append(
            Figure(
                "records",
                "offline run (whole process), record added",
                f"+{added * 1000:.1f} ms",
                f"{offline_wall * 1000:.0f} ms",
                (offline_wall + added) / offline_wall,
                1.2,
                "the in-process cost of the record against `orderbot ask --provider offline`",
            )
        )
    return figures


# ---- the table --------------------------------------------------------------------------


def print_table(figures: list[Figure]) -> None:
    rows = [("section", "figure", "orderbot", "baseline", "ratio", "target", "", "note")]
    for f in figures:
        rows.append(
            (
                f.section,
                f.name,
                f.measured,
                f.baseline,
                "" if f.ratio is None else f"{f.ratio:.2f}×",
                "" if f.target is None else f"≤ {f.target:g}×",
                f.verdict,
                f.note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))


def progress(what: str) -> None:
    print(f"  measuring {what} ...", file=sys.stderr, flush=True)


def machine() -> str:
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()} · {platform.system()} {platform.machine()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, skip the 1M-order file")
    parser.add_argument("--only", default="loop,cold,orders,records", help="comma-separated sections")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    sections = set(args.only.split(","))
    stamp = machine()  # when the run started
    print(stamp + (" · quick" if args.quick else ""), flush=True)
    figures: list[Figure] = []
    offline_wall = None
    with tempfile.TemporaryDirectory(prefix="orderbot-bench-") as name:
        tmp = Path(name)
        if "loop" in sections:
            progress("loop overhead")
            figures += loop_overhead(args.quick)
        if "cold" in sections:
            progress("cold start")
            cold, offline_wall = cold_start(args.quick, tmp)
            figures += cold
        if "orders" in sections:
            progress("order files" + ("" if args.quick else " (1M included: a few minutes)"))
            figures += order_files(args.quick, tmp)
        if "records" in sections:
            progress("run records")
            figures += run_records(args.quick, tmp, offline_wall)
    print()
    print_table(figures)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": stamp,
                    "quick": args.quick,
                    "figures": [f.__dict__ | {"verdict": f.verdict} for f in figures],
                },
                ensure_ascii=False,
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
