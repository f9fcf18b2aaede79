"""Every script in benchmarks/ is run by a smoke test: named by a test here, or used by a script
that is. A new benchmark without a smoke path fails this until a test runs it."""

from __future__ import annotations

import re
from pathlib import Path

from benchkit import BENCHMARKS

HERE = Path(__file__).resolve().parent


def run_by_tests() -> set[str]:
    """The scripts a test here runs (`run("team.py", ...)`) or imports (`load("bare_app")`)."""
    named = set()
    for test in HERE.glob("test_*.py"):
        text = test.read_text(encoding="utf-8")
        named |= set(re.findall(r'\brun\(\s*"(\w+)\.py"', text))
        named |= set(re.findall(r'\bload\(\s*"(\w+)"', text))
    return named


def smoked(scripts: set[str], first: set[str]) -> set[str]:
    """`first` and every script they use, as a module (`import plain_loop`, `from gen_orders
    import write`) or as a file they start (`HERE / "load_worker.py"`), transitively."""
    seen, todo = set(), list(first & scripts)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = (BENCHMARKS / f"{name}.py").read_text(encoding="utf-8")
        for other in scripts - seen:
            if re.search(rf'^\s*(import|from) {other}\b|"{other}\.py"', text, re.M):
                todo.append(other)
    return seen


def test_every_benchmark_script_runs_in_a_smoke_test():
    scripts = {path.stem for path in BENCHMARKS.glob("*.py")}
    missing = sorted(scripts - smoked(scripts, run_by_tests()))
    assert not missing, f"no smoke test runs {', '.join(f'benchmarks/{m}.py' for m in missing)}: add one here"


def test_a_script_no_smoke_test_reaches_is_found():
    assert smoked({"run", "plain_loop", "orphan"}, {"run"}) == {"run", "plain_loop"}
