"""The import graph of orderbot: no circle, and every module imports on its own.

A circle (render → trace → render, say) works only while one side imports lazily, and
breaks the first time someone moves an import to the top. The graph is read from the
source: every `import`, at the top, inside a function or under `TYPE_CHECKING` (a circle
that only type checkers follow is still two modules that cannot be read apart).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "orderbot"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from orderbot import models` imports the module orderbot.models
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in MODULES}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first circle found by a depth-first walk, as the path that closes it."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        path.append(name)
        for dep in sorted(graph[name]):
            if dep in path:
                return path[path.index(dep) :] + [dep]
            if dep not in done and (circle := visit(dep)):
                return circle
        path.pop()
        done.add(name)
        return None

    for name in sorted(graph):
        if name not in done and (circle := visit(name)):
            return circle
    return None


def test_the_import_graph_has_no_circle():
    graph = {name: imports_of(path) - {name} for name, path in MODULES.items()}
    circle = find_circle(graph)
    assert circle is None, "import circle: " + " → ".join(circle or [])


def test_the_circle_finder_finds_a_circle():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_every_module_imports_on_its_own():
    """Each module in a fresh set of orderbot modules (one process, for speed): a module
    that only works when another was imported first fails here."""
    script = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m == 'orderbot' or m.startswith('orderbot.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    names = [name for name in MODULES if not name.endswith("__main__")]  # importing that one runs the CLI
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
