"""Running the benchmarks (benchmarks/) from the tests: their smoke paths, a few rounds on tiny
data, so that a moved class or a changed exit code fails a test rather than a real run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str, path: Path | None = None) -> ModuleType:
    """A benchmark module (or the Python file at `path`) imported under its own name, as the
    scripts import each other (benchmarks/ on the path)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path or BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pydantic look a class's module up there
    spec.loader.exec_module(module)
    return module


def run(script: str, *args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """A benchmark script as a person runs it; it must end with 0."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def markdown_rows(output: str) -> dict[str, list[str]]:
    """The rows of the markdown table a script printed, by their first cell (header and rule left out)."""
    rows = {}
    for line in output.splitlines():
        if line.startswith("| ") and not line.startswith(("| figure", "| ---")):
            first, *rest = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[first] = rest
    return rows
