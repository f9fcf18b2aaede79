"""`orderbot` in this process, with run records written or not: the record benchmark's pair.

    python benchmarks/ask_process.py record|no-record ask --provider offline "查询 ORD-1001"

Both variants start the same way and import the same modules; `no-record` replaces
`RunStore.save` with a function that writes nothing (no record, no index, no key), so
the difference between the two is exactly what writing the record costs a whole run.
"""

import sys

from orderbot import runs
from orderbot.cli import main

if sys.argv.pop(1) == "no-record":
    runs.RunStore.save = lambda self, record: self.path(record.run_id)

sys.exit(main())
