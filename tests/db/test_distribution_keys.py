"""The schema stays ready to be distributed by org (docs/architecture.md § 15): every table
is a definition (a reference table, replicated), coordinator-only, or org data carrying a
non-null `org_id` under row-level security. Citus needs `org_id` in every primary and
unique key of org data; the keys that lack it today are listed below, and this test fails
when another one appears (or when one of them is fixed and the list should shrink)."""

from typing import Any

# Definitions, read everywhere and written rarely: Citus reference tables.
REFERENCE = {
    "workflows",
    "workflow_versions",
    "flow_steps",
    "flow_step_deps",
    "workflow_version_parents",
    "schema_migrations",
}
# Looked up before an org is known (a worker's heartbeat, an API key's hash, the test
# clock of a development database): kept on the coordinator.
COORDINATOR = {"workers", "api_keys", "test_clock"}

# Keys of org data without org_id, by table. Run ids are unique across orgs today, and
# every call that names a run, a task or an instance names it by id alone; distributing
# makes those ids unique per org and the calls carry their org (§ 15, "What stands in the
# way"). Each key here changes with that step.
NOT_YET = {
    "approval_decisions": {"PRIMARY KEY (id)", "UNIQUE (request_id, actor)"},
    "approval_delegations": {"PRIMARY KEY (id)"},
    "approval_requests": {"PRIMARY KEY (id)"},
    "document_audit": {"PRIMARY KEY (id)"},
    "document_events": {"PRIMARY KEY (created_at, id)"},
    "email_messages": {"PRIMARY KEY (id)"},
    "flow_event_waits": {"PRIMARY KEY (run_id, step_slug, task_index)"},
    "inbox": {"PRIMARY KEY (run_id, target_step, source_step, spread_index)"},
    "instance_waits": {"PRIMARY KEY (run_id, node_id)"},
    "notifications": {"PRIMARY KEY (id)"},
    "runs": {"PRIMARY KEY (id)"},
    "send_email_task_failed": {"PRIMARY KEY (send_email_task_id, attempt)"},
    "send_email_task_scheduled": {"PRIMARY KEY (send_email_task_id, attempt)"},
    "send_email_task_succeeded": {"PRIMARY KEY (send_email_task_id)"},
    "send_email_tasks": {"PRIMARY KEY (id)"},
    "side_effects": {"PRIMARY KEY (created_at, id)"},
    "step_executions": {"PRIMARY KEY (created_at, id)"},
    "step_receipts": {"PRIMARY KEY (run_id, idempotency_key)"},
    "step_states": {"PRIMARY KEY (run_id, step_slug)"},
    "task_errors": {"PRIMARY KEY (id)"},
    "tasks": {"PRIMARY KEY (id)", "UNIQUE (run_id, step_slug, task_index)"},
    "workflow_instances": {"PRIMARY KEY (id)"},
}


def _tables(conn) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        """SELECT c.relname, c.relrowsecurity, a.attnotnull
             FROM pg_class AS c
             LEFT JOIN pg_attribute AS a
               ON a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped
            WHERE c.relnamespace = 'charter'::regnamespace AND c.relkind IN ('r', 'p')
              AND NOT c.relispartition"""
    ).fetchall()
    return {name: {"rls": rls, "org_id": notnull} for name, rls, notnull in rows}


def _keys_without_org(conn) -> dict[str, set[str]]:
    """Primary keys, unique constraints and unique indexes of each table that do not
    include org_id (partitions' own copies left out)."""
    rows = conn.execute(
        """SELECT t.relname,
                  coalesce(pg_get_constraintdef(k.oid),
                           regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', ''))
             FROM pg_index AS i
             JOIN pg_class AS t ON t.oid = i.indrelid
             LEFT JOIN pg_constraint AS k ON k.conindid = i.indexrelid AND k.contype IN ('p', 'u')
            WHERE t.relnamespace = 'charter'::regnamespace AND i.indisunique
              AND NOT t.relispartition
              AND NOT EXISTS (SELECT 1 FROM pg_attribute AS a
                               WHERE a.attrelid = t.oid AND a.attname = 'org_id'
                                 AND a.attnum = ANY (i.indkey))"""
    ).fetchall()
    keys: dict[str, set[str]] = {}
    for table, key in rows:
        keys.setdefault(table, set()).add(key)
    return keys


def test_every_table_is_a_definition_coordinator_only_or_org_data_under_row_security(conn):
    tables = _tables(conn)
    assert set(tables) >= REFERENCE | COORDINATOR, "a table named here no longer exists"
    org_data = {name: t for name, t in tables.items() if name not in REFERENCE | COORDINATOR}
    without_org = sorted(name for name, t in org_data.items() if not t["org_id"])
    assert without_org == [], f"org data without a non-null org_id: {without_org}"
    without_rls = sorted(name for name, t in org_data.items() if not t["rls"])
    assert without_rls == [], f"org data without row-level security: {without_rls}"


def test_no_key_of_org_data_lacks_org_id_beyond_the_known_list(conn):
    keys = _keys_without_org(conn)
    org_keys = {t: k for t, k in keys.items() if t not in REFERENCE | COORDINATOR}
    new = {t: k - NOT_YET.get(t, set()) for t, k in org_keys.items()}
    new = {t: k for t, k in new.items() if k}
    assert new == {}, f"keys of org data without org_id (Citus cannot distribute them): {new}"
    fixed = {t: k - org_keys.get(t, set()) for t, k in NOT_YET.items()}
    fixed = {t: k for t, k in fixed.items() if k}
    assert fixed == {}, f"these keys include org_id now; take them off NOT_YET: {fixed}"
