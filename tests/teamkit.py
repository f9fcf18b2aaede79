"""A team's PostgreSQL store set up as docs/team.md says (its SQL blocks are run, so the page
cannot drift from what works): a database owned by runs_owner holding the sample orders and
the run tables, granted to the group orderbot_operators, whose members desk1, desk2 and desk3
log in with passwords of their own; or the same database as an earlier orderbot left it
(`make_team_then`). Used by tests/runs/test_team_postgres.py, tests/runs/test_schema_3.py and
the trust boundary's tests (tests/security/test_four_eyes_roles.py, test_audit_desk.py,
test_audit_forgery.py)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path

from clikit import cli

DOCS = Path(__file__).resolve().parents[1] / "docs" / "team.md"
ORDERS = Path(__file__).resolve().parents[1] / "orders.json"
PASSWORDS = {"runs_owner": "owner-Pw-31x", "desk1": "desk1-Pw-52y", "desk2": "desk2-Pw-73z", "desk3": "desk3-Pw-94q"}


def sql_block(title: str) -> str:
    """The ```sql block of docs/team.md whose first line is `-- {title}`."""
    for block in re.findall(r"```sql\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S):
        if block.startswith(f"-- {title}"):
            return block
    raise AssertionError(f"docs/team.md has no sql block starting with -- {title}")


def statements(block: str, **names: str) -> list[str]:
    text = block
    for name, value in names.items():
        text = text.replace(name, value)
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def make_team(server, database: str) -> Callable[[str], str]:
    """Set the team's database up on `server` (tests/shopkit.PostgresServer); returns the URL
    of each role (`url("desk1")`). The roles outlive the database: the cluster is shared."""
    import psycopg

    url = _roles_and_orders(server, database)
    assert cli("runs", "--runs", url("runs_owner")).exit_code == 0  # the owner makes the run tables
    with psycopg.connect(url("runs_owner"), autocommit=True) as connection:
        for statement in statements(sql_block("as runs_owner, in the database")):
            connection.execute(statement)
    return url


# What docs/team.md granted while desks wrote the queue and the log themselves (schema version 3).
GRANTS_THEN = """
GRANT SELECT ON run_schema, run_key, run_approvers, run_policy TO orderbot_operators;
GRANT SELECT, INSERT, UPDATE ON runs, run_approvals TO orderbot_operators;
GRANT SELECT, INSERT ON run_audit TO orderbot_operators;
GRANT SELECT ON schema_version, orders, line_items, shipping TO orderbot_operators;
GRANT UPDATE ON orders TO orderbot_operators;
"""
THEN = Path(__file__).resolve().parent / "runs" / "fixtures" / "schema-3"  # stores an earlier orderbot wrote


def make_team_then(server, database: str, dump: str) -> Callable[[str], str]:
    """The team's database as an orderbot of schema version 3 left it: its run tables, rows,
    guards and grants of that day (tests/runs/fixtures/schema-3/`dump`), owned by runs_owner,
    not yet opened by today's orderbot."""
    import psycopg

    url = _roles_and_orders(server, database)
    with psycopg.connect(url("runs_owner"), autocommit=True) as connection:
        connection.execute((THEN / dump).read_text(encoding="utf-8"))
        connection.execute("SELECT pg_catalog.set_config('search_path', 'public', false)")
        for statement in statements(GRANTS_THEN):
            connection.execute(statement)
    return url


def _roles_and_orders(server, database: str) -> Callable[[str], str]:
    """The roles and the database of docs/team.md's superuser block, the orders imported by
    the owner; the URL of each role."""
    import psycopg

    with server.admin() as admin:
        for statement in statements(sql_block("as a superuser, once"), shop=database):
            for role, password in PASSWORDS.items():
                statement = statement.replace(f"'{role}-password'", f"'{password}'")
            with contextlib.suppress(psycopg.errors.DuplicateObject):  # a role made by an earlier test
                admin.execute(statement)

    def url(role: str) -> str:
        return f"postgresql://{role}:{PASSWORDS[role]}@{server.host}:{server.port}/{database}"

    assert cli("orders", "import", str(ORDERS), "--to", url("runs_owner")).exit_code == 0
    return url


def run(*args: str, env: dict | None = None):
    """`cli`, checking that no password was ever printed, whatever happened."""
    result = cli(*args, env=env)
    for password in PASSWORDS.values():
        assert password not in result.output
    return result
