"""What the default run store costs a run, in-process, beside a plain durable write of the
same bytes: `python benchmarks/record_writes.py [--rounds N] [--runs K]`.

Each run is the article's two-turn scenario (`get_order_status`, then the answer) through
orderbot's Runner with a scripted model, recorded in a store in a temporary state
directory. Only the store's own work is timed (perf_counter around each call the recorder
makes of it: the saves at the run's start and stop, and the pruning after it), so the
engine's share, the same on both sides, is left out:

  store     the state directory's run store as `orderbot ask` opens it (open_run_store
            with the default settings: keep 200 runs)
  baseline  each save replaced by orderbot.atomic.atomic_write of the record's bytes, as
            a file store that keeps nothing else would write it: a temporary file,
            fsync, rename, fsync of the directory; no index, no pruning

`open` is one process's opening of the store (open, prepare, close) on a directory that
already holds runs, shown beside nothing (info). Rounds are interleaved: each round runs K
runs on each side back to back. Figures are per run, min / median over the rounds; the
ratio is the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _toolbox():
    from orderbot.loop.dispatch import Toolbox
    from orderbot.shops.sample.model import SAMPLE_PATH
    from orderbot.shops.sample.stores.jsonfile import JsonStore
    from orderbot.shops.sample.tools import order_tools

    return Toolbox(order_tools(JsonStore.load(SAMPLE_PATH)))


class Timed:
    """A store whose save and prune add their time to `spent`; `plain` writes the record's
    bytes with a durable atomic replace instead of saving it."""

    def __init__(self, store, plain: Path | None = None) -> None:
        self.store, self.plain, self.spent = store, plain, 0.0

    def __getattr__(self, name):
        return getattr(self.store, name)

    def save(self, record, steps=()):
        from orderbot.atomic import atomic_write

        began = time.perf_counter()
        if self.plain is None:
            self.store.save(record, steps)
        else:
            atomic_write(self.plain / f"{record.run_id}.json", record.to_json().encode(), follow_links=False)
        self.spent += time.perf_counter() - began

    def prune(self, keep_id=None):
        if self.plain is None:
            began = time.perf_counter()
            self.store.prune(keep_id)
            self.spent += time.perf_counter() - began
        return []


def runs_of(store, toolbox, count: int) -> float:
    """Seconds of store work per run, over `count` runs."""
    from orderbot.loop.engine import Limits
    from orderbot.loop.state import RunState
    from orderbot.models.scripted import ScriptedModel, call, calls, text
    from orderbot.runner import Runner

    store.spent = 0.0
    for _ in range(count):
        model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), text("已发货")])
        state = RunState.start("查询 ORD-1001", run_id=distinct_id())
        Runner(toolbox, model, store, provider="scripted").start(state, Limits())
    return store.spent / count


_made = itertools.count()


def distinct_id() -> str:
    """A run id of this second whose last part counts up: dozens of runs a second here, where
    orderbot's 16 random bits would draw one twice (the store then refuses the second run)."""
    return time.strftime("%y%m%d-%H%M%S-", time.gmtime()) + f"{next(_made) % 65536:04x}"


def opening(state: Path) -> float:
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings

    settings = load_settings(state_dir=state)
    began = time.perf_counter()
    store = open_run_store(settings)
    store.prepare()
    store.close()
    return time.perf_counter() - began


def filesystem(path: Path) -> str:
    best, kind = "", "unknown"
    with open("/proc/mounts") as mounts:
        for line in mounts:
            _, point, fstype, *_ = line.split()
            if str(path.resolve()).startswith(point.rstrip("/") + "/") and len(point) > len(best):
                best, kind = point, fstype
    return kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--runs", type=int, default=40, help="runs per side per round")
    parser.add_argument("--dir", type=Path, default=None, help="where the state directory goes [default: /tmp]")
    options = parser.parse_args()
    from orderbot.runs.stores import open_run_store
    from orderbot.settings import load_settings

    toolbox = _toolbox()
    with tempfile.TemporaryDirectory(prefix="orderbot-records-", dir=options.dir) as tmp:
        tmp = Path(tmp)
        state, plain = tmp / "state", tmp / "plain"
        plain.mkdir()
        store = Timed(open_run_store(load_settings(state_dir=state)))
        store.prepare()
        baseline = Timed(store.store, plain)  # its operator; its saves go to `plain`
        runs_of(store, toolbox, 5)  # warm-up: the key, the tables, the first pages
        runs_of(baseline, toolbox, 5)
        ours, base, opened = [], [], []
        for _ in range(options.rounds):
            ours.append(runs_of(store, toolbox, options.runs))
            base.append(runs_of(baseline, toolbox, options.runs))
            opened.append(statistics.median(opening(state) for _ in range(5)))
        # What each side did: the store keeps its newest runs (200 by default), the baseline a file a run.
        made = 5 + options.rounds * options.runs
        kept, files = len(list(store.summaries())), len(list(plain.iterdir()))
        store.close()
        kind = filesystem(tmp)
    if (kept, files) != (min(made, 200), made):
        raise SystemExit(f"{made} runs a side, but the store kept {kept} and the baseline wrote {files} files")
    ratios = [a / b for a, b in zip(ours, base, strict=True)]

    def ms(values: list[float]) -> str:
        return f"{min(values) * 1e3:.2f} / {statistics.median(values) * 1e3:.2f} ms"

    name = type(store.store).__name__
    print(f"{options.rounds} rounds × {options.runs} runs a side, state directory on {kind}, store: {name}")
    print(f"  store work per run (saves + prune)     {ms(ours)}")
    print(f"  plain durable writes of the same bytes {ms(base)}")
    ratio, of_mins = statistics.median(ratios), min(ours) / min(base)
    print(f"  ratio (median of per-round ratios)     {ratio:.2f}×  (of mins {of_mins:.2f}×)")
    print(f"  opening the store in a process         {ms(opened)}  (info)")
    print(f"  runs kept by the store {kept}, files written by the baseline {files}")


if __name__ == "__main__":
    main()
