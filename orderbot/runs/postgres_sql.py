"""What a PostgreSQL run store's server does itself: the functions that write its queue and
its audit log, and the triggers that keep every other writer out (orderbot.runs.postgres
installs them; docs/team.md grants them).

Operators hold no INSERT on `run_audit` and no INSERT or UPDATE on `run_approvals`. They call
four functions, owned by the store's owner and run with its rights (SECURITY DEFINER, with a
fixed search_path so that no caller's objects stand in for the store's):

    run_propose(run, call, tool, arguments, description, customer)   a call is asked for
    run_decide(run, call, approve, reason)                            approved or rejected
    run_execute(run, call, tool, arguments, customer)                 about to run
    run_outcome(run, call, ok, result)                                it ran (executed, failed)

Each names the role the session logged in as (`session_user`; a session that switched to
another role is refused), stamps the server's time, and appends the log's entry from the
queue row it is about, numbered and linked after the last entry whatever that entry holds
(one bad row stops nobody: `--verify` names it). An approval's decider is the session that
approves it, under the store's rules (run_approvers, four eyes) as they are at that moment; a
call is carried out only by the session that approved it, only for the call that was
approved, and its outcome only logged by that session. Each returns false when the row is
not where the step needs it (another desk settled it first), and refuses anything else with
`insufficient_privilege`, its DETAIL the sentence's catalogue id and values (`orderbot:` and
JSON), so that orderbot says it in the reader's language.

The log's link is SHA-256, computed on the server as orderbot.runs.audit computes it, so that
anyone who reads the log can check it; a log the desks keyed before the server wrote it is
linked on with that key, kept in `run_link_key`, which no operator can read
(`run_audit_keyed_check` checks the keyed links for a session without the key).

Triggers: the log and the queue take rows only from the store's owner (its functions);
the log is never updated, deleted or truncated, by anyone; an approval stays bound to its call
and only moves forward; who started a run is the role that logged in, and never changes.
"""

from __future__ import annotations

AUDIT_LOCK = int.from_bytes(b"orderbot") >> 1  # the advisory lock key of log appends (any fixed number)
CALLED = ("run_propose", "run_decide", "run_execute", "run_outcome", "run_audit_keyed_check")  # what operators call
# What operators call about the bearer tokens of orderbot mcp (orderbot.runs.tokens): run_tokens itself
# is granted to nobody, so that no desk reads a hash it could look a token up by, nor mints one
# that acts as another desk.
TOKEN_CALLS = ("run_token_add", "run_token_check", "run_tokens_listed", "run_tokens_exist", "run_token_revoke")
HELPERS = ("run_refuse", "run_caller", "run_now", "run_cut", "run_json", "run_hmac", "run_link", "run_append")
HELPERS += ("run_may_approve",)


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _refuse(message_id: str, message: str, params: str) -> str:
    """A PL/pgSQL statement that refuses, in English for psql and by id for orderbot."""
    return f"PERFORM run_refuse('{message_id}', {message}, json_build_object({params}));"


def _inline_refuse(message_id: str, message: str, params: str) -> str:
    """The same, for a trigger, which runs with the rights of whoever writes (no helper)."""
    detail = f"'orderbot:' || json_build_object('id', '{message_id}', 'params', json_build_object({params}))::text"
    return f"RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = {message}, DETAIL = {detail};"


def functions(schema: str, *, with_tokens: bool = True) -> list[str]:
    """CREATE OR REPLACE statements of every function, their search_path fixed to `schema`
    (where the store's tables are) and pg_temp last; the tokens' only once their table is
    there (`with_tokens`: schema version 5 on)."""
    path = f"SET search_path = {quoted(schema)}, pg_temp"

    def plpgsql(signature: str, returns: str, body: str, *, definer: bool = False, declare: str = "") -> str:
        rights = " SECURITY DEFINER" if definer else ""
        declared = f"DECLARE\n{declare}\n" if declare else ""
        return (
            f"CREATE OR REPLACE FUNCTION {signature} RETURNS {returns} LANGUAGE plpgsql{rights} {path} AS $$\n"
            f"{declared}BEGIN\n{body}\nEND $$"
        )

    lock = f"PERFORM pg_advisory_xact_lock({AUDIT_LOCK});"
    may_approve = f"""  IF EXISTS (SELECT 1 FROM run_approvers)
     AND NOT EXISTS (SELECT 1 FROM run_approvers WHERE operator = me) THEN
    {_refuse("runs.refused_not_an_approver",
             "format('%s is not on the list of operators who may approve (run_approvers)', me)", "'operator', me")}
  END IF;
  IF EXISTS (SELECT 1 FROM run_policy
             WHERE name = 'four_eyes' AND lower(btrim(value)) IN ('on', '1', 'true', 'yes')) THEN
    SELECT operator INTO starter FROM runs WHERE run_id = a.run_id;
    IF me = a.requested_by OR me = starter THEN
      {_refuse("runs.refused_four_eyes",
               "format('four eyes: %s asked for the action of run %s or started the run, and cannot approve it', "
               "me, a.run_id)", "'operator', me, 'run_id', a.run_id")}
    END IF;
  END IF;"""  # fmt: skip
    ids = "'operator', me, 'run_id', p_run_id, 'call_id', p_call_id"

    def sql(signature: str, returns: str, body: str) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {signature} RETURNS {returns} LANGUAGE sql STABLE SECURITY DEFINER {path} "
            f"AS $$ {body} $$"
        )

    listed = (
        "id text, customer text, operator text, created_by text, created_at text, expires_at text, "
        "revoked_at text, revoked_by text"
    )
    columns = "id, customer, operator, created_by, created_at, expires_at, revoked_at, revoked_by"
    # The store's owner may make and revoke any token: inside these functions current_user is it.
    owner = "session_user = current_user"
    token_functions = [
        plpgsql(
            "run_token_add(p_id text, p_hash text, p_customer text, p_operator text, p_expires_at text)",
            "boolean",
            f"""  IF p_operator IS NOT NULL AND p_operator <> me AND NOT ({owner}) THEN
    {_refuse("tokens.for_another",
             "format('%s may make a token only in its own name, not for the operator %s', me, p_operator)",
             "'operator', me, 'named', p_operator")}
  END IF;
  INSERT INTO run_tokens (id, hash, customer, operator, created_by, created_at, expires_at)
    VALUES (p_id, p_hash, p_customer, p_operator, me, run_now(false), p_expires_at) ON CONFLICT DO NOTHING;
  RETURN FOUND;""",
            definer=True,
            declare="  me text := run_caller();",
        ),
        sql("run_token_check(p_hash text)", f"TABLE({listed})",
            f"SELECT {columns} FROM run_tokens WHERE hash = p_hash"),
        sql("run_tokens_listed()", f"TABLE({listed})", f"SELECT {columns} FROM run_tokens ORDER BY created_at, id"),
        sql("run_tokens_exist()", "boolean", "SELECT EXISTS (SELECT 1 FROM run_tokens)"),
        plpgsql(
            "run_token_revoke(p_id text)",
            "text",
            f"""  SELECT * INTO t FROM run_tokens WHERE id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'none';
  END IF;
  IF t.revoked_at IS NOT NULL THEN
    RETURN 'already';
  END IF;
  IF me IS DISTINCT FROM t.created_by AND me IS DISTINCT FROM t.operator AND NOT ({owner}) THEN
    {_refuse("tokens.not_yours_to_revoke",
             "format('%s may revoke only a token it made or one in its own name, not %s', me, p_id)",
             "'operator', me, 'id', p_id")}
  END IF;
  UPDATE run_tokens SET revoked_at = run_now(false), revoked_by = me WHERE id = p_id;
  RETURN 'revoked';""",
            definer=True,
            declare="  me text := run_caller();\n  t run_tokens;",
        ),
    ]  # fmt: skip
    return [
        plpgsql(
            "run_refuse(p_id text, p_message text, p_params json)",
            "void",
            "  RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = p_message,\n"
            "    DETAIL = 'orderbot:' || json_build_object('id', p_id, 'params', p_params)::text;",
        ),
        # Inside the functions current_user is their owner; a session that switched roles
        # (SET ROLE, a role option, a role default) still shows it in the `role` setting.
        plpgsql(
            "run_caller()",
            "text",
            f"""  IF current_setting('role') NOT IN ('none', session_user::text) THEN
    {
                _refuse(
                    "runs.refused_role_switched",
                    "format('the session logged in as %s acts as %s: the queue and the audit log take only the role "
                    "that logged in', session_user, current_setting('role'))",
                    "'login', session_user, 'role', current_setting('role')",
                )
            }
  END IF;
  RETURN session_user::text;""",  # fmt: skip
        ),
        plpgsql(
            "run_now(p_milliseconds boolean)",
            "text",
            "  RETURN to_char(clock_timestamp() AT TIME ZONE 'UTC', CASE WHEN p_milliseconds\n"
            '    THEN \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\' ELSE \'YYYY-MM-DD"T"HH24:MI:SS"Z"\' END);',
        ),
        plpgsql(  # orderbot.text.cut
            "run_cut(p_text text, p_limit integer)",
            "text",
            "  RETURN CASE WHEN length(p_text) <= p_limit THEN p_text ELSE left(p_text, p_limit - 1) || '…' END;",
        ),
        plpgsql(  # json.dumps(..., ensure_ascii=False) of one value: PostgreSQL escapes as Python does
            "run_json(p_text text)", "text", "  RETURN coalesce(to_json(p_text)::text, 'null');"
        ),
        plpgsql(
            "run_hmac(p_key bytea, p_data bytea)",
            "bytea",
            """  IF length(p_key) > 64 THEN p_key := sha256(p_key); END IF;
  p_key := p_key || decode(repeat('00', 64 - length(p_key)), 'hex');
  inner_pad := p_key;
  outer_pad := p_key;
  FOR i IN 0..63 LOOP
    inner_pad := set_byte(inner_pad, i, get_byte(p_key, i) # 54);
    outer_pad := set_byte(outer_pad, i, get_byte(p_key, i) # 92);
  END LOOP;
  RETURN sha256(outer_pad || sha256(inner_pad || p_data));""",
            declare="  inner_pad bytea;\n  outer_pad bytea;",
        ),
        plpgsql(  # orderbot.runs.audit.entry_hash
            "run_link(e run_audit)",
            "text",
            """  line := '[' || e.seq::text || ',' || concat_ws(',', run_json(e.at), run_json(e.event),
    run_json(e.run_id), run_json(e.call_id), run_json(e.tool), run_json(e.arguments), run_json(e.customer),
    run_json(e.requested_by), run_json(e.decided_by), run_json(e.result), run_json(e.reason)) || ']';
  SELECT key INTO link_key FROM run_link_key LIMIT 1;
  IF link_key IS NULL THEN
    RETURN encode(sha256(convert_to(e.prev || chr(10) || line, 'UTF8')), 'hex');
  END IF;
  RETURN 'hmac:' || encode(run_hmac(link_key, convert_to(e.prev || chr(10) || line, 'UTF8')), 'hex');""",
            declare="  line text;\n  link_key bytea;",
        ),
        plpgsql(
            "run_append(p_event text, a run_approvals, p_result text, p_reason text)",
            "void",
            f"""  {lock}
  SELECT * INTO last FROM run_audit ORDER BY seq DESC LIMIT 1;
  e.seq := coalesce(last.seq, 0) + 1;
  e.at := run_now(true);
  e.event := p_event;
  e.run_id := a.run_id;
  e.call_id := a.call_id;
  e.tool := a.tool;
  e.arguments := run_cut(a.arguments, 2000);
  e.customer := a.customer;
  e.requested_by := a.requested_by;
  e.decided_by := CASE WHEN p_event = 'proposed' THEN NULL ELSE a.decided_by END;
  e.result := run_cut(p_result, 1000);
  e.reason := run_cut(p_reason, 500);
  e.prev := coalesce(last.hash, repeat('0', 64));
  e.hash := run_link(e);
  INSERT INTO run_audit VALUES (e.*);""",
            declare="  last run_audit;\n  e run_audit;",
        ),
        plpgsql("run_may_approve(me text, a run_approvals)", "void", may_approve, declare="  starter text;"),
        plpgsql(
            "run_propose(p_run_id text, p_call_id text, p_tool text, p_arguments text, p_description text, "
            "p_customer text)",
            "boolean",
            f"""  {lock}
  INSERT INTO run_approvals
    (run_id, call_id, tool, arguments, description, customer, requested_by, requested_at, status)
    VALUES (p_run_id, p_call_id, p_tool, p_arguments, p_description, p_customer, me, run_now(false), 'pending')
    ON CONFLICT (run_id, call_id) DO NOTHING RETURNING * INTO a;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM run_append('proposed', a, NULL, NULL);
  RETURN true;""",
            definer=True,
            declare="  me text := run_caller();\n  a run_approvals;",
        ),
        plpgsql(
            "run_decide(p_run_id text, p_call_id text, p_approve boolean, p_reason text)",
            "boolean",
            f"""  {lock}
  SELECT * INTO a FROM run_approvals WHERE run_id = p_run_id AND call_id = p_call_id FOR UPDATE;
  IF NOT FOUND THEN
    {
                _refuse(
                    "runs.refused_no_call",
                    "format('no call %s of run %s was asked for: there is nothing to decide', p_call_id, p_run_id)",
                    "'run_id', p_run_id, 'call_id', p_call_id",
                )
            }
  END IF;
  IF a.status <> 'pending' THEN
    RETURN false;
  END IF;
  IF p_approve THEN
    PERFORM run_may_approve(me, a);
  END IF;
  UPDATE run_approvals SET status = CASE WHEN p_approve THEN 'approved' ELSE 'rejected' END, decided_by = me,
    decided_at = run_now(false) WHERE run_id = p_run_id AND call_id = p_call_id RETURNING * INTO a;
  PERFORM run_append(a.status, a, NULL, CASE WHEN p_approve THEN NULL ELSE p_reason END);
  RETURN true;""",  # fmt: skip
            definer=True,
            declare="  me text := run_caller();\n  a run_approvals;",
        ),
        plpgsql(
            "run_execute(p_run_id text, p_call_id text, p_tool text, p_arguments text, p_customer text)",
            "boolean",
            f"""  {lock}
  SELECT * INTO a FROM run_approvals WHERE run_id = p_run_id AND call_id = p_call_id FOR UPDATE;
  IF FOUND AND a.status = 'executing' AND a.decided_by = me THEN
    RETURN true;
  END IF;
  IF NOT FOUND OR a.status <> 'approved' OR a.decided_by IS DISTINCT FROM me
     OR NOT EXISTS (SELECT 1 FROM run_audit l WHERE l.run_id = p_run_id AND l.call_id = p_call_id
                    AND l.event = 'approved' AND l.decided_by = me) THEN
    {
                _refuse(
                    "runs.refused_no_approval",
                    "format('%s has not approved call %s of run %s: it is carried out only by the one who approved it; "
                    "nothing was executed', me, p_call_id, p_run_id)",
                    ids,
                )
            }
  END IF;
  IF (a.tool, a.arguments, a.customer) IS DISTINCT FROM (p_tool, p_arguments, p_customer) THEN
    {
                _refuse(
                    "runs.refused_other_call",
                    "format('call %s of run %s is not the call that was approved (its tool, arguments or customer "
                    "differ); nothing was executed', p_call_id, p_run_id)",
                    ids,
                )
            }
  END IF;
  PERFORM run_may_approve(me, a);
  UPDATE run_approvals SET status = 'executing' WHERE run_id = p_run_id AND call_id = p_call_id;
  RETURN true;""",  # fmt: skip
            definer=True,
            declare="  me text := run_caller();\n  a run_approvals;",
        ),
        plpgsql(
            "run_outcome(p_run_id text, p_call_id text, p_ok boolean, p_result text)",
            "boolean",
            f"""  {lock}
  SELECT * INTO a FROM run_approvals WHERE run_id = p_run_id AND call_id = p_call_id FOR UPDATE;
  IF NOT FOUND OR a.status <> 'executing' OR a.decided_by IS DISTINCT FROM me THEN
    {
                _refuse(
                    "runs.refused_no_execution",
                    "format('%s is not carrying out call %s of run %s: no outcome can be logged for it', "
                    "me, p_call_id, p_run_id)",
                    ids,
                )
            }
  END IF;
  UPDATE run_approvals SET status = CASE WHEN p_ok THEN 'committed' ELSE 'failed' END
    WHERE run_id = p_run_id AND call_id = p_call_id RETURNING * INTO a;
  PERFORM run_append(CASE WHEN p_ok THEN 'executed' ELSE 'failed' END, a, p_result, NULL);
  RETURN true;""",  # fmt: skip
            definer=True,
            declare="  me text := run_caller();\n  a run_approvals;",
        ),
        *(token_functions if with_tokens else []),
        plpgsql(
            "run_audit_keyed_check()",
            "bigint[]",
            """  IF NOT EXISTS (SELECT 1 FROM run_link_key) THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY(SELECT l.seq FROM run_audit l WHERE l.hash LIKE 'hmac:%' AND l.hash <> run_link(l) ORDER BY l.seq);""",
            definer=True,
        ),
        # -- triggers: they run with the rights of whoever writes, so they call no helper --
        plpgsql(
            "run_written_by_the_store()",
            "trigger",
            f"""  IF current_user::text
     <> (SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = TG_RELID) THEN
    {
                _inline_refuse(
                    "runs.written_by_the_store",
                    "format('%s is written only by the run store''s functions (run_propose, run_decide, "
                    "run_execute, run_outcome)', TG_TABLE_NAME)",
                    "'table', TG_TABLE_NAME",
                )
            }
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;""",  # fmt: skip
        ),
        plpgsql(
            "run_audit_append_only()",
            "trigger",
            "  RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',\n"
            "    MESSAGE = 'the audit log is append-only: its entries cannot be changed or removed';",
        ),
        plpgsql(
            "run_approvals_guard()",
            "trigger",
            """  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = 'an approval cannot be removed';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'pending' THEN
      RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = 'an approval is requested as pending';
    END IF;
    RETURN NEW;
  END IF;
  IF (NEW.run_id, NEW.call_id, NEW.tool, NEW.arguments, NEW.description, NEW.requested_at)
       IS DISTINCT FROM (OLD.run_id, OLD.call_id, OLD.tool, OLD.arguments, OLD.description, OLD.requested_at)
     OR NEW.customer IS DISTINCT FROM OLD.customer OR NEW.requested_by IS DISTINCT FROM OLD.requested_by THEN
    RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
      MESSAGE = 'an approval stays bound to the call it was requested for';
  END IF;
  IF NEW.status = OLD.status OR (OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected'))
     OR ((OLD.status, NEW.status) IN (('approved', 'executing'), ('executing', 'committed'), ('executing', 'failed'))
         AND NEW.decided_by IS NOT DISTINCT FROM OLD.decided_by) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
    MESSAGE = format('an approval cannot go from %s to %s', OLD.status, NEW.status);""",
        ),
        plpgsql(
            "runs_started_by()",
            "trigger",
            f"""  IF current_user <> session_user THEN
    {
                _inline_refuse(
                    "runs.refused_role_switched",
                    "format('the session logged in as %s acts as %s: runs are written only by the role that "
                    "logged in', session_user, current_user)",
                    "'login', session_user, 'role', current_user",
                )
            }
  END IF;
  IF (TG_OP = 'INSERT' AND NEW.operator IS DISTINCT FROM session_user::text)
     OR (TG_OP = 'UPDATE' AND NEW.operator IS DISTINCT FROM OLD.operator) THEN
    {
                _inline_refuse(
                    "runs.started_by",
                    "format('run %s is started by the role that logged in (%s), and who started it never "
                    "changes', NEW.run_id, session_user)",
                    "'run_id', NEW.run_id, 'login', session_user",
                )
            }
  END IF;
  RETURN NEW;""",  # fmt: skip
        ),
    ]


TRIGGERS = [
    ("run_audit_written_by_the_store", "run_audit", "BEFORE INSERT", "ROW", "run_written_by_the_store"),
    ("run_audit_append_only", "run_audit", "BEFORE UPDATE OR DELETE", "ROW", "run_audit_append_only"),
    ("run_audit_no_truncate", "run_audit", "BEFORE TRUNCATE", "STATEMENT", "run_audit_append_only"),
    ("run_approvals_written_by_the_store", "run_approvals", "BEFORE INSERT OR UPDATE OR DELETE", "ROW",
     "run_written_by_the_store"),
    ("run_approvals_guard", "run_approvals", "BEFORE INSERT OR UPDATE OR DELETE", "ROW", "run_approvals_guard"),
    ("runs_started_by", "runs", "BEFORE INSERT OR UPDATE", "ROW", "runs_started_by"),
]  # fmt: skip


def guards(schema: str, *, with_tokens: bool = True) -> list[str]:
    """Every statement that installs the server's part, on a store made now or made by an
    older orderbot (each replaces what it finds): the key's table, the functions, the triggers,
    and no EXECUTE for PUBLIC (docs/team.md grants the four functions to the operators)."""
    return [
        "CREATE TABLE IF NOT EXISTS run_link_key (key BYTEA NOT NULL)",
        "REVOKE ALL ON run_link_key FROM PUBLIC",
        # Schema version 3's guards: operators wrote the log, a trigger checked the names.
        "DROP TRIGGER IF EXISTS run_audit_names_the_session ON run_audit",
        "DROP FUNCTION IF EXISTS run_audit_names_the_session()",
        "DROP FUNCTION IF EXISTS run_session_role()",
        *functions(schema, with_tokens=with_tokens),
        *(f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table, *_ in TRIGGERS),
        *(
            f"CREATE TRIGGER {name} {when} ON {table} FOR EACH {each} EXECUTE FUNCTION {function}()"
            for name, table, when, each, function in TRIGGERS
        ),
        f"REVOKE EXECUTE ON FUNCTION {', '.join(CALLED + (TOKEN_CALLS if with_tokens else ()) + HELPERS)} FROM PUBLIC",
    ]


# Version 3's operators held INSERT on the log and INSERT, UPDATE on the queue: each role that
# held them now calls the functions instead, so that a team's desks go on working once the
# owner has opened the store (and no desk keeps a way to write either table).
HAND_OVER = f"""DO $$
DECLARE
  grantee text;
BEGIN
  FOR grantee IN SELECT DISTINCT g.grantee FROM information_schema.role_table_grants g
      WHERE g.table_schema = current_schema() AND g.table_name = 'run_audit' AND g.privilege_type = 'INSERT'
        AND g.grantee <> current_user LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION {", ".join(CALLED)} TO %I', grantee);
    EXECUTE format('REVOKE INSERT ON run_audit FROM %I', grantee);
    EXECUTE format('REVOKE INSERT, UPDATE ON run_approvals FROM %I', grantee);
  END LOOP;
END $$"""
