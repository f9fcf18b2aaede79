"""Instructions per run of the loop benchmark's orderbot side, counted with callgrind.

    python benchmarks/loop_instructions.py            # runs both counts and prints the figure
    python benchmarks/loop_instructions.py --runs N   # N runs, no counting (what callgrind runs)

The same run as run.py's loop section (`orderbot_run`: a fresh ScriptedModel with the
two turns, the transition view of a piped `ask` collecting rows, a new run id, every
transition's payload built) is made N times in one process under
`valgrind --tool=callgrind`, once with N = 1,000 and once with N = 0; the difference over
1,000 is the loop's instructions per run, with start-up and imports cancelled out.
Instruction counts are deterministic on one machine, so this figure is not noise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from io import StringIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

QUESTION = "请查询订单 ORD-1001 的状态。"


def runs(count: int) -> int:
    """Makes `count` runs of the scenario; how many answered (all of them, or it raises)."""
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

    store = OrderStore.load(SAMPLE_PATH)
    toolbox = Toolbox(order_tools(store))
    limits = Limits()
    console = Console(file=StringIO(), width=120)
    answered = 0
    for _ in range(count):
        model = ScriptedModel(
            [calls(call("get_order_status", plain_loop.ARGUMENTS, call_id="call_1")), text(plain_loop.ANSWER)]
        )
        view = TransitionView(console, limits)
        state = Engine(model, toolbox, limits, observers=[view]).run(RunState.start(QUESTION))
        if state.stop_reason is not StopReason.ANSWERED:
            raise AssertionError(f"orderbot stopped with {state.stop_reason}")
        answered += 1
    return answered


def counted(count: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--runs",
                str(count),
            ],
            check=True,
            capture_output=True,
        )
        return int(re.search(r"^summary: (\d+)", out.read_text(), re.M).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, help="make this many runs and count nothing")
    args = parser.parse_args()
    if args.runs is not None:
        runs(args.runs)
        return
    many, none = counted(1000), counted(0)
    print(f"{(many - none) / 1000 / 1000:.0f}k instructions per run (1,000 runs: {many:,}; none: {none:,})")


if __name__ == "__main__":
    main()
