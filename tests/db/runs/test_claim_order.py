"""The claim's order and limits in SQL: priorities age (nothing starves), a key at its
concurrency limit is passed over without blocking the tasks behind it."""

import pytest

from charter import Flow
from tests.engine import claim, complete, install

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def one_step(slug: str, **step_options: object) -> Flow:
    flow = Flow(slug)

    @flow.step(**step_options)  # type: ignore[untyped-decorator]
    def work(run: dict[str, object]) -> object:
        return run

    return flow


def start(conn, flow: str, run_input: object, priority: int | None = None) -> str:
    from psycopg.types.json import Jsonb

    return conn.execute(
        "SELECT charter.start_run(%s, %s, NULL, 'default', NULL, %s)->>'runId'",
        (flow, Jsonb(run_input), priority),
    ).fetchone()[0]


def ready_minutes_ago(conn, run_id: str, minutes: int) -> None:
    conn.execute(
        "UPDATE charter.tasks SET available_at = now() - make_interval(mins => %s) "
        "WHERE run_id = %s",
        (minutes, run_id),
    )


def test_a_higher_priority_goes_first_but_a_lower_one_waits_at_most_the_gap(conn):
    install(conn, one_step("ranked_sql"))
    old_low = start(conn, "ranked_sql", {"n": "old low"})
    new_high = start(conn, "ranked_sql", {"n": "new high"}, priority=10)
    ready_minutes_ago(conn, old_low, 5)
    # Ready 5 minutes ago at priority 0 counts as later than now at priority 10 (10 min).
    assert [t.run_id for t in claim(conn, ["ranked_sql"], limit=1)] == [new_high]

    older_low = start(conn, "ranked_sql", {"n": "older low"})
    newer_high = start(conn, "ranked_sql", {"n": "newer high"}, priority=10)
    ready_minutes_ago(conn, older_low, 11)
    # Waiting longer than the gap, the low one goes first: it cannot starve.
    assert [t.run_id for t in claim(conn, ["ranked_sql"], limit=1)] == [older_low]
    assert sorted(t.run_id for t in claim(conn, ["ranked_sql"], limit=5)) == sorted(
        [newer_high, old_low]
    )


def test_a_step_default_priority_and_a_start_priority_override_it(conn):
    install(conn, one_step("ranked_default", priority=5))
    default = start(conn, "ranked_default", {"n": 1})
    given = start(conn, "ranked_default", {"n": 2}, priority=0)
    priorities = dict(
        conn.execute(
            "SELECT run_id, priority FROM charter.tasks WHERE run_id IN (%s, %s)", (default, given)
        ).fetchall()
    )
    assert priorities == {default: 5, given: 0}


def test_a_key_at_its_limit_is_passed_over_and_frees_when_a_task_finishes(conn):
    install(conn, one_step("keyed_sql", concurrency={"key": "run.customer", "limit": 1}))
    first_a = start(conn, "keyed_sql", {"customer": "a"})
    second_a = start(conn, "keyed_sql", {"customer": "a"})
    only_b = start(conn, "keyed_sql", {"customer": "b"})
    claimed = claim(conn, ["keyed_sql"], limit=10)
    assert sorted(t.run_id for t in claimed) == sorted([first_a, only_b])
    assert claim(conn, ["keyed_sql"], limit=10) == []  # a is full; b has nothing left
    waiting = conn.execute(
        "SELECT charter.get_run(%s)->'steps'->0->'waitingFor'", (second_a,)
    ).fetchone()[0]
    assert waiting == {
        "kind": "concurrency",
        "key": "default/keyed_sql.work:a",
        "running": 1,
        "limit": 1,
    }
    first = next(t for t in claimed if t.run_id == first_a)
    assert complete(conn, first, {"done": True}) == "completed"
    assert [t.run_id for t in claim(conn, ["keyed_sql"], limit=10)] == [second_a]


def test_priority_out_of_range_is_refused_with_the_rule(conn):
    import pytest

    from charter.db.sqlstate import charter_errors
    from charter.errors import CharterError

    install(conn, one_step("ranked_bad"))
    with pytest.raises(CharterError) as caught, charter_errors():
        start(conn, "ranked_bad", {}, priority=5000)
    assert "from 0 to 1000" in caught.value.message


def rate_limited(slug: str, step: str, per_second: int) -> Flow:
    flow = Flow(slug)

    def work(run: dict[str, object]) -> object:
        return run

    work.__name__ = work.__qualname__ = step
    flow.step(rate_limit={"key": "partner", "per_second": per_second})(work)
    return flow


def test_a_rate_key_shared_by_two_flows_is_one_bucket_at_the_strictest_rate(conn):
    # Every pairing of flow and step name, so that whichever flow's version id sorts first,
    # the group's lowest version id and lowest step name belong to different flows.
    flows = [("shared_rate_a", "zulu"), ("shared_rate_b", "alpha")]
    for (slug, step), per_second in zip(flows, (2, 1), strict=True):
        install(conn, rate_limited(slug, step, per_second))
    slugs = [slug for slug, _ in flows]
    runs = [start(conn, slug, {"n": n}) for n in range(3) for slug in slugs]
    claimed = claim(conn, slugs, limit=10)
    # Burst defaults to ceil(perSecond): the strictest step (1/s) makes it 1, for both flows.
    assert len(claimed) == 1
    waits = conn.execute(
        "SELECT extract(epoch FROM available_at - now()) FROM charter.tasks "
        "WHERE run_id = ANY (%s) AND status = 'queued' ORDER BY available_at",
        (runs,),
    ).fetchall()
    # The other five wait for their tokens, one a second: the n-th for about n seconds.
    assert [round(w[0]) for w in waits] == [1, 2, 3, 4, 5]
    assert conn.execute(
        "SELECT count(*) FROM charter.rate_buckets WHERE bucket_key = 'partner'"
    ).fetchone() == (1,)
