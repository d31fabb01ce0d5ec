"""Every statement that reads or changes org data names the org (docs/architecture.md § 15).

On a distributed PostgreSQL (Citus, distributed by org_id) a statement that names the org
reads one shard; one that names a row by its id alone asks every shard. Read from the
catalog: each of charter's SQL and PL/pgSQL functions, statement by statement, and each
table of org data it reads or changes there (FROM, JOIN, UPDATE, DELETE) must be filtered
on its org_id. The functions that span orgs by design, and those that look up an org for a
caller who named an id alone, are listed with the reason; this test fails when another
function reads org data without its org, or when a listed one no longer does."""

import re

from tests.db.schema.test_distribution_keys import COORDINATOR, REFERENCE

# Work that spans orgs by design, reading only: a worker's claim finds the next org with work
# in its queue (then claims from that org alone, § 15), pollers read what is due in every org
# (then lock each row by its key), maintenance sweeps every org, and operators' overviews
# count across orgs. None of them is one org's request, and none locks rows of several orgs
# (test_no_statement_that_locks_rows_spans_orgs).
ORG_WIDE = {
    "_next_org_with_work": "a claim's walk to the next org with work in its queue",
    "fire_due_waits": "the waits poller reads what is due in every org",
    "fire_due_schedules": "the schedule poller reads what is due in every org",
    "queue_stats": "an operator's overview of the queue",
    "list_workers": "an operator's list of workers and what they hold",
    "flow_summary": "a flow's runs in every org, before an operator deletes it",
    "delete_flow_and_data": "an operator deletes a flow with its runs in every org",
    "_expired_flow_runs": "the finished flow runs retention forgets, in every org",
}

# Callers that name a row by its id alone (an operator, a test, an old client): the org is
# looked up once, by id, and every statement after that names it.
LOOKUP = {
    "_task_orgs": "tasks named by id",
    "_run_org": "a run named by id",
    "_effect_org": "a side effect named by id",
    "_email_task_org": "an email task named by id (seed 003's helpers)",
    "apply_document_events": "an event named by (created_at, id)",
}

_KEYWORDS = {
    "where", "set", "on", "join", "left", "right", "inner", "cross", "using", "with", "order",
    "group", "limit", "for", "returning", "into", "full", "natural", "lateral", "union",
    "select", "as", "values", "window", "having", "offset", "fetch", "only",
}  # fmt: skip


def _org_tables(conn) -> set[str]:
    rows = conn.execute(
        """SELECT c.relname FROM pg_class AS c
            WHERE c.relnamespace = 'charter'::regnamespace AND c.relkind IN ('r', 'p')
              AND NOT c.relispartition"""
    ).fetchall()
    return {name for (name,) in rows} - REFERENCE - COORDINATOR


def _statements(body: str) -> list[str]:
    """A function body's statements, comments and string literals left out (a literal may
    hold a semicolon); a loop's query (``FOR … IN SELECT … LOOP``) is one of its own."""
    body = re.sub(r"--[^\n]*", "", body)
    body = re.sub(r"'(?:[^']|'')*'", "''", body)
    return re.split(r";|\bLOOP\b", body, flags=re.IGNORECASE)


def _org_filters(statement: str, alias: str | None) -> int:
    """How many times the statement filters ``alias`` (or, without one, a bare column) on
    org_id: ``x.org_id = …``, ``… = x.org_id``, ``(x.id, x.org_id) IN …``. A join of two
    aliases on their orgs (``t.org_id = w.org_id``) filters the left one only: it counts
    for ``w`` only where ``w`` is filtered in its own right."""
    statement = re.sub(r"(\b\w+\.org_id\s*=\s*)\w+\.org_id\b", r"\1joined", statement)
    owner = rf"\b{re.escape(alias)}\." if alias else r"(?<![\w.])"
    filtered = rf"{owner}org_id(?:\s*,\s*[\w.]+)*\)?\s*(?:=|IN\b)|(?:=|ANY\s*\()\s*{owner}org_id\b"
    return len(re.findall(filtered, statement, re.IGNORECASE))


_LOCKS = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b", re.IGNORECASE)


def _unnamed_reads(conn, locking: bool = False) -> dict[str, list[str]]:
    """Per function, the org tables its statements read or change without naming the org
    (with ``locking``, in statements that lock rows with FOR UPDATE or FOR SHARE only)."""
    tables = "|".join(sorted(_org_tables(conn), key=len, reverse=True))
    reads = re.compile(
        rf"\b(?:FROM|JOIN|UPDATE|DELETE\s+FROM)\s+charter\.({tables})\b(?:\s+(?:AS\s+)?(\w+))?",
        re.IGNORECASE,
    )
    functions = conn.execute(
        """SELECT p.proname, coalesce(pg_get_function_sqlbody(p.oid), p.prosrc) FROM pg_proc AS p
             JOIN pg_language AS l ON l.oid = p.prolang
            WHERE p.pronamespace = 'charter'::regnamespace AND l.lanname IN ('sql', 'plpgsql')"""
    ).fetchall()
    found: dict[str, list[str]] = {}
    for name, body in functions:
        for statement in _statements(body):
            if locking and not _LOCKS.search(statement):
                continue
            # Each reference to a table under one alias (a CTE and the statement after it
            # may use the same one) needs a filter of its own.
            references: dict[str | None, list[str]] = {}
            for match in reads.finditer(statement):
                table, alias = match.group(1), match.group(2)
                if alias is not None and alias.lower() in _KEYWORDS:
                    alias = None
                references.setdefault(alias, []).append(table)
            for owner, named in references.items():
                missing = len(named) - _org_filters(statement, owner)
                if missing > 0:
                    found.setdefault(name, []).extend(named[-missing:])
    return found


def test_the_check_sees_a_statement_that_names_a_row_by_its_id_alone(conn):
    """And a second reference under the same alias that the first one's filter does not
    cover (a CTE that selects by org, then an UPDATE that joins it by id alone)."""
    conn.execute(
        """CREATE FUNCTION charter.zz_by_id(p_id text) RETURNS text LANGUAGE sql AS $$
               SELECT r.status FROM charter.runs AS r WHERE r.id = p_id $$"""
    )
    conn.execute(
        """CREATE FUNCTION charter.zz_by_key(p_id text, p_org text) RETURNS text LANGUAGE sql AS $$
               SELECT r.status FROM charter.runs AS r WHERE r.id = p_id AND r.org_id = p_org $$"""
    )
    conn.execute(
        """CREATE FUNCTION charter.zz_cte(p_org text) RETURNS void LANGUAGE sql AS $$
               WITH mine AS (SELECT s.run_id FROM charter.step_states AS s WHERE s.org_id = p_org)
               UPDATE charter.step_states AS s SET arrivals = 0 FROM mine
                WHERE s.run_id = mine.run_id $$"""
    )
    conn.execute(
        """CREATE FUNCTION charter.zz_lock_every_org() RETURNS void LANGUAGE plpgsql AS $$
               DECLARE v record;
               BEGIN
                   FOR v IN SELECT r.id, r.org_id FROM charter.runs AS r
                             WHERE r.status = 'queued' LOOP
                       PERFORM FROM charter.runs AS r
                        WHERE r.id = v.id AND r.org_id = v.org_id FOR UPDATE;
                   END LOOP;
                   PERFORM FROM charter.tasks AS t WHERE t.status = 'queued' FOR UPDATE SKIP LOCKED;
               END $$"""
    )
    found = _unnamed_reads(conn)
    assert found.get("zz_by_id") == ["runs"]
    assert found.get("zz_cte") == ["step_states"]
    assert "zz_by_key" not in found
    # Reading every org, then locking by key, is no lock across orgs; locking every org is.
    assert found.get("zz_lock_every_org") == ["runs", "tasks"]
    locking = _unnamed_reads(conn, locking=True)
    assert locking == {"zz_lock_every_org": ["tasks"]}, locking


def test_every_statement_reading_org_data_names_its_org(conn):
    found = _unnamed_reads(conn)
    allowed = set(ORG_WIDE) | set(LOOKUP)
    unexpected = {name: tables for name, tables in found.items() if name not in allowed}
    assert unexpected == {}, (
        f"these functions read org data without naming the org (one shard becomes every "
        f"shard once distributed): {unexpected}"
    )
    fixed = sorted(allowed - set(found))
    assert fixed == [], f"these functions name the org now; take them off the lists: {fixed}"


def test_no_statement_that_locks_rows_spans_orgs(conn):
    """Citus locks rows (FOR UPDATE, FOR SHARE) only in a statement that reads one shard: a
    claim or a poller that locked due rows of every org would not run there at all."""
    assert _unnamed_reads(conn, locking=True) == {}
