"""The plain loop's program against the loopback API: `import openai` plus the two requests.

    python benchmarks/openai_baseline.py http://127.0.0.1:PORT/v1 [--floor]

The baseline of the openai cold-start figure: the same question, the same two requests
through the official SDK, with the plain loop (plain_loop.py) and nothing else. With --floor it
first loads the libraries orderbot's command line stands on (Typer with its option
parsing, Rich, pydantic-settings), to show how much of the gap is theirs.
"""

import sys

if "--floor" in sys.argv:
    import pydantic_settings  # noqa: F401
    import rich.console  # noqa: F401
    import rich.live  # noqa: F401
    import rich.panel  # noqa: F401
    import rich.table  # noqa: F401
    import typer  # noqa: F401
    import typer._adapters  # noqa: F401

from openai import OpenAI
from plain_loop import run_workflow

client = OpenAI(api_key="sk-benchmark", base_url=sys.argv[1], max_retries=0)
print(run_workflow(client, "查询 ORD-1001"))
