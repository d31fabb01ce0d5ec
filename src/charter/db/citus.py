"""Distributing charter on a Citus cluster: ``charter citus distribute`` after ``migrate``.

Every table of org data is distributed by ``org_id`` and co-located with the others, so
each org's runs, documents and evidence live in one shard group on one node and every
transaction charter writes for an org stays on that node. Definitions are reference tables
(replicated to every node); what is looked up before an org is known stays on the
coordinator. The engine's per-org functions are delegated to the node that holds the org.
docs/architecture.md §15 says why each object is where it is.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from charter.db.migrate import load_files
from charter.errors import CitusError

log = logging.getLogger("charter.citus")

# Definitions, read everywhere and written rarely: Citus reference tables, made in this
# order (workflows and workflow_versions name each other; workflows' key to its versions
# takes no action, which Citus allows towards a table not replicated yet).
REFERENCE_TABLES = (
    "workflows",
    "workflow_versions",
    "flow_steps",
    "flow_step_deps",
    "flow_version_facts",
    "workflow_version_parents",
    "schema_migrations",
)
# Looked up before an org is known (a worker's heartbeat, an API key's hash, the test
# clock of a development database): kept on the coordinator.
COORDINATOR_TABLES = frozenset({"workers", "api_keys", "test_clock"})
# Functions run on the node that holds their org: (signature, the argument naming the org).
DELEGATED: tuple[tuple[str, str], ...] = ()
# The table the others are co-located with (any org table would do; runs is the oldest).
COLOCATE_WITH = "runs"


@dataclass
class Distribution:
    """What ``distribute`` did (and, run again, found already done)."""

    reference: list[str] = field(default_factory=list)
    distributed: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    ported: list[str] = field(default_factory=list)
    coordinator_functions: list[str] = field(default_factory=list)
    recreated: list[str] = field(default_factory=list)
    custom_plans: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)


def delegated_functions() -> list[tuple[str, str]]:
    """The functions delegated to the node holding the org: ``(signature, org argument)``.
    None yet: the engine's entry points are delegated once they run on a cluster (see
    docs/architecture.md §15, where charter stands on Citus)."""
    return list(DELEGATED)


def is_citus(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'").fetchone()
    return row is not None


def is_distributed(conn: psycopg.Connection) -> bool:
    """Whether charter's tables are distributed here (``charter citus distribute`` ran)."""
    if not is_citus(conn):
        return False
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_dist_partition "
        "WHERE logicalrelid = 'charter.runs'::regclass)"
    ).fetchone()
    return bool(row and row[0])


def _tables_in_dependency_order(conn: psycopg.Connection, placed: tuple[str, ...]) -> list[str]:
    """charter's tables but ``placed`` (partitions left out), each after the tables its
    foreign keys name."""
    rows = conn.execute(
        """SELECT c.relname,
                  coalesce(array_agg(f.relname) FILTER (WHERE f.relname <> c.relname), '{}')
             FROM pg_class AS c
             LEFT JOIN pg_constraint AS k ON k.conrelid = c.oid AND k.contype = 'f'
             LEFT JOIN pg_class AS f ON f.oid = k.confrelid
            WHERE c.relnamespace = 'charter'::regnamespace AND c.relkind IN ('r', 'p')
              AND NOT c.relispartition
            GROUP BY c.relname ORDER BY c.relname"""
    ).fetchall()
    needs = {name: set(refs) for name, refs in rows}
    ordered: list[str] = []
    needs = {name: refs - set(placed) for name, refs in needs.items() if name not in placed}
    while needs:
        ready = sorted(n for n, refs in needs.items() if not refs - set(ordered) - {n})
        if not ready:
            raise CitusError(
                f"The foreign keys of {sorted(needs)} form a cycle: Citus "
                "cannot distribute them in any order."
            )
        for name in ready:
            ordered.append(name)
            del needs[name]
    return ordered


def _placed(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        """SELECT c.relname FROM pg_dist_partition AS p JOIN pg_class AS c ON c.oid = p.logicalrelid
            WHERE c.relnamespace = 'charter'::regnamespace"""
    ).fetchall()
    return {name for (name,) in rows}


_SHARD_TYPED = """
SELECT DISTINCT p.oid::regprocedure::text
  FROM pg_proc AS p
  JOIN pg_type AS t ON t.oid = ANY (p.proargtypes::oid[] || p.prorettype)
  JOIN pg_class AS c ON c.oid = t.typrelid
 WHERE p.pronamespace = 'charter'::regnamespace
   AND c.relnamespace = 'charter'::regnamespace
   AND c.relname ~ '_[0-9]+$'
   AND NOT EXISTS (SELECT 1 FROM pg_dist_partition AS d WHERE d.logicalrelid = c.oid)
"""


def _recreate_shard_typed_functions(conn: psycopg.Connection) -> list[str]:
    """Making a table on the coordinator a reference table turns the table into its local
    shard and puts a new table in its place, so a function of the table's row type is left
    holding the shard's: drop those and create them again from their files (with grants)."""
    conn.execute("SET LOCAL citus.override_table_visibility = off")  # shards show as tables
    stale = [name for (name,) in conn.execute(_SHARD_TYPED).fetchall()]
    conn.execute("RESET citus.override_table_visibility")
    if not stale:
        return []
    # Created on the coordinator only; distribute places them on every node afterwards.
    conn.execute("SET LOCAL citus.enable_ddl_propagation = off")
    for signature in stale:
        conn.execute(sql.SQL("DROP FUNCTION {}").format(sql.SQL(signature)))
    for file in load_files():
        if file.name.startswith(("functions/", "grants/")):
            conn.execute(file.sql)
    conn.execute("RESET citus.enable_ddl_propagation")
    return stale


_GENERIC_PLANS = """
SELECT p.oid::regprocedure::text FROM pg_proc AS p
 WHERE p.pronamespace = 'charter'::regnamespace
   AND 'plan_cache_mode=force_generic_plan' = ANY (p.proconfig)
 ORDER BY 1
"""


def _plan_each_call(conn: psycopg.Connection) -> list[str]:
    """On one server the hot functions keep one generic plan per session (making a custom
    plan for each call's ids cost more than running it). Citus cannot route a generic plan
    whose distribution column is a parameter (an INSERT ... SELECT "could not create
    distributed plan"): on a cluster they plan each call, as Citus caches its own plans."""
    functions = [name for (name,) in conn.execute(_GENERIC_PLANS).fetchall()]
    for signature in functions:
        conn.execute(sql.SQL("ALTER FUNCTION {} RESET plan_cache_mode").format(sql.SQL(signature)))
    return functions


NESTED_EXECUTION = "citus.allow_nested_distributed_execution"


def allow_nested_execution(conn: psycopg.Connection) -> None:
    """Lets a function called in a query that runs on a shard read tables itself (Citus
    refuses by default, since such a read may go to another node outside the query's
    transaction). charter's are safe: each reads a reference table (a copy on every node)
    or its own org's rows, which are co-located with the shard the query runs on, so the
    read is local. Set on the database on every node (Citus does not propagate it)."""
    statement = sql.SQL("ALTER DATABASE {} SET {} = on").format(
        sql.Identifier(conn.info.dbname), sql.SQL(NESTED_EXECUTION)
    )
    conn.execute(statement)
    conn.execute("SELECT * FROM run_command_on_workers(%s)", (statement.as_string(conn),))


def _functions(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        """SELECT p.oid::regprocedure::text FROM pg_proc AS p
            WHERE p.pronamespace = 'charter'::regnamespace AND p.prokind = 'f'
            ORDER BY 1"""
    ).fetchall()
    return [name for (name,) in rows]


def _distributed_functions(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT objid::regprocedure::text FROM pg_dist_object WHERE classid = 'pg_proc'::regclass"
    ).fetchall()
    return {name for (name,) in rows}


def _delegated(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        """SELECT objid::regprocedure::text FROM pg_dist_object
            WHERE classid = 'pg_proc'::regclass AND distribution_argument_index IS NOT NULL"""
    ).fetchall()
    return {name for (name,) in rows}


def distribute(conn: psycopg.Connection, *, shard_count: int | None = None) -> Distribution:
    """Makes a migrated charter schema distributed; run again, it does only what is left.
    Needs the schema's owner on the coordinator of a cluster whose workers are added."""
    if conn.execute("SELECT to_regnamespace('charter')").fetchone() == (None,):
        raise CitusError(
            "This database has no charter schema yet: run `charter migrate`, then "
            "`charter citus distribute` again."
        )
    if not is_citus(conn):
        raise CitusError(
            "This database has no citus extension: run `CREATE EXTENSION citus` on the "
            "coordinator and every worker, add the workers (citus_add_node), then run "
            "`charter citus distribute` again."
        )
    workers = conn.execute("SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary' "
                           "AND groupid <> 0").fetchone()  # fmt: skip
    if not workers or not workers[0]:
        raise CitusError(
            "The cluster has no worker nodes: add them on the coordinator with "
            "SELECT citus_add_node('host', port), then run `charter citus distribute` again."
        )
    done = Distribution()
    placed = _placed(conn)
    # SQL-standard bodies (BEGIN ATOMIC) depend on the columns they read, which Citus takes
    # for a circular dependency when it converts their tables: port them first.
    ported = set(port_sql_functions(conn))
    # Triggers on distributed tables run on the shards; charter's only keep org rows in step.
    conn.execute("SET LOCAL citus.enable_unsafe_triggers = on")
    conn.execute("SET LOCAL citus.multi_shard_modify_mode = 'sequential'")
    if shard_count is not None:
        conn.execute(sql.SQL("SET LOCAL citus.shard_count = {}").format(sql.Literal(shard_count)))
    # Reference tables first (org data points at them), then the table the rest co-locate
    # with, then the rest, each after the tables its foreign keys name.
    org_tables = [t for t in _tables_in_dependency_order(conn, REFERENCE_TABLES)
                  if t not in COORDINATOR_TABLES]  # fmt: skip
    org_tables.sort(key=lambda t: t != COLOCATE_WITH)
    for table in [*REFERENCE_TABLES, *org_tables]:
        if table in placed:
            done.already.append(table)
        elif table in REFERENCE_TABLES:
            conn.execute(sql.SQL("SELECT create_reference_table({})").format(
                sql.Literal(f"charter.{table}")))  # fmt: skip
            done.reference.append(table)
        else:
            colocate = "none" if table == COLOCATE_WITH else f"charter.{COLOCATE_WITH}"
            conn.execute(
                sql.SQL(
                    "SELECT create_distributed_table({}, 'org_id', colocate_with => {})"
                ).format(sql.Literal(f"charter.{table}"), sql.Literal(colocate))
            )
            done.distributed.append(table)
    done.recreated = _recreate_shard_typed_functions(conn)
    done.ported = sorted(ported | set(port_sql_functions(conn)))
    done.custom_plans = _plan_each_call(conn)
    allow_nested_execution(conn)
    delegated = _delegated(conn)
    distributed = _distributed_functions(conn)
    by_org = dict(delegated_functions())
    # Every function exists on every node (a query pushed to a shard calls them there);
    # the per-org entry points run on the node that holds their org.
    for signature in _functions(conn):
        argument = by_org.get(signature)
        if signature in delegated or (argument is None and signature in distributed):
            continue
        if argument is None:
            try:
                with conn.transaction():
                    conn.execute("SELECT create_distributed_function(%s)", (signature,))
            except psycopg.errors.FeatureNotSupported as error:
                # A function of a table's row type (Citus cannot place it before its
                # table's shards): it runs where it is called, on the coordinator.
                done.coordinator_functions.append(f"{signature}: {error.diag.message_primary}")
        else:
            conn.execute(
                "SELECT create_distributed_function(%s, %s, colocate_with => %s)",
                (signature, argument, f"charter.{COLOCATE_WITH}"),
            )
            done.functions.append(signature)
    return done


# -- SQL-language functions on Citus ----------------------------------------------------------
#
# Citus cannot plan a statement of a SQL-language function that reads a distributed or
# reference table with the function's parameters in it ("could not create distributed
# plan"); PL/pgSQL hands it the values. On one server those functions stay SQL, so the
# planner can inline them; on a cluster ``distribute`` (and ``migrate`` after it) re-creates
# each one in PL/pgSQL (an inlined one too: Citus plans
# the statement it was inlined into no better) with the same body, signature and attributes.
# ``#variable_conflict use_column`` keeps SQL's rule that a column wins over a parameter.

_PORTABLE = """
SELECT p.oid::regprocedure::text AS signature, p.proname, pg_get_function_arguments(p.oid),
       pg_get_function_result(p.oid), p.proretset, p.provolatile, p.proisstrict, p.prosecdef,
       p.proconfig, p.prorettype = 'void'::regtype AS returns_void,
       CASE WHEN p.prosqlbody IS NULL THEN p.prosrc ELSE pg_get_functiondef(p.oid) END AS body,
       p.prosqlbody IS NOT NULL AS atomic
  FROM pg_proc AS p
 WHERE p.pronamespace = 'charter'::regnamespace
   AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql')
"""


def split_statements(body: str) -> list[str]:
    """The top-level statements of a SQL body, comments dropped; semicolons inside quotes,
    dollar quotes, comments and parentheses do not split."""
    statements, current, depth, i = [], [], 0, 0
    while i < len(body):
        char = body[i]
        if body.startswith("--", i):
            end = body.find("\n", i)
            i = len(body) if end < 0 else end
            continue
        if body.startswith("/*", i):
            end = body.find("*/", i + 2)
            i = len(body) if end < 0 else end + 2
            continue
        if char in "'\"":
            end = i + 1
            while end < len(body):
                if body[end] == char and body[end + 1 : end + 2] == char:
                    end += 2
                elif body[end] == char:
                    break
                else:
                    end += 1
            current.append(body[i : end + 1])
            i = end + 1
            continue
        if char == "$":
            tag_end = body.find("$", i + 1)
            tag = body[i : tag_end + 1] if tag_end > 0 else ""
            if tag and (tag == "$$" or tag[1:-1].replace("_", "a").isalnum()):
                close = body.find(tag, tag_end + 1)
                close = len(body) if close < 0 else close + len(tag)
                current.append(body[i:close])
                i = close
                continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == ";" and depth == 0:
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        i += 1
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def _atomic_body(definition: str) -> str:
    """The statements of a SQL-standard body, as pg_get_functiondef writes it: ``RETURN
    expression`` or ``BEGIN ATOMIC ... END``."""
    if "\nBEGIN ATOMIC" in definition:
        start = definition.index("\nBEGIN ATOMIC") + len("\nBEGIN ATOMIC")
        return definition[start : definition.rstrip().rstrip(";").rindex("END")]
    return "SELECT " + definition[definition.index("\nRETURN ") + len("\nRETURN ") :]


def plpgsql_body(statements: list[str], *, returns_set: bool, returns_void: bool) -> str:
    """The PL/pgSQL body that runs ``statements`` as the SQL function did: each statement in
    turn, the last one's rows (or its value) returned."""
    lines = []
    for position, statement in enumerate(statements):
        last = position == len(statements) - 1
        is_select = statement.split(None, 1)[0].upper() == "SELECT"
        if last and returns_set:
            lines.append(f"RETURN QUERY {statement};")
        elif last and not returns_void:
            modifies = any(
                f" {verb} " in statement.upper() for verb in ("INSERT", "UPDATE", "DELETE")
            )
            if is_select or (statement.upper().startswith("WITH") and not modifies):
                lines.append(f"RETURN ({statement});")
            else:
                lines.append(f"{statement} INTO result;")
                lines.append("RETURN result;")
        elif is_select:
            lines.append(f"PERFORM {statement.split(None, 1)[1]};")
        else:
            lines.append(f"{statement};")
    return "\n".join(lines)


def port_sql_functions(conn: psycopg.Connection) -> list[str]:
    """Re-creates charter's SQL-language functions that may read tables in PL/pgSQL (see
    above); returns their signatures."""
    ported = []
    for row in conn.execute(_PORTABLE).fetchall():
        (signature, name, arguments, result, returns_set, volatility, strict, definer,
         config, returns_void, body, atomic) = row  # fmt: skip
        statements = split_statements(_atomic_body(body) if atomic else body)
        code = plpgsql_body(statements, returns_set=returns_set, returns_void=returns_void)
        declare = "" if returns_set or returns_void else f"DECLARE result {result};\n"
        attributes = [{"i": "IMMUTABLE", "s": "STABLE", "v": "VOLATILE"}[volatility]]
        if strict:
            attributes.append("STRICT")
        if definer:
            attributes.append("SECURITY DEFINER")
        for setting in config or []:
            key, value = setting.split("=", 1)
            # proconfig writes an empty search_path as "" (an identifier); SET takes ''.
            attributes.append(f"SET {key} = " + ("''" if value == '""' else value))
        conn.execute(
            f"CREATE OR REPLACE FUNCTION charter.{name}({arguments}) RETURNS {result} "
            f"LANGUAGE plpgsql {' '.join(attributes)} AS $citus_port$\n"
            f"#variable_conflict use_column\n{declare}BEGIN\n{code}\nEND\n$citus_port$"
        )
        ported.append(signature)
    return ported
