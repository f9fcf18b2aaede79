"""Bytecode made once, before pytest-xdist's workers start.

pytest rewrites the asserts of every test module it imports and caches the result beside
the module (`__pycache__/*.pyc` with pytest's tag). On a fresh clone there is no cache yet
and the workers start together, so each of them rewrites every module: ~5 s of CPU a
worker, more than the rest of a worker's collection. The controller, which collects
nothing, does it once instead, in one process per core, through pytest's own rewriting,
so each worker finds the cache pytest would have written itself; it compiles orderbot's
sources the same way. When the cache is current this costs a read of each file.

pytest's rewriting is not public API: if it moves, nothing is made here and the workers
rewrite as they did before; the tests are the same either way.
"""

from __future__ import annotations

import compileall
import fnmatch
import multiprocessing
import os
from pathlib import Path

import pytest

try:
    from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, assertstate_key
except ImportError:  # moved: the workers rewrite for themselves
    _rewrite_test = None

_config: pytest.Config | None = None  # for the forked helpers: a Config does not pickle


def make_once(config: pytest.Config, root: Path) -> None:
    global _config
    if _rewrite_test is None or config.getoption("assertmode", "rewrite") != "rewrite":
        return
    patterns = [*config.getini("python_files"), "conftest.py"]
    modules = sorted(
        str(path)
        for folder in config.getini("testpaths") or ["."]
        for path in (root / folder).rglob("*.py")
        if "__pycache__" not in path.parts and any(fnmatch.fnmatch(path.name, p) for p in patterns)
    )
    _config = config
    workers = len(os.sched_getaffinity(0))
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        made = pool.map_async(_rewrite, modules, chunksize=max(1, len(modules) // (4 * workers)))
        compileall.compile_dir(root / "orderbot", quiet=1, workers=1)  # meanwhile, here
        made.get(timeout=120)


def _rewrite(module: str) -> None:
    source = Path(module)
    cache = source.parent / "__pycache__"
    pyc = cache / (source.name[:-3] + PYC_TAIL)
    if _read_pyc(source, pyc) is not None:
        return
    cache.mkdir(exist_ok=True)
    try:
        source_hash, code = _rewrite_test(source, _config)
    except SyntaxError:  # pytest reports it where the module is collected
        return
    _write_pyc(_config.stash[assertstate_key], code, source_hash, pyc)
