"""Every ```console block in README.md and docs/*.md is run, and its output must match.

How a page is run
  Each page (README.md, docs/<topic>.md) gets a scratch directory holding what a fresh
  clone holds (the tracked files), its own HOME (so its own state dir), no .env and no
  OPENAI_*/ORDERBOT_* variables: the offline model answers. The page's console blocks run
  top to bottom in that one directory, as a reader following the page would run them, so
  a block can use what an earlier block made (a copied orders file, a recorded run). No
  command may change the clone's orders.json: examples that cancel work on a copy
  (`cp orders.json my-orders.json`), so every page gives the same results in any order.
  Output is piped (not a terminal), COLUMNS=100, LANG=C.UTF-8 (English messages).
  `orderbot` is a real process per command, forked from one that imported orderbot once
  (tests/warm_orderbot.py: ~0.05 s of CPU instead of ~0.5 s); DOCS_COLD=1 runs the
  installed console script instead.

What a block looks like
  A line starting with "$ " is a command; the lines after it, up to the next command or
  the end of the block, are what it prints (stdout and stderr together). A block must
  start with a command. A line holding only "…" stands for any number of output lines.

Which commands
  The command is run by bash, so pipes, redirections, `;` and `VAR=value` prefixes work.
  Only these programs may appear: orderbot, cp, cat, echo, printf, head, python.
  Keep examples simple: one command per line, no line continuations.

Exit codes
  A command that exits non-zero must be followed by `$ echo $?` showing its code (bash
  sees the previous command's status there, as in a real shell). A non-zero exit that the
  block does not show fails the test, so every failure a page shows says how it ends.

Normalised before comparing (in both the page and the real output)
  - run ids (261130-114943-3f2a) become RUNID; an id in a command is replaced by the
    id the real run got at the same place in the earlier output, and so is a prefix of
    one (`runs show 261130-114943`);
  - timestamps (2026-11-30T05:18:14Z, 2026-11-30 05:18) become TIME;
  - durations (0.0s, 18.8 ms, 30 s, 62 µs) keep their unit and lose their number (#s, # ms), and so
    do the bare ms column of a step table (the number just before a budget like 1/3) and JSON
    keys named ms, *_ms, seconds or *_seconds ("ms": #);
  - absolute paths keep only their last part (/tmp/x/home/.local/state/orderbot → …/orderbot);
  - a SHA-256 in hex (an audit log's head, docs/team.md) becomes HASH;
  - the login name of whoever runs the tests (the operator of a run, docs/team.md) becomes
    `you`, as DOCS_UPDATE writes it;
  - trailing spaces are dropped.
  Since times and ids are normalised, a separate test checks that a page's times agree with its run
  ids, and DOCS_UPDATE writes every output that shows a run's time anew.
  If the words then agree but the layout does not (a duration one digit wider re-wraps a
  table), the block passes: when the normalised texts differ, they are compared once more
  without spacing, line breaks, panel sides, durations and budget counters (1/3), a
  table's rule of any length.

When an output changes on purpose
  DOCS_UPDATE=1 python -m pytest tests/test_docs.py rewrites the output of every command
  that fails with what it prints now; DOCS_UPDATE=layout also rewrites those whose words
  agree but whose layout does not (a redesigned table; expect timing noise in the diff).
  Read the diff before committing it: a block that changed because of a bug should be
  reported, not rewritten.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import warm_orderbot
from clikit import cli

from orderbot.runs.base import operator_name

pytestmark = pytest.mark.slow  # the docs' console examples, each a process

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROGRAMS = {"orderbot", "cp", "cat", "echo", "printf", "head", "python"}
COLUMNS = "100"
ELLIPSIS = "…"
READER_HOME, READER_CLONE = "/home/you", "/home/you/orderbot"  # what DOCS_UPDATE writes for the scratch folders

RUN_ID = re.compile(r"\b\d{6}-\d{6}-[0-9a-f]{4}\b")
RUN_ID_PREFIX = re.compile(r"\b\d{6}-\d{6}(?:-[0-9a-f]{0,4})?\b")
TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?| \d{2}:\d{2}(?::\d{2})?)"
)
DURATION = re.compile(r"(?<![\w.])\+?\d+(?:\.\d+)?(\s?)(ms|µs|s)\b")
JSON_DURATION = re.compile(r'("(?:\w+_)?(?:ms|seconds)"\s*:\s*)\d+(?:\.\d+)?')
MS_COLUMN = re.compile(r"(?<=\s)\d+(?=\s+\d+/\d+ \d+/\d+\b)")
ABS_PATH = re.compile(r"(?<![\w.:/~…])/(?:[\w.@+-]+/)+(?=[\w.@+-])")
SHA256 = re.compile(r"\b[0-9a-f]{64}\b")
READER_LOGIN = "you"  # what DOCS_UPDATE writes for the operator's login name
LOGIN = re.compile(rf"(?<![\w/.-]){re.escape(operator_name())}(?![\w/.-])")


@dataclass
class Command:
    line: int  # 1-based line of the page
    text: str  # what follows "$ "
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    page: Path
    line: int  # the line of the opening fence
    end: int  # the line of the closing fence
    commands: list[Command]


def parse_page(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            start, body = i, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append((i + 1, lines[i]))
                i += 1
            commands: list[Command] = []
            for number, text in body:
                if text.startswith("$ "):
                    commands.append(Command(number, text[2:]))
                elif not commands:
                    raise ValueError(f"{page.name}:{number}: a console block must start with a `$ ` command")
                else:
                    commands[-1].expected.append(text)
            blocks.append(Block(page, start + 1, i + 1, commands))
        i += 1
    return blocks


def check_programs(command: str) -> None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    expect_program = True
    tokens = iter(lexer)
    for token in tokens:
        if token in {"|", "||", "&&", ";", "&"}:
            expect_program = True
        elif token in {">", ">>", "<", "2>", "2>&1"}:
            next(tokens, None)  # the file redirected to or from
        elif expect_program and not re.fullmatch(r"\w+=.*", token):
            if token not in PROGRAMS:
                raise AssertionError(
                    f"`{token}` is not one of the programs a console block may run: {sorted(PROGRAMS)}"
                )
            expect_program = False


def normalise(text: str) -> str:
    text = RUN_ID.sub("RUNID", text)
    text = TIMESTAMP.sub("TIME", text)
    text = JSON_DURATION.sub(r"\1#", text)
    text = MS_COLUMN.sub("#", text)
    text = DURATION.sub(r"#\1\2", text)
    text = ABS_PATH.sub("…/", text)
    text = LOGIN.sub(READER_LOGIN, text)
    text = SHA256.sub("HASH", text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def matches(expected: str, actual: str, squash) -> bool:
    """`expected` (with "…" lines standing for any lines) against `actual`, both squashed."""
    chunks = [squash(c) for c in re.split(rf"(?:^|\n){ELLIPSIS}(?=\n|$)", expected)]
    target = squash(actual)
    if len(chunks) == 1:
        return chunks[0] == target
    if not (target.startswith(chunks[0]) and target.endswith(chunks[-1])):
        return False
    position = len(chunks[0])
    for chunk in chunks[1:-1]:
        found = target.find(chunk, position)
        if found < 0:
            return False
        position = found + len(chunk)
    return position <= len(target) - len(chunks[-1])


def strict(text: str) -> str:
    return text.strip("\n")


def loose(text: str) -> str:
    """The words alone: no spacing, no line breaks, no panel sides, no durations or budget counters
    (a wider duration moves where a table row wraps, so a row's parts come in another order)."""
    text = re.sub(r"#(?: ?(?:ms|µs|s)\b)?|(?<![\w/.])\d+/\d+(?![\w/])", "", text)
    text = re.sub(r"\s+|[|│]", "", text)
    text = re.sub("─+", "─", text)  # a piped table's rule is as wide as its widest row (a login name in it)
    return TIMESTAMP.sub("TIME", RUN_ID.sub("RUNID", text))  # again: one cut by a line break is whole now


def environment(home: Path, bin_dir: Path | None) -> dict[str, str]:
    """What a command sees: nothing of the developer's settings; `orderbot` from bin_dir, else this venv."""
    path = [str(bin_dir)] if bin_dir else []
    path += [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    return {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "COLUMNS": COLUMNS,
        "TERM": "dumb",
    }


class Scratch:
    """A fresh clone's files, a private HOME, and the page's run ids so far."""

    def __init__(self, base: Path, bin_dir: Path | None) -> None:
        self.clone = base / "orderbot"
        self.home = base / "home"
        self.home.mkdir(parents=True)
        copy_tracked_files(self.clone)
        self.ids: dict[str, str] = {}  # run id on the page -> run id of the real run
        self.status = 0
        self.env = environment(self.home, bin_dir)

    def substitute_ids(self, command: str) -> str:
        def real(match: re.Match) -> str:
            shown = match.group(0)
            for page_id, real_id in self.ids.items():
                if page_id.startswith(shown):
                    return real_id[: len(shown)]
            return shown

        return RUN_ID_PREFIX.sub(real, command)

    def learn_ids(self, expected: str, actual: str) -> None:
        real_ids = list(dict.fromkeys(RUN_ID.findall(actual)))
        page_ids = list(dict.fromkeys(RUN_ID.findall(expected)))
        for page_id, real_id in zip(page_ids, real_ids, strict=False):
            self.ids.setdefault(page_id, real_id)

    def run(self, command: str) -> tuple[str, int]:
        script = f"(exit {self.status}); {command}"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script],
            cwd=self.clone,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
        self.status = done.returncode
        return done.stdout.decode("utf-8", "replace"), done.returncode


def copy_tracked_files(target: Path) -> None:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30
        ).stdout.decode()
        names = [n for n in listed.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if not names:  # not a git checkout (an sdist): copy the tree without local state
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(".git", ".venv", "*.pyc", "__pycache__", ".env"))
        return
    for name in names:
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


@dataclass
class Outcome:
    command: Command
    ran: str
    actual: str
    status: int
    status_shown: bool  # the next command is `echo $?`
    problem: str = ""
    exact: bool = False  # the same layout too, not only the same words


class PageRun:
    """Runs a page's blocks in order, once each, so any block can be checked on its own."""

    def __init__(self, page: Path, scratch: Scratch) -> None:
        self.blocks = parse_page(page)
        self.scratch = scratch
        self.results: dict[int, list[Outcome]] = {}

    def block(self, index: int) -> list[Outcome]:
        for i in range(len(self.results), index + 1):
            self.results[i] = self._run(self.blocks[i])
        return self.results[index]

    def _run(self, block: Block) -> list[Outcome]:
        outcomes = []
        for position, command in enumerate(block.commands):
            check_programs(command.text)
            ran = self.scratch.substitute_ids(command.text)
            actual, status = self.scratch.run(ran)
            expected = "\n".join(command.expected)
            self.scratch.learn_ids(expected, actual)
            following = block.commands[position + 1].text.strip() if position + 1 < len(block.commands) else ""
            outcome = Outcome(command, ran, actual, status, status_shown=following == "echo $?")
            wanted, got = normalise(expected), normalise(actual)
            outcome.exact = matches(wanted, got, strict)
            if not outcome.exact and not matches(wanted, got, loose):
                diff = difflib.unified_diff(
                    wanted.splitlines(), got.splitlines(), "shown on the page", "printed now", lineterm=""
                )
                outcome.problem = "output differs (normalised; - page, + now):\n" + "\n".join(diff)
            if (self.scratch.clone / "orders.json").read_bytes() != (ROOT / "orders.json").read_bytes():
                outcome.problem += "\nthis changed orders.json: examples that change orders work on a copy"
            if status != 0 and not outcome.status_shown:
                outcome.problem += f"\nexit code {status}, which the block does not show: follow it with `$ echo $?`"
            outcomes.append(outcome)
        return outcomes


BLOCKS = [(page, index, block) for page in PAGES if page.exists() for index, block in enumerate(parse_page(page))]


@pytest.fixture(scope="session")
def warm_bin() -> Path | None:
    """A folder whose `orderbot` is the warm one (tests/warm_orderbot.py); None with DOCS_COLD=1."""
    if os.environ.get("DOCS_COLD"):
        return None
    return Path(warm_orderbot.command()).parent


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory: pytest.TempPathFactory, warm_bin: Path | None):
    runs: dict[Path, PageRun] = {}

    def get(page: Path) -> PageRun:
        if page not in runs:
            runs[page] = PageRun(page, Scratch(tmp_path_factory.mktemp(page.stem), warm_bin))
        return runs[page]

    yield get
    if os.environ.get("DOCS_UPDATE"):
        for run in runs.values():
            rewrite(run)


@pytest.mark.parametrize(
    ("page", "index", "block"),
    BLOCKS,
    ids=[f"{page.relative_to(ROOT)}:{block.line}" for page, _, block in BLOCKS],
)
def test_console_block(page: Path, index: int, block: Block, page_runs) -> None:
    outcomes = page_runs(page).block(index)
    problems = [
        f"{page.relative_to(ROOT)}:{o.command.line}: $ {o.ran}\n{o.problem.strip()}" for o in outcomes if o.problem
    ]
    assert not problems, "\n\n".join(problems)


def rewrite(run: PageRun) -> None:
    """DOCS_UPDATE=1: put what the commands print now into the page's blocks."""
    page = run.blocks[0].page if run.blocks else None
    if page is None:
        return
    lines = page.read_text(encoding="utf-8").splitlines()
    for index in sorted(run.results, reverse=True):
        block = run.blocks[index]
        body = []
        for outcome in run.results[index]:
            keep = not outcome.problem and (outcome.exact or os.environ["DOCS_UPDATE"] != "layout")
            # A run's time is normalised away, but its id is replaced by this run's: an output
            # that shows a time is written anew, so that the two still agree.
            keep = keep and not RUN_TIME.search("\n".join(outcome.command.expected))
            if keep:  # what the page shows stays, "…" lines included
                body.append(f"$ {outcome.command.text}")
                body.extend(outcome.command.expected)
                continue
            body.append(f"$ {outcome.command.text}")
            body.extend(line.rstrip() for line in outcome.actual.rstrip("\n").splitlines())
            if outcome.status and not outcome.status_shown:
                body.extend(["$ echo $?", str(outcome.status)])
        lines[block.line : block.end - 1] = body
    # The new outputs show the ids of this run: make the rest of the page use them too; and
    # show the scratch folders as a reader's would be.
    text = run.scratch.substitute_ids("\n".join(lines) + "\n")
    text = text.replace(str(run.scratch.clone), READER_CLONE).replace(str(run.scratch.home), READER_HOME)
    text = LOGIN.sub(READER_LOGIN, text)
    page.write_text(text, encoding="utf-8")


def test_the_normalisation_keeps_words_and_drops_what_varies() -> None:
    shown = "run 261130-051809-5859 · 2026-11-30T05:18:14Z ·  0.0s\n   12   1/3 0/6 18.8 ms /root/.local/state/orderbot"
    now = (
        "run 261201-000000-abcd · 2026-12-01T00:00:00Z ·  1.5s\n  123   1/3 0/6 7 ms /tmp/p/home/.local/state/orderbot"
    )
    assert matches(normalise(shown), normalise(now), loose)
    wrapped = 'x(id="ORD-1   #   1/3 0/6 #s\n       003")  2026-11-30T14:1\n0:28Z'
    assert loose(normalise(wrapped)) == loose(normalise('x(id="ORD-   #   1/3 0/6 #s\n  1003") 2026-11-30T14:10:28Z'))
    assert normalise("ORD-1001 已发货") != normalise("ORD-1001 已签收")
    assert normalise("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert normalise('{"ms": 0.1, "request_ms": 12, "steps": 2}') == '{"ms": #, "request_ms": #, "steps": 2}'


def test_an_ellipsis_line_stands_for_any_lines() -> None:
    assert matches("first\n…\nlast", "first\na\nb\nlast", strict)
    assert matches("first\n…", "first\nrest", strict)
    assert not matches("first\n…\nlast", "first\na\nlost", strict)
    assert not matches("first\nlast", "first\na\nlast", strict)


def test_the_warm_orderbot_prints_what_the_installed_one_prints(tmp_path: Path, warm_bin: Path | None) -> None:
    if warm_bin is None:
        pytest.skip("DOCS_COLD=1: every command runs the installed console script")
    warm = Scratch(tmp_path / "warm", warm_bin)
    cold = Scratch(tmp_path / "cold", None)
    for command in ['orderbot ask --max-steps 1 "查询 ORD-1001"', 'printf "查询 ORD-1002\\n" | orderbot repl']:
        (warm_out, warm_code), (cold_out, cold_code) = warm.run(command), cold.run(command)
        assert warm_code == cold_code
        assert matches(normalise(warm_out), normalise(cold_out), loose), (warm_out, cold_out)
        assert warm_code == 3 if "ask" in command else warm_code == 0


def section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_tables_name_every_limit_and_exit_code() -> None:
    from orderbot.commands import common
    from orderbot.commands.common import EXIT_CODES
    from orderbot.loop.limits import LIMIT_SPECS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    limits = [row for row in section(readme, "Limits").splitlines() if row.startswith("| ")]
    for limit in LIMIT_SPECS:
        row = next((r for r in limits if limit.env in r), "")
        assert row, f"the README's limits table has no row for {limit.env}"
        assert f"`{limit.stop}`" in row and f"| {limit.default:,g}" in row, row
        assert limit.flag is None or f"`{limit.flag}`" in row
    rows = [row for row in section(readme, "Exit codes").splitlines() if row.startswith("| ")]
    codes = {row.split("|")[1].strip(): row for row in rows}
    for stop, code in EXIT_CODES.items():
        shown = f"`{stop}`" in codes.get(str(code), "") or stop == "answered"
        assert shown, f"exit code {code} ({stop}) is not in the README's table"
    for name, code in vars(common).items():
        if name.endswith("_EXIT"):
            assert str(code) in codes, f"exit code {code} ({name}) is not in the README's table"


def test_the_module_map_names_every_module() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(orderbot/[\w/]+(?:\.py|/))`", text))
    for path in sorted((ROOT / "orderbot").rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if path.name in {"__init__.py", "__main__.py"}:
            continue
        covered = module in named or any(module.startswith(f) for f in named if f.endswith("/"))
        assert covered, f"{module} is not in the module map of docs/architecture.md: add it to a row"


def test_the_quickstart_makes_a_virtual_environment_before_its_two_commands() -> None:
    """A literal reader runs the lines in order: pip into a venv, never into the system Python."""
    quickstart = section((ROOT / "README.md").read_text(encoding="utf-8"), "Quickstart")
    commands = re.search(r"```bash\n(.*?)```", quickstart, re.S).group(1).splitlines()
    assert re.fullmatch(r"python3 -m venv (\S+) && \. \1/bin/activate", commands[0]), commands
    installs = [i for i, line in enumerate(commands) if line.startswith("pip install -e ")]
    assert len(installs) == 2 and min(installs) > 0, commands
    assert "orderbot ask" in commands[installs[0]] and "python -m pytest" in commands[installs[1]], commands


def test_files_the_docs_examples_make_are_ignored_by_git(page_runs) -> None:
    """Whatever a reader following the pages leaves in their clone (shop.db, my-orders.json,
    suite.json, ...) is not offered to `git add`."""
    made = set()
    for page in PAGES:
        run = page_runs(page)
        if run.blocks:
            run.block(len(run.blocks) - 1)
        clone = run.scratch.clone
        made |= {p.relative_to(clone).as_posix() for p in clone.rglob("*") if p.is_file()}
    tracked = set(subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
                  .decode().split("\0"))  # fmt: skip
    new = sorted(made - tracked)
    assert {"shop.db", "my-orders.json", "suite.json"} <= set(new), new  # the pages still make them
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=ROOT, input="\0".join(new).encode(), capture_output=True,
    )  # fmt: skip
    ignored = set(checked.stdout.decode().split("\0"))
    assert not [name for name in new if name not in ignored], "not in .gitignore: " + ", ".join(
        name for name in new if name not in ignored
    )


# A run's time as the pages show it, to the minute or the second, in UTC: an orders file's own
# times (2026-11-30T09:40:00+08:00) are data and carry their offset.
RUN_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(:\d\d)?(?:\.\d+)?Z?(?![\d:+-])")


def example_time_problems(text: str) -> list[str]:
    """Times in console output that do not fit the run they belong to: a run id is its UTC
    start to the second, so a time on its line, or after it, is no earlier than that and
    not hours later."""
    from datetime import datetime, timedelta

    problems, latest = [], None
    for line in text.splitlines():
        ids = [datetime.strptime(m.group(0)[:13], "%y%m%d-%H%M%S") for m in RUN_ID.finditer(line)]
        for match in RUN_TIME.finditer(line):
            day, minute, second = match.groups()
            at = datetime.strptime(f"{day} {minute}{second or ':00'}", "%Y-%m-%d %H:%M:%S")
            run = ids[0] if ids else latest
            earliest = run.replace(second=0) if run is not None and second is None else run
            if run is not None and not earliest <= at <= run + timedelta(hours=1):
                problems.append(f"{match.group()} in {line.strip()!r}: the run started {run:%Y-%m-%d %H:%M:%S}")
        latest = ids[-1] if ids else latest
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(ROOT).as_posix() for page in PAGES])
def test_example_times_agree_with_their_run_ids(page: Path) -> None:
    """The test above cannot see it (times are normalised away): `runs show` of a run that
    started at 12:22 does not say it started at 10:53."""
    outputs = "\n".join(line for block in parse_page(page) for c in block.commands for line in [c.text, *c.expected])
    assert not example_time_problems(outputs), "\n".join(example_time_problems(outputs))


def test_a_time_that_does_not_fit_its_run_id_is_found() -> None:
    assert example_time_problems("261201-122252-1812   2026-12-01 12:22   C001") == []
    assert example_time_problems("run 261201-122248-4b74 · started\n2026-12-01T12:22:48Z") == []
    assert example_time_problems("261201-122252-1812   2026-12-01 10:53   C001")
    assert example_time_problems("run 261201-122248-4b74 · started\n2026-11-30T14:39:19Z")
    assert example_time_problems("ORD-1013  待付款  ¥88.00   2026-11-30T09:40:00+08:00") == []


# ---- every run a page recorded replays without a difference -----------------------------

RUNS_FLAG = re.compile(r"--runs (sqlite:///\S+)")


def run_stores(run: PageRun) -> list[list[str]]:
    """Where the page's runs were recorded: the state directory of its HOME, and each SQLite
    run store its commands named (a relative path is the clone's)."""
    stores = [["--state-dir", str(run.scratch.home / ".local" / "state" / "orderbot")]]
    for outcomes in run.results.values():
        for outcome in outcomes:
            for url in RUNS_FLAG.findall(outcome.ran):
                path = Path(url.removeprefix("sqlite:///"))
                flags = ["--runs", f"sqlite:///{run.scratch.clone / path}"]
                if flags not in stores:
                    stores.append(flags)
    return stores


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_run_a_page_recorded_replays_without_difference(page: Path, page_runs) -> None:
    """After the page's blocks ran, `orderbot replay` of each of its runs, in-process against the
    page's own files (changed since by later blocks, or by the run itself), finds nothing."""
    run = page_runs(page)
    if run.blocks:
        run.block(len(run.blocks) - 1)
    replayed, problems = set(), []
    for flags in run_stores(run):
        listed = cli("runs", *flags, "--json", "--limit", "1000")
        assert listed.exit_code == 0, listed.output
        for row in json.loads(listed.stdout):
            replayed.add(row["run_id"])
            done = cli("replay", row["run_id"], *flags, "--json")
            if done.exit_code != 0:
                problems.append(f"{row['run_id']} ({row['question']}): exit {done.exit_code}\n{done.output}")
    printed = {i for outcomes in run.results.values() for o in outcomes for i in RUN_ID.findall(o.actual)}
    assert printed <= replayed, f"runs {sorted(printed - replayed)} of {page.name} were not found to replay"
    assert not problems, "\n".join(problems)
