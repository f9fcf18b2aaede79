"""orderbot's benchmarks: one command, a table of ratios measured side by side in one run.

    python benchmarks/run.py                  # everything, 1M orders included (several minutes)
    python benchmarks/run.py --quick          # fewer rounds, no 1M file (about two minutes)
    python benchmarks/run.py --only loop,cold --sizes 10k --json out.json
    python benchmarks/run.py --check          # exit 1 when a target is missed

Absolute times on a shared machine are noise; ratios of variants measured in the same run,
interleaved round by round, are much less so. Every figure shows the minimum and the
median over at least 3 rounds of both sides; the ratio judged against a target is the
median of the per-round ratios (each round measures both sides back to back). Below the
table, each figure says exactly what it compares. Sections:

  loop     the two-turn scenario in-process: orderbot's Engine vs a plain hand-written
           loop (plain_loop.py) (and vs pydantic-ai and openai-agents when they are installed)
  cold     whole-process wall time: --help, an offline run, an openai run over loopback
  orders   order files (10k, 100k, 1M): load time and peak memory vs json.load with the
           collector paused as orderbot pauses it (and with it on), lookup, one cancellation
  records  a whole offline run writing its record vs the same run writing none; `runs`
           (with and without a filter) at 10,000 records vs at 10

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
        }


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


def loop_overhead(quick: bool) -> list[Figure]:
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

    def plain_run() -> None:
        if plain_loop.run_workflow(plain_loop.ScriptedClient(plain_loop.two_turn_script()), QUESTION) != ANSWER:
            raise AssertionError("the plain loop did not answer")

    runners, missing = peers.available()
    rounds, batch = (5, 300) if quick else (21, 1000)
    variants = {"orderbot": per_run(orderbot_run, batch), "plain": per_run(plain_run, batch)}
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
        )
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


def _wall(command: list[str], *, env: dict, cwd: Path, expect: int = 0) -> Callable[[], float]:
    def measure() -> float:
        began = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - began
        if done.returncode != expect:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
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


# The libraries an offline run cannot do without, loaded as orderbot loads them, with
# Typer's runtime option parsing and one pydantic model: no orderbot code at all.
FLOOR = (
    "import typer, typer._adapters, rich.console, rich.table, rich.live, rich.panel, pydantic_settings\n"
    "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\n"
)


def cold_start(quick: bool, tmp: Path) -> list[Figure]:
    from bare_app import generate
    from loopback import Loopback

    work = tmp / "cold"
    work.mkdir()
    bare = work / "bare_app.py"
    bare.write_text(generate(), encoding="utf-8")
    env = _process_env(work)
    orderbot, py = _orderbot_command(), sys.executable
    rounds = 5 if quick else 15
    with Loopback() as api:
        env_openai = env | {"OPENAI_API_KEY": "sk-benchmark"}
        # The --help pair is cheap and its gap small: twice the rounds, so load from other
        # work on a shared machine does not decide the verdict.
        t = rounds_of(
            {
                "orderbot --help": _wall([*orderbot, "--help"], env=env, cwd=work),
                "bare --help": _wall([py, str(bare), "--help"], env=env, cwd=work),
            },
            2 * rounds,
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
        t |= rounds_of({k: _wall(v, env=env_openai, cwd=work) for k, v in variants.items()}, rounds)

    def fig(name: str, ours: str, base: str, target: float | None, compared: str) -> Figure:
        return Figure("cold", name, t[ours], t[base], target, compared)

    whole = "whole-process wall time, stdout piped, bytecode cached, interleaved"
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
            f'`orderbot ask --provider offline "查询 ORD-1001"` (record written) vs '
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
            "  share: dependency floor",
            "dependency floor",
            "import typer, rich, pydantic",
            None,
            "Typer's option parsing, pydantic-settings, Rich table/live/panel, one model vs the import line",
        ),
        fig(
            "  orderbot offline vs the floor",
            "orderbot offline",
            "dependency floor",
            1.25,
            "what orderbot itself adds on top of its libraries (the offline target: the floor is what "
            "the libraries the mission names cost before orderbot does anything)",
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


# ---- 3. order files at scale ------------------------------------------------------------


def _worker(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(HERE / "load_worker.py"), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"load_worker {' '.join(args)} failed: {done.stderr[-800:]}")
    return json.loads(done.stdout)


def _label(size: int) -> str:
    return f"{size // 1000}k" if size < 1_000_000 else f"{size // 1_000_000}M"


def order_files(sizes: list[int], tmp: Path) -> list[Figure]:
    from gen_orders import write

    figures = []
    for size in sizes:
        path = write(size, tmp / f"orders-{size}.json")
        label, mb = _label(size), path.stat().st_size / 1e6
        runs: dict[str, list[dict]] = {"json-gc-off": [], "json-gc-on": [], "orderbot": []}
        for _ in range(MIN_ROUNDS if size >= 100_000 else 5):  # interleaved, each in a fresh process
            for mode, results in runs.items():
                results.append(_worker(mode, str(path)))

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
        for _ in range(MIN_ROUNDS):
            shutil.copyfile(path, copy)
            cancels.append(_worker("cancel", str(copy))["seconds"])
        figures.append(
            Figure(
                "orders",
                f"one cancellation {label}",
                cancels,
                compared="OrderStore.cancel on a copy of the file: lock, re-read, validate, atomic rewrite",
            )
        )
        for leftover in (copy, path):
            leftover.unlink(missing_ok=True)
    return figures


# ---- 4. run records and the runs index --------------------------------------------------


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


def _fill_runs(state: Path, count: int, template: bytes, template_id: str) -> None:
    """`count` records made from one real record, each under its own run id (one an hour back
    in time). Written directly: the benchmark needs many records, not many fsyncs."""
    runs = state / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for stale in runs.iterdir():
        stale.unlink()
    base = time.time() - count * 3600
    for index in range(count):
        run_id = time.strftime("%y%m%d-%H%M%S", time.gmtime(base + index * 3600)) + f"-{index % 65536:04x}"
        (runs / f"{run_id}.json").write_bytes(template.replace(template_id.encode(), run_id.encode()))


def run_records(quick: bool, tmp: Path) -> list[Figure]:
    """A whole offline run writing its record vs the same run writing none; `runs` at scale."""
    work = tmp / "records"
    work.mkdir()
    env = _process_env(work)
    py, rounds = sys.executable, (5 if quick else 15)
    ask = ["ask", "--provider", "offline", "查询 ORD-1001"]
    t = rounds_of(
        {
            "record": _wall([py, str(HERE / "ask_process.py"), "record", *ask], env=env, cwd=work),
            "no record": _wall([py, str(HERE / "ask_process.py"), "no-record", *ask], env=env, cwd=work),
        },
        rounds,
    )
    figures = [
        Figure(
            "records",
            "offline run, record written",
            t["record"],
            t["no record"],
            1.1,
            '`orderbot ask --provider offline "查询 ORD-1001"` writing its record (with fsync) vs the same '
            f"run with RunStore.save replaced by a no-op (benchmarks/ask_process.py); state directory on "
            f"{_filesystem(work)}; whole process, {rounds} rounds interleaved",
        )
    ]

    # `runs` at 10 and at 10,000 records, made from the record the runs above wrote.
    state = work / "state"
    written = sorted((state / "runs").glob("*.json"))
    template_id = written[-1].stem
    template = written[-1].read_bytes()
    orderbot = _orderbot_command()
    lists = {}
    for count in (10, 10_000):
        other = tmp / f"runs-{count}"
        _fill_runs(other / "state", count, template, template_id)
        run_env = _process_env(other) | {"ORDERBOT_KEEP_RUNS": str(count * 2)}
        lists[f"runs {count}"] = _wall([*orderbot, "runs"], env=run_env, cwd=work)
        lists[f"filter {count}"] = _wall([*orderbot, "runs", "--user", "nobody"], env=run_env, cwd=work)
    t = rounds_of(lists, rounds)  # the warm-up runs build any index the records lack
    for what, name in (("runs", "orderbot runs"), ("filter", "orderbot runs --user nobody")):
        figures.append(
            Figure(
                "records",
                f"`{name}` at 10k records",
                t[f"{what} 10000"],
                t[f"{what} 10"],
                1.2,
                f"`{name}` (newest 20{'; a filter that matches no run' if what == 'filter' else ''}) "
                f"with 10,000 records vs with 10; whole process, {rounds} rounds interleaved",
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
    parser.add_argument("--only", default="loop,cold,orders,records", help="comma-separated sections")
    parser.add_argument("--sizes", help="order-file sizes, e.g. 10k,100k (default 10k,100k,1M; --quick 10k,100k)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--check", action="store_true", help="exit 1 when any measured figure misses its target")
    args = parser.parse_args(argv)
    sections = set(args.only.split(","))
    sizes = parse_sizes(args.sizes or ("10k,100k" if args.quick else "10k,100k,1M"))
    stamp = machine()  # when the run started
    print(stamp + (" · quick" if args.quick else ""), flush=True)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="orderbot-bench-") as name:
        tmp = Path(name)
        if "loop" in sections:
            progress("loop overhead")
            figures += loop_overhead(args.quick)
        if "cold" in sections:
            progress("cold start")
            figures += cold_start(args.quick, tmp)
        if "orders" in sections:
            progress(f"order files ({', '.join(map(_label, sizes))})")
            figures += order_files(sizes, tmp)
        if "records" in sections:
            progress("run records and the runs index")
            figures += run_records(args.quick, tmp)
    print()
    print_table(figures)
    if args.json:
        doc = {"machine": stamp, "quick": args.quick, "figures": [f.as_dict() for f in figures]}
        args.json.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    missed = [f.name.strip() for f in figures if f.verdict == "MISSED"]
    if args.check and missed:
        print(f"\ntargets missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
