"""The import graph of orderbot: floors that hold, no circle, and every module imports on its own.

A circle (render → trace → render, say) works only while one side imports lazily, and
breaks the first time someone moves an import to the top. The graph is read from the
source: every `import`, at the top, inside a function or under `TYPE_CHECKING` (a circle
that only type checkers follow is still two modules that cannot be read apart).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "orderbot"


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


# Private names taken from another package on purpose, and why.
PRIVATE_ALLOWED: dict[str, str] = {}


def is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def owner_of(parts: list[str]) -> str:
    """The package a private name belongs to: the package it is in, or the package of the
    module it is in (a module's sibling may use what the module keeps to itself)."""
    owner = ".".join(parts)
    if owner in MODULES and MODULES[owner].name != "__init__.py":
        return owner.rpartition(".")[0]
    return owner


def private_imports(name: str, path: Path) -> list[str]:
    """The underscore names (or names below an underscore module) that module `name` imports
    from outside its own package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            dotted = [(node.module, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            dotted = [(alias.name, alias.name) for alias in node.names]
        else:
            continue
        for module, full in dotted:
            parts = full.split(".")
            private = next((i for i, part in enumerate(parts) if is_private(part)), None)
            if private is None or module in PRIVATE_ALLOWED:
                continue
            owner = owner_of(parts[:private])
            if package != owner and not package.startswith(owner + "."):
                found.append(f"{name} imports {full}")
    return found


def test_no_module_imports_another_packages_private_names():
    """A name with a leading underscore is its package's to change: a module of another
    package that imports it breaks unseen when it does. What two packages share has a
    public name in a module of its own (orderbot.shops.postgres_access, say)."""
    found = [line for name, path in MODULES.items() for line in private_imports(name, path)]
    assert found == []


def test_the_private_import_check_sees_one(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("from orderbot.shops.sample.stores.postgres import _native\n")
    assert private_imports("orderbot.shops.retail.postgres", plain) == [
        "orderbot.shops.retail.postgres imports orderbot.shops.sample.stores.postgres._native"
    ]
    private_module = tmp_path / "module.py"
    private_module.write_text("from orderbot.models._http import Classifier\nimport orderbot.models._http\n")
    assert private_imports("orderbot.models.chat", private_module) == []  # its own package's
    assert len(private_imports("orderbot.runs.postgres", private_module)) == 2
    sibling = tmp_path / "sibling.py"
    sibling.write_text("from orderbot.loop.state import _stop\n")
    assert private_imports("orderbot.loop.engine", sibling) == []
    assert private_imports("orderbot.ui.render", sibling) == ["orderbot.ui.render imports orderbot.loop.state._stop"]


@pytest.mark.slow
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


# ---- the floors, and the shops behind the session ---------------------------------------

CONTRACTS = {
    contract["id"]: contract
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
}


def broken(contract: str) -> str:
    """What import-linter finds against one contract of pyproject.toml ([tool.importlinter]),
    run as CI runs it; "" when it is kept. Every import counts, at the top, inside a function
    or under TYPE_CHECKING (a type checker follows those too)."""
    lint_imports = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    done = subprocess.run(
        [sys.executable, "-c", lint_imports, "--no-cache", "--contract", contract],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "" if done.returncode == 0 else done.stdout[done.stdout.find("Broken contracts") :] + done.stderr[-2000:]


def test_no_module_imports_from_a_floor_above_its_own():
    """The floors drawn in docs/architecture.md, bottom to top from language to cli."""
    assert broken("floors") == ""


def test_only_the_floors_that_speak_to_people_may_import_the_words():
    """The catalogue (orderbot.i18n) stands just under the screen: the loop, the runs, the
    shops, the models, the answers, the runner, the settings and the helpers below keep codes
    and values, and no module of theirs imports it, not even lazily or for a type. The floors
    pin it; this says which floors those are, so that moving the catalogue down fails here."""
    layers = floors()
    speaking = layers[: layers.index("orderbot.i18n") + 1]
    assert speaking == ["orderbot.cli", "orderbot.commands", "orderbot.mcp", "orderbot.ui", "orderbot.i18n"]
    below = [name for name in MODULES if not any(name == f or name.startswith(f + ".") for f in speaking)]
    importing = [name for name in below if any(n.startswith("orderbot.i18n") for n in imports_of(MODULES[name]))]
    assert below and not importing, importing


def test_no_module_outside_the_shops_and_the_commands_imports_a_particular_shop():
    """The shop comes through the session (orderbot.shops.shop.Shop: instructions, vocabulary,
    money, offline planner, eval suite); only orderbot/shops/ and orderbot/commands/ (and
    the tests) name the sample or the retail shop."""
    assert broken("shops") == ""


def floors() -> list[str]:
    return [part.strip() for layer in CONTRACTS["floors"]["layers"] for part in layer.split("|")]


def test_every_part_of_orderbot_stands_on_a_floor():
    """A module or package the contracts do not name is checked against nothing: a new part
    of orderbot takes its floor in pyproject.toml (and in docs/architecture.md) when it comes,
    and is kept from the particular shops unless it is the shops or the commands."""
    assert CONTRACTS["floors"]["type"] == "layers" and not CONTRACTS["floors"].get("ignore_imports")
    parts = {f"orderbot.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem not in ("__init__", "__main__")}
    parts |= {f"orderbot.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    assert parts == set(floors())
    shops = CONTRACTS["shops"]
    assert shops["forbidden_modules"] == ["orderbot.shops.sample", "orderbot.shops.retail"]
    assert set(shops["source_modules"]) == parts - {"orderbot.shops", "orderbot.commands"}
    assert not shops.get("ignore_imports")


SNAPSHOT = """
import logging, sys, types, warnings
import typer, typer.core, typer.main, typer.models, typer.rich_utils, typer.testing

TYPER = (typer, typer.core, typer.main, typer.models, typer.rich_utils, typer.testing)

def snapshot():
    taken = {}
    for module in TYPER:
        for name, value in vars(module).items():
            if isinstance(value, types.ModuleType):
                continue  # importing a submodule names it in its package
            taken[f"{module.__name__}.{name}"] = value
            if isinstance(value, type) and value.__module__.startswith("typer"):
                for attribute, member in vars(value).items():
                    if attribute != "__slotnames__":  # copyreg's cache, made by the first copy.copy()
                        taken[f"{module.__name__}.{name}.{attribute}"] = member
    for logger in (logging.getLogger(), logging.getLogger("orderbot"), logging.getLogger("py.warnings")):
        taken[f"logger {logger.name} handlers"] = tuple(logger.handlers)
        taken[f"logger {logger.name} level"] = logger.level
        taken[f"logger {logger.name} propagate"] = logger.propagate
    taken["warnings.showwarning"] = warnings.showwarning
    return taken

def changed(before, after):
    return sorted(k for k in before.keys() | after.keys() if before.get(k, None) is not after.get(k, None))
"""

NOTHING_CHANGED_BY_IMPORT = (
    SNAPSHOT
    + """
before = snapshot()
for name in sys.argv[1:]:
    __import__(name)
found = changed(before, snapshot())
print("\\n".join(found))
sys.exit(1 if found else 0)
"""
)


def changed_by_importing(names: list[str], **run) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NOTHING_CHANGED_BY_IMPORT, *names], capture_output=True, text=True, timeout=60, **run
    )


@pytest.mark.slow
def test_importing_any_module_of_orderbot_changes_nothing_outside_orderbot():
    """Importing orderbot (every module of it: the command line, every command, the MCP
    server, the telemetry) leaves Typer, Click (Typer's own copy), logging and Python's
    warnings as they were: a library or a test that imports orderbot keeps its own logging
    and a Typer that behaves as documented. What the command line needs it sets up when it
    runs (orderbot.cli.LazyGroup.main) or asks for through public API."""
    names = [name for name in MODULES if not name.endswith("__main__")]  # importing that one runs the CLI
    done = changed_by_importing(names)
    assert done.returncode == 0, "changed by importing orderbot:\n" + done.stdout + done.stderr[-2000:]


def test_the_import_check_sees_a_patch_a_log_handler_and_captured_warnings(tmp_path):
    (tmp_path / "patching.py").write_text(
        "import logging, typer.core\n"
        "typer.core.TyperOption.display_type_rich = lambda self, ctx: None\n"
        "logging.getLogger().addHandler(logging.NullHandler())\n"
    )
    (tmp_path / "capturing.py").write_text("import logging\nlogging.captureWarnings(True)\n")
    (tmp_path / "colouring.py").write_text("import typer.rich_utils\ntyper.rich_utils.COLOR_SYSTEM = None\n")
    patching = changed_by_importing(["patching"], cwd=tmp_path)
    assert patching.returncode == 1
    assert {"logger root handlers", "typer.core.TyperOption.display_type_rich"} <= set(patching.stdout.splitlines())
    assert changed_by_importing(["capturing"], cwd=tmp_path).stdout.splitlines() == ["warnings.showwarning"]
    assert changed_by_importing(["colouring"], cwd=tmp_path).stdout.splitlines() == ["typer.rich_utils.COLOR_SYSTEM"]


HELP_THROUGH_THE_COMMAND_LINE = (
    SNAPSHOT
    + """
import contextlib, io, json, os
from orderbot import cli

def help_of(*args):
    sys.argv = ["orderbot", *args]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main()
    return out.getvalue()

before = snapshot()
shown = {}
for no_color in ("", "1"):
    os.environ["NO_COLOR"] = no_color
    shown[no_color] = [help_of(), help_of("--help"), help_of("ask", "--help"), help_of("approvals", "approve", "-h")]
typer_changed = [key for key in changed(before, snapshot()) if key.startswith("typer")]
print(json.dumps({"coloured": shown[""], "plain": shown["1"], "typer_changed": typer_changed}))
"""
)


@pytest.mark.slow
def test_help_has_no_style_under_no_color_and_leaves_typer_as_it_was():
    """Under NO_COLOR every help, the root's and a command's, has no colour nor bold nor dim;
    without it (colour forced, as FORCE_COLOR does on a terminal) it is styled. The command
    line gets there through Click's public context (orderbot.cli.Context.get_help), never by
    changing Typer's module settings: after the help, Typer is as it was."""
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "TTY_COMPATIBLE")}
    env |= {"FORCE_COLOR": "1", "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", HELP_THROUGH_THE_COMMAND_LINE], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout)
    assert shown["typer_changed"] == []
    assert all("\x1b[" in text for text in shown["coloured"])  # the control: the help is styled otherwise
    for text in shown["plain"]:
        assert "Usage" in text and "\x1b" not in text


# ---- one path from flags to exit code ----------------------------------------------------

# What only orderbot.commands.run may name among the commands: the runner and its engine,
# the four-eyes rule and who may decide, the views of a run (the waiting line too) and the
# prompt that asks a person.
WIRING = frozenset(
    {
        "Runner",
        "Engine",
        "for_session",
        "four_eyes",
        "asks_at_the_prompt",
        "check_decider",
        "TransitionView",
        "TraceView",
        "StepLines",
        "WaitingLine",
        "terminal_approver",
    }
)


def wiring_in(path: Path) -> list[str]:
    """The names of a run's wiring a module uses: imported, called or read as an attribute."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom | ast.Import):
            names = [alias.name.rpartition(".")[2] for alias in node.names]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in names if name in WIRING]
    return sorted(set(found))


def test_no_command_but_run_builds_a_runner_or_a_view_or_applies_four_eyes():
    """ask, resume, approvals, repl, mcp and eval go through orderbot.commands.run: one place
    takes the settings to the runner, decides whether a person may be asked (four eyes, the
    store's approvers), builds the view and says the exit code."""
    found = {
        name: lines
        for name, path in MODULES.items()
        if name.startswith("orderbot.commands.") and name != "orderbot.commands.run" and (lines := wiring_in(path))
    }
    assert found == {}


def test_the_wiring_check_sees_a_runner_and_four_eyes(tmp_path):
    by_hand = tmp_path / "by_hand.py"
    by_hand.write_text(
        "from orderbot.runner import Runner\n"
        "may = store.policy().asks_at_the_prompt(store.operator, four_eyes=settings.four_eyes)\n"
        "runner = Runner.for_session(session, model, store, provider='mcp')\n"
    )
    assert wiring_in(by_hand) == [
        "line 1: Runner",
        "line 2: asks_at_the_prompt",
        "line 2: four_eyes",
        "line 3: Runner",
        "line 3: for_session",
    ]
    assert wiring_in(ROOT / "orderbot" / "commands" / "run.py")  # the one module that does it


ASK_QUIETLY = """
import json, sys
from orderbot.cli import main
sys.argv = ["orderbot", "ask", "-q", "--provider", "offline", "查询 ORD-1001"]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def ask_quietly() -> dict:
    """What an offline `ask -q` imports, run as a command line runs it, in a fresh process."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPROFILEIMPORTTIME"}
    done = subprocess.run([sys.executable, "-c", ASK_QUIETLY], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    answer, last = done.stdout.splitlines()[-2:]
    assert answer == "订单 ORD-1001 的状态是：已发货。"
    return json.loads(last)


@pytest.mark.slow
def test_an_offline_ask_that_locks_nothing_never_imports_filelock():
    """filelock costs ~8 ms to import: only what takes a lock (a cancellation in the orders
    file) loads it, never a read-only `ask`; the run store locks with its database's own."""
    done = ask_quietly()
    assert done["code"] == 0
    assert [m for m in done["modules"] if m.split(".")[0] == "filelock"] == []


# What an offline `ask -q` (the answer alone, the run recorded) never needs, and why: each is
# imported where it is used, and an import at the top of a module on the way (commands/run.py,
# say) would load it for every run. benchmarks/README.md has what they cost.
NOT_FOR_ASK_Q = {
    "rich.table": "no table is drawn",
    "rich.live": "nothing is drawn live",
    "rich.panel": "no panel: the answer is one line",
    "orderbot.ui.screen": "the views that draw a run",
    "orderbot.ui.render": "the transitions table and the drawn outcome",
    "orderbot.ui.trace": "the --trace panels",
    "orderbot.ui.waiting": "the waiting line",
    "orderbot.ui.layout": "the lines of a table",
    "orderbot.ui.run_list": "the table of runs",
    "orderbot.shops.retail": "the retail shop",
    "orderbot.shops.sample.stores.sqlite": "the sample shop's SQLite store",
    "orderbot.runs.postgres": "a team's PostgreSQL run store",
    "orderbot.runs.audit": "the audit log: only a decided call writes to it",
    "orderbot.runs.tokens": "the bearer tokens of orderbot mcp --http",
    "orderbot.runs.takeover": "what an earlier orderbot kept: taken over once",
    "orderbot.runs.resume": "the checks of a resumed run",
    "orderbot.models.mcp_client": "an MCP host's model",
    "orderbot.shops.sample.stores.jsonedit": "the edit of the orders file a cancellation makes",
    "filelock": "a lock: only a write takes one",
    "openai": "the openai provider",
    "psycopg": "PostgreSQL",
}


def unneeded(modules: list[str]) -> list[str]:
    """The modules of NOT_FOR_ASK_Q (or below one) among `modules`."""
    return sorted(m for m in modules for name in NOT_FOR_ASK_Q if m == name or m.startswith(name + "."))


def test_the_unneeded_check_sees_a_table_and_a_submodule():
    assert unneeded(["rich.console", "rich.table", "orderbot.shops.retail.tools", "orderbot.shops"]) == [
        "orderbot.shops.retail.tools",
        "rich.table",
    ]


@pytest.mark.slow
def test_an_offline_ask_q_imports_only_what_it_needs():
    """Run as the command line runs it: none of NOT_FOR_ASK_Q is imported."""
    done = ask_quietly()
    assert done["code"] == 0
    assert unneeded(done["modules"]) == []
    assert "orderbot.commands.run" in done["modules"]  # the control: the run went the one path


def module_imports(path: Path) -> set[str]:
    """The modules `path` imports when it is imported: its top-level imports, not those inside
    a function or under TYPE_CHECKING (what a lazy boundary imports later, when it is used)."""
    found: set[str] = set()
    body = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            body += node.orelse
        elif isinstance(node, ast.If):
            body += node.body + node.orelse
        elif isinstance(node, ast.Try):
            body += node.body + node.orelse + node.finalbody + [n for h in node.handlers for n in h.body]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from orderbot.ui import screen` imports the module orderbot.ui.screen
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    packages = {".".join(name.split(".")[:i]) for name in found for i in range(1, name.count(".") + 1)}
    return found | {name for name in packages if name in MODULES}


def imported_with(name: str) -> set[str]:
    """Every module importing `name` imports at once: orderbot's, through their top-level
    imports, and the others they name (what those import in turn is theirs, not read here)."""
    seen, todo = set(), [name]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        if module in MODULES:
            todo += module_imports(MODULES[module])
    return seen


def test_the_ask_command_imports_nothing_an_offline_ask_q_never_needs():
    """Read from the source, in the quick loop: the ask command's module and everything it
    imports at the top (commands/run.py first) bring none of NOT_FOR_ASK_Q; a heavy import
    moved back to the top of commands/run.py fails here."""
    assert unneeded(sorted(imported_with("orderbot.commands.ask"))) == []
    assert "orderbot.ui.screen" in imports_of(MODULES["orderbot.commands.run"])  # the control: lazily, it is


def test_the_top_level_reading_follows_a_heavy_import_through_modules(tmp_path, monkeypatch):
    run = tmp_path / "run.py"
    run.write_text(
        "from typing import TYPE_CHECKING\n"
        "from orderbot.ui.document import Transitions\n"
        "if TYPE_CHECKING:\n    from orderbot.ui.render import TransitionView\n"
        "def _screen():\n    from orderbot.ui import screen\n"
    )
    monkeypatch.setitem(MODULES, "orderbot.commands.fake_run", run)
    assert unneeded(sorted(imported_with("orderbot.commands.fake_run"))) == []
    run.write_text("from orderbot.ui.render import TransitionView\n")
    assert "orderbot.ui.render" in unneeded(sorted(imported_with("orderbot.commands.fake_run")))
