"""Fixtures of the fault suite. The shared ones (isolated, orders_file, use_model, ...)
come from tests/conftest.py."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from fuzz import examples
from hypothesis import HealthCheck, settings

# At least 2,000 random runs in CI, 200 locally (tests/fuzz.py);
# ORDERBOT_FUZZ_EXAMPLES=20000 for a longer hunt.
settings.register_profile(
    "orderbot-faults",
    max_examples=int(os.environ.get("ORDERBOT_FUZZ_EXAMPLES", examples(2000, local_share=0.1))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def orders(orders_file: Path) -> tuple[Path, bytes]:
    """A private orders file and its bytes before the run."""
    return orders_file, orders_file.read_bytes()


@pytest.fixture(autouse=True)
def fresh_log():
    """The CLI adds its log handler once per process; give each run its own state dir's log."""
    logger = logging.getLogger("orderbot")

    def drop() -> None:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()

    drop()
    yield
    drop()
