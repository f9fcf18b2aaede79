"""tests/bytecode.py writes the cache pytest itself would write, so a worker reads it instead
of rewriting the module."""

from __future__ import annotations

import bytecode
import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc


def test_a_module_rewritten_once_is_read_back_by_pytest_with_its_asserts_rewritten(tmp_path, pytestconfig):
    if bytecode._rewrite_test is None:
        pytest.skip("this pytest's rewriting moved: the workers rewrite for themselves")
    tests = tmp_path / "tests"
    tests.mkdir()
    module = tests / "test_sample.py"
    module.write_text("def test_sample():\n    x = 1\n    assert x == 2\n", encoding="utf-8")
    (tmp_path / "orderbot").mkdir()  # what the controller compiles beside the tests

    class Config:  # the session's, with this folder as the test paths
        stash = pytestconfig.stash

        def getoption(self, name, default=None):
            return pytestconfig.getoption(name, default)

        def getini(self, name):
            return ["tests"] if name == "testpaths" else pytestconfig.getini(name)

    bytecode.make_once(Config(), tmp_path)

    code = _read_pyc(module, tests / "__pycache__" / f"test_sample{PYC_TAIL}")
    assert code is not None  # current: pytest takes it as its own cache
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match=r"assert 1 == 2"):  # rewritten: the values are shown
        namespace["test_sample"]()
