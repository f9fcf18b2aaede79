"""SIGTERM stops a run like Ctrl-C: cancelled, the record saved and
resumable, exit 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from clikit import cli
from runkit import only_run, record_doc
from saying import stop_said

pytestmark = pytest.mark.slow  # real processes sent SIGTERM

CHILD = textwrap.dedent("""
    import sys, threading
    from orderbot import models
    from orderbot.cli import main
    from orderbot.models.scripted import ScriptedModel, call, calls

    def block(request):
        print("waiting", flush=True)       # the parent sends SIGTERM now
        threading.Event().wait()

    model = ScriptedModel([calls(call("get_order_status", {"order_id": "ORD-1001"})), block])
    models.FACTORIES["scripted"] = lambda settings, shop: model
    sys.argv = ["orderbot", "ask", "--provider", "scripted", "--orders", sys.argv[1], "查询 ORD-1001"]
    main()
""")


def test_sigterm_cancels_the_run_saves_the_record_and_exits_143(orders_file):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(orders_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONUNBUFFERED": "1"},
    )
    try:
        line = ""
        while "waiting" not in line:
            line = child.stdout.readline()
            assert line, child.stderr.read()
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 143, (child.returncode, err[-2000:])
    assert "Traceback" not in err
    run_id = only_run()
    doc = record_doc(run_id)
    assert doc["state"]["stop_reason"] == "cancelled"
    assert stop_said(doc["state"]) == "terminated by a signal (SIGTERM)"  # nobody pressed Ctrl-C
    assert "terminated by a signal (SIGTERM)" in out and "keyboard" not in out
    assert cli("runs", "show", run_id).exit_code == 0
    resumed = cli("resume", run_id, "--orders", str(orders_file))
    assert resumed.exit_code == 0, resumed.output
