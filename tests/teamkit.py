"""A team's PostgreSQL store set up as docs/team.md says (its SQL blocks are run, so the page
cannot drift from what works): a database owned by runs_owner holding the sample orders and
the run tables, granted to the group orderbot_operators, whose members desk1 and desk2 log in
with passwords of their own. Used by tests/runs/test_team_postgres.py and by the trust
boundary's four-eyes tests (tests/security/test_four_eyes_roles.py)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path

from clikit import cli

DOCS = Path(__file__).resolve().parents[1] / "docs" / "team.md"
ORDERS = Path(__file__).resolve().parents[1] / "orders.json"
PASSWORDS = {"runs_owner": "owner-Pw-31x", "desk1": "desk1-Pw-52y", "desk2": "desk2-Pw-73z"}


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

    with server.admin() as admin:
        for statement in statements(sql_block("as a superuser, once"), shop=database):
            for role, password in PASSWORDS.items():
                statement = statement.replace(f"'{role}-password'", f"'{password}'")
            with contextlib.suppress(psycopg.errors.DuplicateObject):  # a role made by an earlier test
                admin.execute(statement)

    def url(role: str) -> str:
        return f"postgresql://{role}:{PASSWORDS[role]}@{server.host}:{server.port}/{database}"

    owner = url("runs_owner")
    assert cli("orders", "import", str(ORDERS), "--to", owner).exit_code == 0
    assert cli("runs", "--runs", owner).exit_code == 0  # the owner makes the run tables
    with psycopg.connect(owner, autocommit=True) as connection:
        for statement in statements(sql_block("as runs_owner, in the database")):
            connection.execute(statement)
    return url


def run(*args: str, env: dict | None = None):
    """`cli`, checking that no password was ever printed, whatever happened."""
    result = cli(*args, env=env)
    for password in PASSWORDS.values():
        assert password not in result.output
    return result
