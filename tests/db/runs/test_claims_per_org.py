"""A worker's claim takes one org's tasks at a time and goes round the orgs with queued work
(charter.claim_tasks, docs/architecture.md § 15): an org's backlog is served in turn with
every other org's, never ahead of them all, and no statement that locks tasks spans orgs."""

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter import Flow
from tests.engine import claim, install

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def one_step(slug: str) -> Flow:
    flow = Flow(slug)

    @flow.step()
    def work(run: dict[str, object]) -> object:
        return run

    return flow


def start_in(conn, org: str, flow: str, count: int) -> list[str]:
    return [
        conn.execute(
            "SELECT charter.start_run(%s, %s, NULL, %s)->>'runId'", (flow, Jsonb({"n": n}), org)
        ).fetchone()[0]
        for n in range(count)
    ]


def test_orgs_with_backlogs_take_turns_batch_by_batch(conn):
    install(conn, one_step("turns"))
    start_in(conn, "acme", "turns", 6)
    start_in(conn, "globex", "turns", 6)
    batches = [{t.org for t in claim(conn, ["turns"], limit=3)} for _ in range(4)]
    # Each batch is one org's, and the orgs alternate.
    assert all(len(orgs) == 1 for orgs in batches), batches
    order = [orgs.pop() for orgs in batches]
    assert order[0] != order[1] and order[0] == order[2] and order[1] == order[3], order
    assert claim(conn, ["turns"], limit=3) == []


def test_one_task_of_a_small_org_is_not_queued_behind_a_large_orgs_backlog(conn):
    install(conn, one_step("small_org"))
    start_in(conn, "large", "small_org", 50)
    conn.execute("UPDATE charter.tasks SET available_at = now() - interval '1 hour'")
    (small,) = start_in(conn, "small", "small_org", 1)
    # The large org's tasks are an hour older; by claim order alone the small org's one would
    # wait for all fifty. Going round the orgs, it is in one of the next two claims, and a
    # claim that took it fills up from the large org.
    claims = [[t.run_id for t in claim(conn, ["small_org"], limit=10)] for _ in range(2)]
    assert [small in batch for batch in claims].count(True) == 1, claims
    assert [len(batch) for batch in claims] == [10, 10]


def test_a_claim_goes_on_to_the_next_org_when_one_has_fewer_than_it_asks_for(conn):
    install(conn, one_step("fill_up"))
    few = set(start_in(conn, "few", "fill_up", 2))
    many = set(start_in(conn, "many", "fill_up", 5))
    claimed = claim(conn, ["fill_up"], limit=5)
    assert len(claimed) == 5
    assert {t.org for t in claimed} == {"few", "many"}
    rest = claim(conn, ["fill_up"], limit=5)
    assert {t.run_id for t in claimed + rest} == few | many


def test_an_org_whose_tasks_are_all_taken_or_not_yet_due_is_stepped_over(conn):
    install(conn, one_step("stepped_over"))
    start_in(conn, "busy", "stepped_over", 3)
    assert len(claim(conn, ["stepped_over"], limit=3)) == 3  # all running, leases held
    later = start_in(conn, "later", "stepped_over", 2)
    conn.execute(
        "UPDATE charter.tasks SET available_at = now() + interval '1 hour' WHERE run_id = ANY (%s)"
        " AND org_id = 'later'",
        (later,),
    )
    (ready,) = start_in(conn, "ready", "stepped_over", 1)
    assert [(t.org, t.run_id) for t in claim(conn, ["stepped_over"], limit=10)] == [
        ("ready", ready)
    ]


def test_a_claim_visits_at_most_100_orgs_and_the_next_one_goes_on_from_there(conn):
    """Among many orgs with nothing due, one claim stays short; the due task of the org
    beyond the first hundred is the next claim's."""
    install(conn, one_step("many_orgs"))
    for n in range(105):
        start_in(conn, f"o{n:03d}", "many_orgs", 1)
    conn.execute("UPDATE charter.tasks SET available_at = now() + interval '1 hour'")
    (due,) = start_in(conn, "zzz", "many_orgs", 1)
    assert claim(conn, ["many_orgs"], limit=500) == []
    assert [(t.org, t.run_id) for t in claim(conn, ["many_orgs"], limit=500)] == [("zzz", due)]


def test_a_worker_given_its_orgs_claims_theirs_in_turn_and_leaves_the_rest(conn):
    """charter.serve_orgs (set by a worker given --org) narrows every claim to those orgs,
    which take turns as any do, without the walk through the orgs that have work."""
    install(conn, one_step("served"))
    start_in(conn, "acme", "served", 3)
    others = start_in(conn, "globex", "served", 3)
    start_in(conn, "initech", "served", 3)
    conn.execute("SELECT set_config('charter.serve_orgs', %s, false)", ('["initech", "acme"]',))
    batches = [{t.org for t in claim(conn, ["served"], limit=3)} for _ in range(3)]
    assert batches == [{"acme"}, {"initech"}, set()]
    queued = conn.execute(
        "SELECT run_id FROM charter.tasks WHERE org_id = 'globex' AND status = 'queued'"
    ).fetchall()
    assert sorted(run for (run,) in queued) == sorted(others)
    conn.execute("SELECT set_config('charter.serve_orgs', '', false)")  # every org again
    assert {t.org for t in claim(conn, ["served"], limit=10)} == {"globex"}


def test_the_walk_goes_not_much_further_than_the_claims_limit(conn):
    """With 150 orgs with work, a claim of one task asks after 32 orgs at most (one may give
    nothing: its tasks all running), not after a hundred."""
    install(conn, one_step("lazy_walk"))
    for n in range(150):
        start_in(conn, f"w{n:03d}", "lazy_walk", 1)
    with conn.transaction():
        conn.execute("SET LOCAL track_functions = 'all'")
        assert len(claim(conn, ["lazy_walk"], limit=1)) == 1
        (probes,) = conn.execute(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions"
            " WHERE schemaname = 'charter' AND funcname = '_next_org_with_work'"
        ).fetchone()
    assert 1 <= probes <= 32, probes


def test_an_empty_org_id_is_refused_when_a_run_starts(conn):
    """No claim would ever reach it: the walk goes round the orgs from after ''."""
    install(conn, one_step("no_empty_org"))
    for call in (
        "SELECT charter.start_run('no_empty_org', '{}', NULL, '')",
        "SELECT charter.start_runs('no_empty_org', '[{}]', NULL, '')",
    ):
        with pytest.raises(psycopg.Error, match="An org id of 1 to 200 characters is needed"):
            conn.execute(call)
    assert conn.execute("SELECT count(*) FROM charter.runs").fetchone() == (0,)
