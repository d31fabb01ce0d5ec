"""Seed 003's queue in charter: tasks, the SECURITY INVOKER function runner, supervisors over
append-only facts, and the email example run end to end by a worker whose login role is only
a member of charter_worker."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.errors import SideEffectInvalidError

from ..workers import running_worker


def _until(check: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_email_example_runs_end_to_end_under_the_worker_role(db_url, login, mail, sql):
    worker_url, app_url = login("charter_worker"), login("charter_app")
    # Attempt 1 fails at the provider; the supervisor schedules attempt 2, which succeeds.
    mail.script["ana@example.com"] = ["451 4.7.1 greylisted, come back later", "250 OK"]
    with Client(app_url, org_id="acme", migrate=False) as app:
        send_id = app.tasks.send_email(
            "ana@example.com", "Welcome", "Hello Ana.", recheck_after=timedelta(milliseconds=200)
        )
        with running_worker(worker_url, poll_interval=0.05):
            status = _until(lambda: app.tasks.email_status(send_id).state == "succeeded"
                            and app.tasks.email_status(send_id))  # fmt: skip
            # The supervisor stops at the success fact: nothing of this send stays queued.
            _until(lambda: sql("SELECT count(*) FROM charter.side_effects WHERE kind = 'task'"
                               " AND status <> 'completed'") == [(0,)])  # fmt: skip
    assert [s["attempt"] for s in status.scheduled] == [1, 2]
    [failure] = status.failures
    assert failure["attempt"] == 1 and "451" in failure["error"]
    assert status.succeeded["attempt"] == 2
    [message] = mail.to("ana@example.com")
    assert (message["subject"], message["body"]) == ("Welcome", "Hello Ana.")
    assert message["key"] == f"send_email_task:{send_id}"
    # The worker recorded the provider's refusal (seed 003 queues.error).
    [(stage, error)] = sql("SELECT stage, error FROM charter.task_errors")
    assert stage == "send" and "451" in error
    # Supervisor runs: kickoff, after the first attempt, after the second, the terminal one
    # (at least; each re-enqueues itself until a terminal fact).
    [(runs,)] = sql(
        "SELECT count(*) FROM charter.side_effects WHERE kind = 'task'"
        " AND request->>'db_function' = 'charter.send_email_supervisor'"
    )
    assert runs >= 3
    [(last,)] = sql(
        "SELECT response->'result'->'payload'->>'state' FROM charter.side_effects"
        " WHERE request->>'db_function' = 'charter.send_email_supervisor'"
        " ORDER BY id DESC LIMIT 1"
    )
    assert last == "succeeded"


def test_the_worker_role_may_run_the_queue_but_never_enqueue(db_url, login):
    worker_url = login("charter_worker")
    with psycopg.connect(db_url, autocommit=True) as owner:
        owner.execute(
            "CREATE FUNCTION public.charter_test_private(p jsonb) RETURNS jsonb LANGUAGE sql"
            " AS $$ SELECT '{\"success\": true}'::jsonb $$"
        )
        owner.execute("REVOKE ALL ON FUNCTION public.charter_test_private FROM PUBLIC")
    with psycopg.connect(worker_url, autocommit=True) as conn:
        assert conn.execute("SELECT charter.dequeue_next_available_task('w-1')").fetchone() == (
            None,
        )
        for call in (
            "SELECT charter.enqueue_task('acme', 'db_function', '{\"db_function\": \"x.y\"}')",
            "SELECT charter.send_email('acme', 'a@example.com', 's', 'b')",
            "SELECT charter.kickoff_send_email_task(1)",
            "SELECT count(*) FROM charter.side_effects",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(call)
        # The runner runs as its caller: a function the worker has no grant for is refused.
        [(result,)] = conn.execute(
            "SELECT charter.run_function('public.charter_test_private', '{}')"
        ).fetchall()
        assert result["success"] is False
        assert "may not execute" in result["validation_failure_message"]


def test_the_runner_is_security_invoker_and_the_handlers_definer(conn):
    rows = dict(
        conn.execute(
            """SELECT p.proname, p.prosecdef FROM pg_proc AS p
                 JOIN pg_namespace AS n ON n.oid = p.pronamespace
                WHERE n.nspname = 'charter' AND p.proname IN ('run_function',
                      'send_email_supervisor', 'get_email_payload', 'record_email_success',
                      'record_email_failure')"""
        ).fetchall()
    )
    assert rows.pop("run_function") is False
    assert rows and all(rows.values())


def test_a_validation_failure_is_recorded_once_and_never_retried(acme, engine, sql):
    task = acme.tasks.enqueue("db_function", {"db_function": "charter.no_such_function"})
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("completed",)])  # fmt: skip
    [(attempts, response)] = sql(
        "SELECT attempts, response FROM charter.side_effects WHERE id = %s", task
    )
    assert attempts == 1 and response["ok"] is False
    [(stage, error, context)] = sql(
        "SELECT stage, error, context FROM charter.task_errors WHERE task_id = %s", task
    )
    assert stage == "db_function" and "no function charter.no_such_function(jsonb)" in error
    assert context["kind"] == "validation"


def test_a_function_that_raises_is_rolled_back_and_reported_as_an_error(acme, engine, sql):
    sql(
        """CREATE FUNCTION public.charter_test_boom(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
           BEGIN
               INSERT INTO charter.task_errors (org_id, stage, error) VALUES ('acme', 'x', 'kept?');
               RAISE EXCEPTION 'boom %%', p->>'n';
           END $$"""
    )
    task = acme.tasks.enqueue("db_function", {"db_function": "public.charter_test_boom", "n": 7})
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("completed",)])  # fmt: skip
    [(stage, error, context)] = sql(
        "SELECT stage, error, context FROM charter.task_errors WHERE task_id = %s", task
    )
    assert (stage, context["kind"]) == ("db_function", "error") and "boom 7" in error
    assert sql("SELECT count(*) FROM charter.task_errors WHERE error = 'kept?'") == [(0,)]


def test_a_scheduled_task_waits_for_its_time(acme, engine, sql):
    from datetime import UTC, datetime

    later = datetime.now(UTC) + timedelta(seconds=1.5)
    task = acme.tasks.enqueue("db_function", {"db_function": "charter.nothing"}, at=later)
    time.sleep(0.5)
    assert sql("SELECT status FROM charter.side_effects WHERE id = %s", task) == [("pending",)]
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("completed",)])  # fmt: skip
    [(dequeued,)] = sql("SELECT dequeued_at FROM charter.side_effects WHERE id = %s", task)
    assert dequeued >= later


@pytest.mark.parametrize(
    ("task_type", "payload", "words"),
    [
        ("cron", {}, "Unknown task type"),
        ("db_function", {"id": 1}, 'name its function in "db_function"'),
        ("email", {"send_email_task_id": 1}, "before_handler"),
        ("db_function", [1, 2], "JSON object"),
    ],
)
def test_a_malformed_task_is_refused_with_what_to_fix(acme, task_type, payload, words):
    with pytest.raises(SideEffectInvalidError, match=words):
        acme.tasks.enqueue(task_type, payload)


def test_send_email_refuses_what_it_cannot_send(acme):
    with pytest.raises(SideEffectInvalidError, match="not an email address"):
        acme.tasks.send_email("ana at example", "s", "b")
    with pytest.raises(SideEffectInvalidError, match="max_attempts"):
        acme.tasks.send_email("ana@example.com", "s", "b", max_attempts=0)
