"""A worker's claim of its own commits without waiting for its WAL flush (a claim lost in a
crash only puts its tasks back, as an expired lease does); a group's record, and a claim
that rides with it, stay durable."""

from psycopg.types.json import Jsonb

from charter import Flow
from charter.db.queries import query

from ..engine import install, start


def _flow() -> Flow:
    flow = Flow("unflushed")

    @flow.step()
    def first(run: int) -> int:
        return run

    @flow.step(depends_on=[first])
    def second(first: int) -> int:
        return first

    return flow


def _versions(conn) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT id FROM charter.workflow_versions WHERE workflow_slug = 'unflushed'"
        )
    ]


def test_a_claim_of_its_own_does_not_wait_for_its_flush_and_a_recorded_group_does(conn):
    install(conn, _flow())
    start(conn, "unflushed", 1)
    session = conn.execute("SHOW synchronous_commit").fetchone()[0]
    assert session != "off"
    claim = {"worker_id": "w", "versions": _versions(conn), "limit": 10, "lease_seconds": 30}
    with conn.transaction():
        [task] = conn.execute(query("claim_tasks"), claim).fetchall()
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
    # Only that transaction: the session's own setting is back.
    assert conn.execute("SHOW synchronous_commit").fetchone() == (session,)

    task_id, token, org = task[0], task[6], task[-1]
    with conn.transaction():
        claimed = conn.execute(
            query("record_outcomes_and_claim"),
            {
                "task_ids": [task_id],
                "tokens": [token],
                "outputs": [Jsonb(1)],
                "errors": [None],
                "permanent": [False],
                "worker_id": "w",
                "costs": [0],
                "directives": [None],
                "org_ids": [org],
                **claim,
            },
        ).fetchall()
        assert [row[3] for row in claimed] == ["second"]  # claimed with first's result
        assert conn.execute("SHOW synchronous_commit").fetchone() == (session,)
