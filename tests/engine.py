"""Driving the SQL engine directly, as a worker would, for tests of the state machine."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from charter import Flow
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.ops.flows import ensure_flow_compiled
from charter.worker.task import Task, task_from_row


class Claimed(Task):
    """The worker's own Task, claimed by the worker's own statement, with its payload decoded
    for assertions (the worker decodes it the same way, per task)."""

    @property
    def run_input(self) -> Any:
        return self.decode()[0]

    @property
    def inputs(self) -> dict[str, Any]:
        return self.decode()[1]

    @property
    def item(self) -> Any:
        return self.decode()[2]

    @property
    def resume(self) -> Any:
        return self.decode()[3]


def install(conn: psycopg.Connection[Any], flow: Flow) -> None:
    assert ensure_flow_compiled(conn, flow, "production").status in ("compiled", "verified")


def start(conn, flow: str, run_input: Any, run_id: str | None = None) -> str:
    with charter_errors():
        row = conn.execute(
            "SELECT charter.start_run(%s, %s, %s)", (flow, Jsonb(run_input), run_id)
        ).fetchone()
    return row[0]["runId"]


def claim(
    conn, flows: list[str], limit: int = 100, lease: int = 30, worker: str = "test-worker"
) -> list[Claimed]:
    """Claims tasks of every version of ``flows`` (a worker claims by version), with the
    statement the worker sends (queries.sql's claim_tasks)."""
    versions = [
        version
        for (version,) in conn.execute(
            "SELECT id FROM charter.workflow_versions WHERE workflow_slug = ANY (%s)", (flows,)
        )
    ]
    params = {"worker_id": worker, "versions": versions, "limit": limit, "lease_seconds": lease}
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(query("claim_tasks"), params).fetchall()
    return [Claimed(**vars(task_from_row(row))) for row in rows]


def complete(conn, task: Claimed, output: Any, token: Any = None) -> str:
    with charter_errors():
        return conn.execute(
            "SELECT charter.complete_task(%s, %s, %s)",
            (task.id, token or task.token, Jsonb(output)),
        ).fetchone()[0]


def fail(conn, task: Claimed, message: str = "boom", permanent: bool = False) -> str:
    return conn.execute(
        "SELECT charter.fail_task(%s, %s, %s, %s)",
        (task.id, task.token, Jsonb({"type": "Test", "message": message}), permanent),
    ).fetchone()[0]


def handle(flow: Flow, task: Claimed) -> Any:
    """Run the task's real handler, as the worker would (without a context)."""
    step = flow.steps[task.step]
    if step.step_type == "map":
        return step.spec.output(step(**step.spec.bind_item(task.item)))
    return step.spec.output(
        step(**step.spec.bind(run_input=task.run_input, inputs=task.inputs or {}))
    )


def drain(conn, flow: Flow, *, limit: int = 100, check=None) -> int:
    """Claim and complete until nothing is left; ``check(conn)`` runs after every step."""
    done = 0
    while tasks := claim(conn, [flow.slug], limit):
        for task in tasks:
            assert complete(conn, task, handle(flow, task)) == "completed"
            done += 1
            if check is not None:
                check(conn)
    return done


def run_row(conn, run_id: str) -> dict[str, Any]:
    return conn.execute("SELECT charter.get_run(%s)", (run_id,)).fetchone()[0]


def projections(conn, run_id: str) -> tuple[Any, Any]:
    return conn.execute(
        "SELECT charter.run_projection(%s), charter.compute_run_projection(%s)", (run_id, run_id)
    ).fetchone()


def evidence(conn, run_id: str, step: str | None = None) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT step_slug, task_index, attempt, status, terminal FROM charter.step_executions "
        "WHERE run_id = %s AND (%s::text IS NULL OR step_slug = %s) ORDER BY id",
        (run_id, step, step),
    ).fetchall()
