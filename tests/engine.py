"""Driving the SQL engine directly, as a worker would, for tests of the state machine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from charter import Flow
from charter.db.sqlstate import charter_errors
from charter.ops.flows import ensure_flow_compiled


@dataclass
class Claimed:
    id: int
    run_id: str
    flow: str
    step: str
    index: int
    attempt: int
    token: Any
    key: str
    run_input: Any
    inputs: dict[str, Any] | None
    item: Any
    timeout: int
    resume: Any = None
    org: str = "default"


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
    """Claims tasks of every version of ``flows`` (a worker claims by version)."""
    rows = conn.execute(
        "SELECT * FROM charter.claim_tasks(%s, (SELECT coalesce(array_agg(v.id), '{}') "
        "FROM charter.workflow_versions AS v WHERE v.workflow_slug = ANY (%s)), %s, %s)",
        (worker, flows, limit, lease),
    ).fetchall()
    return [Claimed(*row) for row in rows]


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
