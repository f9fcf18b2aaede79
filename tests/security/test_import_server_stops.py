"""The PostgreSQL server stops in the middle of a 100,000-order import: one sentence saying
the connection was lost and that nothing was written (the transaction never committed),
never psycopg's `OperationalError: consuming input failed: ...`; and the database holds
what it held before.

The server is this test's own throwaway cluster (tests/shopkit.py). It stops itself at a
known point: a trigger the test plants on a table the import creates (by an event trigger,
since the import creates its tables) runs `pg_ctl stop -m immediate` when the 50,000th
order arrives, or in the COMMIT, and waits there to be killed, so the import can never
get past that point. Lost during the COMMIT, orderbot cannot know whether the import was
written, and says so with the command to check."""

from __future__ import annotations

import json
import shutil

import pytest
from clikit import cli
from shopkit import start_postgres

from orderbot.shops.sample.model import SAMPLE_PATH

pytestmark = pytest.mark.slow  # a PostgreSQL server stopped mid-import

COUNT = 100_000
STOP_AT = "ORD-150000"  # the 50,000th


@pytest.fixture
def own_server():
    server, stop = start_postgres()
    try:
        yield server
    finally:
        stop()


def many_orders(path, count: int):
    """`count` copies of the first sample order, ORD-100001 on."""
    first = json.loads(SAMPLE_PATH.read_text("utf-8"))["orders"][0]
    before, after = json.dumps(dict(first, order_id="@"), ensure_ascii=False).split('"@"')
    orders = ",".join(f'{before}"ORD-{100_000 + i}"{after}' for i in range(1, count + 1))
    path.write_text(f'{{"orders": [{orders}]}}', encoding="utf-8")
    return path


# Where the server stops: as the 50,000th order is copied in, or in the COMMIT itself (a
# deferred constraint trigger on the last table the import writes runs at commit time).
WHEN = {
    "copy": f"""CREATE TRIGGER stop_mid_import AFTER INSERT ON orders FOR EACH ROW
                    WHEN (NEW.order_id = '{STOP_AT}') EXECUTE FUNCTION stop_the_server();""",
    "commit": """CREATE CONSTRAINT TRIGGER stop_mid_import AFTER INSERT ON schema_version
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stop_the_server();""",
}
TABLE = {"copy": "orders", "commit": "schema_version"}


def stop_the_server_at(connection, when: str) -> None:
    pg_ctl = shutil.which("pg_ctl")
    connection.execute(f"""
        CREATE FUNCTION stop_the_server() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                'cat >/dev/null; {pg_ctl} -D ' || current_setting('data_directory')
                || ' -m immediate -W stop >/dev/null 2>&1 &');  -- the copied row read first: no broken pipe
            PERFORM pg_sleep(60);  -- killed by the stop long before this ends
            RETURN NEW;
        END $$;
        CREATE FUNCTION watch_new_orders() RETURNS event_trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF to_regclass('{TABLE[when]}') IS NOT NULL AND NOT EXISTS
                (SELECT 1 FROM pg_trigger WHERE tgname = 'stop_mid_import') THEN
                {WHEN[when]}
            END IF;
        END $$;
        CREATE EVENT TRIGGER stop_mid_import ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
            EXECUTE FUNCTION watch_new_orders();
    """)


@pytest.mark.parametrize("when", ["copy", "commit"])
def test_a_server_stopped_mid_import_is_one_sentence_saying_what_was_written(when, own_server, tmp_path):
    import psycopg

    database = own_server.new_database()
    url = own_server.url(database)
    assert cli("orders", "import", str(SAMPLE_PATH), "--to", url).exit_code == 0  # 14 orders held before
    with psycopg.connect(url, autocommit=True) as connection:
        stop_the_server_at(connection, when)
        # The cluster commits asynchronously (synchronous_commit=off): what it held before must
        # be on disk before the test kills it, or the "as it was" check below reads nothing.
        connection.execute("CHECKPOINT")

    count = COUNT if when == "copy" else 1_000  # the COMMIT comes after every order: a few do
    result = cli("orders", "import", str(many_orders(tmp_path / "many.json", count)), "--to", url, "--replace")

    assert result.exit_code == 6, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "connection to the server was lost" in lines[0], lines[0]
    if when == "copy":  # the server never got the COMMIT: it rolled the transaction back
        assert "nothing was written" in lines[0], lines[0]
    else:  # lost during the COMMIT: orderbot cannot know, and must not say nothing happened
        assert "nothing was written" not in lines[0] and "may or may not" in lines[0], lines[0]
        assert f"orders list --all --orders postgresql://orderbot@127.0.0.1:{own_server.port}/" in lines[0]
    assert "Traceback" not in result.output and "OperationalError" not in result.output
    assert "consuming input" not in result.output and own_server.password not in result.output

    own_server.start_again()
    with psycopg.connect(url) as connection:  # (killed before its COMMIT finished, either way)
        assert connection.execute("SELECT count(*) FROM orders").fetchone()[0] == 14  # as it was
