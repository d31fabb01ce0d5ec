"""charter distributed on a real Citus cluster (CHARTER_TEST_DSN at a coordinator, as
scripts/citus-cluster.sh makes it): where each table went, and that each org's work lives
on the worker node that holds the org's shard group, through a restart of that node."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo
from psycopg.types.json import Jsonb

from charter.db.citus import COLOCATE_WITH, COORDINATOR_TABLES, REFERENCE_TABLES, is_distributed
from tests.db.runs.test_chain_runs import one_step
from tests.engine import claim, complete, install

pytestmark = pytest.mark.citus


@pytest.fixture
def cluster(conn) -> psycopg.Connection:
    if not is_distributed(conn):
        pytest.skip("needs CHARTER_TEST_DSN at a Citus coordinator (scripts/citus-cluster.sh)")
    return conn


def test_every_table_of_org_data_is_distributed_by_org_and_co_located(cluster):
    rows = cluster.execute(
        """SELECT c.relname, p.partmethod, a.attname, p.colocationid
             FROM pg_class AS c
             LEFT JOIN pg_dist_partition AS p ON p.logicalrelid = c.oid
             LEFT JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = (
                  SELECT (regexp_match(p.partkey::text, ':varattno (\\d+)'))[1]::smallint)
            WHERE c.relnamespace = 'charter'::regnamespace AND c.relkind IN ('r', 'p')
              AND NOT c.relispartition"""
    ).fetchall()
    placed = {name: (method, column, group) for name, method, column, group in rows}
    group = placed[COLOCATE_WITH][2]
    for name, (method, column, colocation) in placed.items():
        if name in REFERENCE_TABLES:
            assert method == "n", f"{name} is a reference table"
        elif name in COORDINATOR_TABLES:
            assert method is None, f"{name} stays on the coordinator"
        else:
            assert (method, column, colocation) == ("h", "org_id", group), name
    assert len([n for n in placed if n not in REFERENCE_TABLES + tuple(COORDINATOR_TABLES)]) > 30


def _node_of(conn: psycopg.Connection, org: str) -> tuple[str, int]:
    row = conn.execute(
        """SELECT n.nodename, n.nodeport FROM pg_dist_placement AS p
             JOIN pg_dist_node AS n ON n.groupid = p.groupid
            WHERE p.shardid = get_shard_id_for_distribution_column('charter.runs', %s::text)""",
        (org,),
    ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_two_orgs_work_lands_on_the_worker_node_that_holds_each(cluster, db_url):
    install(cluster, one_step("double"))
    orgs = [f"org-{n}" for n in range(12)]
    nodes = {org: _node_of(cluster, org) for org in orgs}
    assert len(set(nodes.values())) == 2, "twelve orgs spread over both workers"
    runs = {
        org: cluster.execute(
            "SELECT charter.start_run('double', %s, NULL, %s)->>'runId'", (Jsonb({"n": n}), org)
        ).fetchone()[0]
        for n, org in enumerate(orgs)
    }
    tasks = claim(cluster, ["double"])
    assert sorted(task.org for task in tasks) == sorted(orgs)
    for task in tasks:
        assert complete(cluster, task, {"doubled": True}) == "completed"
    for org, run_id in runs.items():
        run = cluster.execute("SELECT charter.get_run(%s, %s)", (run_id, org)).fetchone()[0]
        assert run["status"] == "completed"
        # The run's row is on its org's node, in that node's shard of runs, and not on the other.
        host, port = nodes[org]
        params = conninfo.conninfo_to_dict(db_url) | {"host": host, "port": str(port)}
        for other_host, other_port in set(nodes.values()):
            node_params = params | {"host": other_host, "port": str(other_port)}
            with psycopg.connect(conninfo.make_conninfo("", **node_params)) as node:
                node.execute("SET citus.override_table_visibility = off")
                shards = node.execute(
                    """SELECT c.relname FROM pg_class AS c
                        WHERE c.relnamespace = 'charter'::regnamespace
                          AND c.relname ~ '^runs_[0-9]+$'"""
                ).fetchall()
                found = sum(
                    node.execute(
                        f"SELECT count(*) FROM charter.{shard} WHERE id = %s AND org_id = %s",
                        (run_id, org),
                    ).fetchone()[0]
                    for (shard,) in shards
                )
                assert found == (1 if (other_host, other_port) == (host, port) else 0)


SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "citus-cluster.sh"


def test_a_worker_node_restart_loses_nothing(cluster, db_url):
    """Runs claimed before one worker node restarts are completed after it, each once; the
    runs of the orgs on the other node go on meanwhile."""
    install(cluster, one_step("double"))
    orgs = [f"org-{n}" for n in range(12)]
    nodes = {org: _node_of(cluster, org) for org in orgs}
    for n, org in enumerate(orgs):
        cluster.execute(
            "SELECT charter.start_run('double', %s, 'run-' || %s, %s)", (Jsonb({"n": n}), org, org)
        )
    tasks = claim(cluster, ["double"])
    assert len(tasks) == len(orgs)
    restarted = nodes[orgs[0]]
    node_name = f"worker{sorted(set(nodes.values())).index(restarted) + 1}"
    subprocess.run(["bash", str(SCRIPT), "restart", node_name], check=True, timeout=120)
    # The session's connections to the restarted node are gone: a new session, as a worker
    # reconnecting after an error would make.
    with psycopg.connect(db_url, autocommit=True) as conn:
        for task in tasks:
            assert complete(conn, task, {"doubled": True}) == "completed"
        rows = conn.execute(
            """SELECT r.org_id, r.status,
                      (SELECT count(*) FROM charter.step_executions AS e
                        WHERE e.run_id = r.id AND e.org_id = r.org_id)
                 FROM charter.runs AS r WHERE r.workflow_slug = 'double' ORDER BY r.org_id"""
        ).fetchall()
    assert rows == [(org, "completed", 1) for org in sorted(orgs)]
