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
from tests.workers import running_worker


def datetime_in(seconds: float) -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC) + timedelta(seconds=seconds)


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
    # The supervisor refuses a send that does not exist (a validation failure).
    task = acme.tasks.enqueue(
        "db_function", {"db_function": "charter.send_email_supervisor", "send_email_task_id": 999}
    )
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("completed",)])  # fmt: skip
    [(attempts, response)] = sql(
        "SELECT attempts, response FROM charter.side_effects WHERE id = %s", task
    )
    assert attempts == 1 and response["ok"] is False
    [(stage, error, context)] = sql(
        "SELECT stage, error, context FROM charter.task_errors WHERE task_id = %s", task
    )
    assert (stage, error, context["kind"]) == (
        "db_function",
        "no send_email_task 999",
        "validation",
    )


def test_a_function_that_raises_is_rolled_back_and_retried_then_dead(acme, engine, sql):
    sql(
        """CREATE FUNCTION public.charter_test_boom(p jsonb) RETURNS jsonb LANGUAGE plpgsql
           SECURITY DEFINER SET search_path = '' AS $$
           BEGIN
               INSERT INTO charter.task_errors (org_id, stage, error) VALUES ('acme', 'x', 'kept?');
               RAISE EXCEPTION 'boom %%', p->>'n';
           END $$"""
    )
    sql("GRANT EXECUTE ON FUNCTION public.charter_test_boom(jsonb) TO charter_worker")
    task = acme.tasks.enqueue("db_function", {"db_function": "public.charter_test_boom", "n": 7})
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("dead_letter",)])  # fmt: skip
    errors = sql("SELECT stage, error, context FROM charter.task_errors WHERE task_id = %s", task)
    assert len(errors) == 3  # an operational error is tried again, three attempts in all
    assert all(stage == "db_function" and "boom 7" in error and context["kind"] == "error"
               for stage, error, context in errors)  # fmt: skip
    assert sql("SELECT count(*) FROM charter.task_errors WHERE error = 'kept?'") == [(0,)]
    assert acme.dead_letters.list() == []  # a task's dead letter is its supervisor's business


def test_a_scheduled_task_waits_for_its_time(acme, engine, sql):
    from datetime import UTC, datetime

    later = datetime.now(UTC) + timedelta(seconds=1.5)
    task = acme.tasks.enqueue(
        "db_function",
        {"db_function": "charter.send_email_supervisor", "send_email_task_id": 0},
        at=later,
    )
    time.sleep(0.5)
    assert sql("SELECT status FROM charter.side_effects WHERE id = %s", task) == [("pending",)]
    _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", task)
           == [("completed",)])  # fmt: skip
    [(dequeued,)] = sql("SELECT dequeued_at FROM charter.side_effects WHERE id = %s", task)
    assert dequeued >= later


def test_a_payload_cannot_reach_another_orgs_facts(acme, db_url, engine, sql):
    send_id = acme.tasks.send_email("ana@example.com", "s", "b", at=datetime_in(3600))
    with Client(db_url, org_id="globex") as globex:
        forged = globex.tasks.enqueue("db_function", {
            "db_function": "charter.record_email_success",
            "original_payload": {"send_email_task_id": send_id, "attempt": 1},
        })  # fmt: skip
        _until(lambda: sql("SELECT status FROM charter.side_effects WHERE id = %s", forged)
               == [("completed",)])  # fmt: skip
    assert sql("SELECT count(*) FROM charter.send_email_task_succeeded") == [(0,)]
    assert acme.tasks.email_status(send_id).state == "sending"


@pytest.mark.parametrize(
    ("task_type", "payload", "words"),
    [
        ("cron", {}, "Unknown task type"),
        ("db_function", {"id": 1}, 'name its function in "db_function"'),
        ("email", {"send_email_task_id": 1}, "before_handler"),
        ("db_function", [1, 2], "JSON object"),
        ("db_function", {"db_function": "charter.no_such_function"}, "may run"),
        ("db_function", {"db_function": "charter.mutate"}, "may run"),  # not (jsonb), not granted
        (
            "email",
            {"before_handler": "charter.get_email_payload", "error_handler": "public.missing"},
            "public.missing",
        ),
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
