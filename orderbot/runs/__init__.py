"""Runs: their records' format and bounds (record), the recorder that writes them (recorder),
the checks before a run is resumed (resume), and the run store they are kept in: one
interface (base) with two databases behind it (sql: SQLite, the state directory's by default,
and PostgreSQL), the tags that vouch for each record (tagged), the audit log (audit), and the
takeover of an earlier orderbot's JSON records (takeover). Replay runs a record again, so it
sits a floor up, with the runner (orderbot.runner.replay)."""
