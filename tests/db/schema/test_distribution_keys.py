"""The schema stays ready to be distributed by org (docs/architecture.md § 15): every table
is a definition (a reference table, replicated), coordinator-only, or org data carrying a
non-null `org_id` under row-level security. Citus needs `org_id` in every primary and
unique key of org data; this test fails when a key of org data lacks it."""

from typing import Any

from charter.db.citus import COORDINATOR_TABLES, REFERENCE_TABLES

# Definitions are reference tables; what is looked up before an org is known stays on the
# coordinator: the lists `charter citus distribute` places them by.
REFERENCE = set(REFERENCE_TABLES)
COORDINATOR = set(COORDINATOR_TABLES)

# Keys of org data without org_id: none is left (a run's key became (id, org_id) last). A
# key added without org_id fails the test below; list one here only with the reason.
NOT_YET: dict[str, set[str]] = {}


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


def test_foreign_keys_between_org_data_name_the_org(conn):
    """Citus keeps a foreign key between two distributed tables only when both sides
    include the distribution column; a key to a definition (a reference table) is fine."""
    rows = conn.execute(
        """SELECT k.conname, t.relname, r.relname,
                  EXISTS (SELECT 1 FROM pg_attribute AS a
                           WHERE a.attrelid = k.conrelid AND a.attname = 'org_id'
                             AND a.attnum = ANY (k.conkey)),
                  EXISTS (SELECT 1 FROM pg_attribute AS a
                           WHERE a.attrelid = k.confrelid AND a.attname = 'org_id'
                             AND a.attnum = ANY (k.confkey))
             FROM pg_constraint AS k
             JOIN pg_class AS t ON t.oid = k.conrelid
             JOIN pg_class AS r ON r.oid = k.confrelid
            WHERE k.contype = 'f' AND k.connamespace = 'charter'::regnamespace
              AND NOT t.relispartition"""
    ).fetchall()
    shared = REFERENCE | COORDINATOR
    between_org_data = [row for row in rows if row[1] not in shared and row[2] not in shared]
    assert between_org_data, "the email process's keys are between org data; the query lost them"
    without_org = sorted(
        name for name, _, _, ours, theirs in between_org_data if not (ours and theirs)
    )
    assert without_org == [], f"foreign keys between org data without org_id: {without_org}"
