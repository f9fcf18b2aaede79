"""How many random cases a property or crash test tries: the full count in CI, fewer locally.

CI (CI=true, as every CI service sets it) runs the full counts; a local run tries a share
of them so the suite stays quick to run while working. The same properties are checked,
with fewer random cases each time; ORDERBOT_FUZZ_EXAMPLES raises the fault suite's count
for a longer hunt anywhere.
"""

from __future__ import annotations

import os

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def examples(full: int, local_share: float = 0.25) -> int:
    """`full` in CI; locally `local_share` of it, at least 10."""
    return full if IN_CI else max(10, round(full * local_share))
