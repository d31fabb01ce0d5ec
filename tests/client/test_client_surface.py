"""The client's surface: transactions of the caller, many runs at once, waiting, paging,
models at the door, what a run shows, and riding through a PostgreSQL restart."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import psycopg
import pydantic
import pytest

from charter import AsyncClient, Client, Flow
from charter.db import embedded
from charter.errors import (
    ArgumentError,
    DatabaseConnectionLostError,
    RunInputError,
    RunNotFoundError,
    RunWaitTimeoutError,
)
from tests.workers import running_worker


def _echo() -> Flow:
    flow = Flow("echo")
    flow.step(slug="say")(lambda run: run)
    return flow


def _run_count(db_url: str) -> int:
    with psycopg.connect(db_url) as conn:
        return conn.execute("SELECT count(*) FROM charter.runs").fetchone()[0]


def test_a_start_inside_a_rolled_back_transaction_leaves_no_run_and_wakes_no_worker(db_url):
    flow = _echo()
    with running_worker(db_url, flow) as worker, Client(db_url) as client:
        with psycopg.connect(db_url) as conn:
            with conn.transaction(force_rollback=True):
                conn.execute("CREATE TEMP TABLE orders (id int)")  # the app's own write
                run_id = client.start(flow, "never", connection=conn)
                assert client.get_run(run_id, connection=conn).status == "running"
            with pytest.raises(RunNotFoundError):
                client.get_run(run_id)
            with conn.transaction():
                kept = client.start(flow, "kept", connection=conn)
        assert client.wait(kept, timeout=30).output == {"say": "kept"}
        time.sleep(0.5)
        assert worker.completed == 1  # the rolled-back run's task never reached a worker
    assert _run_count(db_url) == 1


def test_the_registry_takes_the_callers_transaction_too(db_url):
    with Client(db_url) as client, psycopg.connect(db_url) as conn:
        with conn.transaction(force_rollback=True):
            client.registry.ensure_workflow("wf_tx", "rolled back", connection=conn)
        with conn.transaction():
            made = client.registry.create_workflow_version(
                "wf_tx", {"prompt": "x"}, "kept", "init", connection=conn
            )
        # The workflow made in the rolled-back transaction was gone: it was made again.
        assert [w.code for w in made.warnings] == ["PARENT_WORKFLOW_AUTO_CREATED"]
        assert client.registry.lineage(made.version_id).workflow_id == "wf_tx"


def test_async_client_joins_the_callers_async_transaction(db_url):
    flow = _echo()

    async def scenario() -> tuple[str, str]:
        async with AsyncClient(db_url) as client:
            async with await psycopg.AsyncConnection.connect(db_url) as conn:
                async with conn.transaction(force_rollback=True):
                    gone = await client.start(flow, 1, connection=conn)
                async with conn.transaction():
                    kept = await client.start(flow, 2, connection=conn)
            with pytest.raises(RunNotFoundError):
                await client.get_run(gone)
            return kept, (await client.get_run(kept)).status

    _, status = asyncio.run(scenario())
    assert status == "running"


def test_start_many_starts_every_run_in_one_call_idempotently(db_url):
    flow = _echo()
    with running_worker(db_url, flow), Client(db_url) as client:
        ids = client.start_many(flow, [{"n": n} for n in range(50)])
        runs = client.wait_many(ids, timeout=30)
        assert [r.output["say"]["n"] for r in runs] == list(range(50))
        chosen = client.start_many(flow, ["a", "b"], ["run-a", "run-b"])
        assert chosen == ["run-a", "run-b"]
        assert client.start_many(flow, ["a", "b"], ["run-a", "run-b"]) == chosen  # idempotent
        with pytest.raises(ArgumentError, match="2 inputs but 1 run ids"):
            client.start_many(flow, ["a", "b"], ["only-one"])
        with pytest.raises(ArgumentError, match="a list of inputs"):
            client.start_many(flow, "abc")
        assert client.start_many(flow, []) == []
        # An input too deep is refused by the database's check of the batch, by its index,
        # and nothing of the batch is started.
        deep: object = 0
        for _ in range(150):
            deep = [deep]
        with pytest.raises(RunInputError, match="run input at index 1 nests"):
            client.start_many(flow, ["x", deep, "y"])
        with pytest.raises(RunInputError, match="run input at index 2 is not JSON"):
            client.start_many(flow, ["x", "y", {1, 2}])
        typed = Flow("typed_batch")

        @typed.step()
        def only(run: int) -> int:
            return run + 1

        with pytest.raises(RunInputError, match="at index 1: The run input does not match"):
            client.start_many(typed, [1, "not a number", 3])
    assert _run_count(db_url) == 52


def test_wait_many_times_out_naming_the_unfinished_runs(db_url):
    flow = _echo()
    with Client(db_url) as client:
        install_ids = client.start_many(flow, [1, 2])
        with pytest.raises(RunWaitTimeoutError, match="2 runs are not finished"):
            client.wait_many(install_ids, timeout=0.3)


def test_wait_hears_of_a_finished_run_through_its_clients_listener(db_url):
    flow = _echo()
    with running_worker(db_url, flow), Client(db_url) as client:
        first = client.wait(client.start(flow, 1), timeout=30)
        listener = client.store.listener()
        for n in range(5):
            assert client.wait(client.start(flow, n), timeout=30).status == "completed"
        assert client.store.listener() is listener  # one listening connection per client
    assert first.status == "completed"


def test_list_runs_pages_newest_first_and_refuses_unknown_statuses(db_url):
    flow = _echo()
    with Client(db_url) as client:
        ids = [client.start(flow, n) for n in range(7)]
        pages, after = [], None
        while page := client.list_runs(flow=flow, limit=3, after=after):
            pages.append([run.id for run in page])
            after = page[-1].id
        assert [len(p) for p in pages] == [3, 3, 1]
        assert [rid for p in pages for rid in p] == list(reversed(ids))
        with pytest.raises(ArgumentError, match="'runing' is not a run status"):
            client.list_runs(status="runing")
        with pytest.raises(ArgumentError, match="names no run"):
            client.list_runs(after="no-such-run")
        with pytest.raises(ArgumentError, match="limit=0"):
            client.list_runs(limit=0)
        assert client.list_runs(status="completed") == []


class Order(pydantic.BaseModel):
    id: int
    amount: float
    note: str | None = None


def test_a_pydantic_model_is_accepted_at_the_door_and_a_wrong_input_refused(db_url):
    flow = Flow("orders_in")

    @flow.step
    def total(run: Order) -> float:
        return run.amount * 2

    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, Order(id=1, amount=2.5)), timeout=30)
        assert run.input == {"id": 1, "amount": 2.5, "note": None}
        assert run.output == {"total": 5.0}
        with pytest.raises(RunInputError, match=r"step 'total'.*amount"):
            client.start(flow, {"id": 1, "amount": "lots"})
    assert _run_count(db_url) == 1


def test_bad_identifiers_are_coded_errors_not_driver_errors(db_url):
    flow = _echo()
    with Client(db_url) as client:
        with pytest.raises(ArgumentError, match="U\\+0000"):
            client.start(flow, 1, run_id="a\x00b")
        with pytest.raises(ArgumentError, match="U\\+0000"):
            client.start("ec\x00ho", 1)
        with pytest.raises(ArgumentError, match="lone surrogate"):
            client.get_run("\ud800")
        with pytest.raises(RunInputError, match="lone surrogate"):
            client.start(flow, {"name": "\udce9"})
        with pytest.raises(ArgumentError, match="1 to 200 characters"):
            client.start(flow, 1, run_id="")
        with pytest.raises(ArgumentError, match="must be a string"):
            client.get_run(42)


def test_a_run_shows_step_outputs_its_cost_and_no_stale_error_after_a_retry(db_url):
    flow = Flow("viewed", max_attempts=1)
    failing = threading.Event()
    failing.set()

    @flow.step
    def first(run: int, ctx) -> int:
        ctx.add_cost(0.5)
        return run + 1

    @flow.step(depends_on=[first])
    def second(first: int) -> int:
        if failing.is_set():
            raise RuntimeError("flaky")
        return first * 10

    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, 1), timeout=30)
        assert run.status == "failed" and run.step("second").error["message"] == "flaky"
        assert run.step("first").output == 2 and run.usd_cost == pytest.approx(0.5)
        failing.clear()
        client.retry(run.id)
        again = client.wait(run.id, timeout=30)
    assert again.status == "completed"
    assert again.step("second").error is None and again.step("second").output == 20


def test_the_client_rides_through_a_postgresql_restart(tmp_path):
    data_dir = tmp_path / "pg"
    server = embedded.ensure_running(data_dir, settings={"fsync": "off"})
    flow = _echo()
    try:
        with Client(server.url()) as client:
            first = client.start(flow, 1)
            embedded.stop(data_dir)
            restarter = threading.Timer(
                1.0, lambda: embedded.ensure_running(data_dir, settings={"fsync": "off"})
            )
            restarter.start()
            # The pooled connections died with the server: start() reconnects by itself.
            second = client.start(flow, 2)
            restarter.join()
            assert client.get_run(second).status == "running"
            assert client.cancel(first) == "cancelled"
            # wait() rides through a restart while it waits.
            waiter_error: list[BaseException] = []

            def wait_for_cancel() -> None:
                try:
                    assert client.wait(second, timeout=30).status == "cancelled"
                except BaseException as exc:
                    waiter_error.append(exc)

            waiter = threading.Thread(target=wait_for_cancel)
            waiter.start()
            time.sleep(0.5)
            embedded.stop(data_dir)
            time.sleep(1.0)
            embedded.ensure_running(data_dir, settings={"fsync": "off"})
            client.cancel(second)
            waiter.join(40)
            assert waiter_error == []
    finally:
        embedded.stop(data_dir)


def test_a_lost_connection_during_a_retry_is_a_precise_error(db_url, monkeypatch):

    flow = _echo()
    with Client(db_url) as client:
        run_id = client.start(flow, 1)
        real_execute = psycopg.Cursor.execute

        def broken(self, query, params=None, **kwargs):
            if "retry_run" in str(query):
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return real_execute(self, query, params, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", broken)
        with pytest.raises(DatabaseConnectionLostError, match="cannot tell whether it took effect"):
            client.retry(run_id)


def test_a_wait_reads_a_run_whole_only_once_it_is_finished(db_url):
    """get_finished_runs, what wait reads on every notice: a finished run as get_run gives
    it, a running one as its id and status, an unknown or another org's run as null, in
    the order asked."""
    flow = _echo()
    with running_worker(db_url, flow), Client(db_url, org_id="acme") as client:
        finished = client.wait(client.start(flow, 1), timeout=30)
    with Client(db_url, org_id="acme") as client:
        running = client.start(flow, 2)  # no worker now: it stays running
        with psycopg.connect(db_url, autocommit=True) as conn:

            def value(sql: str, *args: object) -> Any:
                row = conn.execute(sql, args).fetchone()
                assert row is not None
                return row[0]

            read = value(
                "SELECT charter.get_finished_runs(%s, 'acme')",
                [running, finished.id, "no-such-run", finished.id],
            )
            whole = value("SELECT charter.get_run(%s, 'acme')", finished.id)
            elsewhere = value("SELECT charter.get_finished_runs(%s, 'globex')", [finished.id])
        assert read == [{"id": running, "status": "running"}, whole, None, whole]
        assert whole["status"] == "completed" and whole["steps"][0]["slug"] == "say"
        assert elsewhere == [None]
        with pytest.raises(RunWaitTimeoutError, match="steps not completed: say"):
            client.wait(running, timeout=0.3)  # the error still names the run's steps
        with pytest.raises(RunNotFoundError):
            client.wait_many([finished.id, "no-such-run"], timeout=1)
        both = client.wait_many([finished.id, finished.id], timeout=1)
        assert [(run.id, run.output) for run in both] == [(finished.id, {"say": 1})] * 2
