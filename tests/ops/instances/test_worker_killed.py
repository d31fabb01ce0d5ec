"""A `charter worker` (the documents engine alone) SIGKILLed again and again while 200 sales
orders move through use case B: nothing is lost and nothing is done twice."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from charter import Client
from tests.integration.helpers import charter_env

pytestmark = pytest.mark.slow

ORDERS = 200


def _worker(db_url):
    return subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--lease-seconds", "2", "--poll-interval",
         "0.05"],
        env=charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="production"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


class _Killer:
    """Keeps one worker process alive and SIGKILLs it 0.3 to 0.9 s after it registered (in
    the middle of its work: it polls every 0.05 s), starting another. Counted from its
    registration, not its start: a slow machine takes over a second to start Python."""

    def __init__(self, db_url):
        self.db_url, self.kills, self.stop = db_url, 0, threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        rng = random.Random(7)
        while not self.stop.is_set():
            worker = _worker(self.db_url)
            self._registered(worker.pid)
            self.stop.wait(rng.uniform(0.3, 0.9))
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            self.kills += 1

    def _registered(self, pid: int) -> None:
        deadline = time.monotonic() + 20
        with psycopg.connect(self.db_url, autocommit=True) as conn:
            while not self.stop.is_set() and time.monotonic() < deadline:
                query = "SELECT 1 FROM charter.workers WHERE pid = %s"
                if conn.execute(query, (pid,)).fetchone():
                    return
                time.sleep(0.02)


def test_a_worker_killed_repeatedly_loses_and_doubles_nothing(acme, db_url, sql):
    docs = acme.documents
    ids = []
    killer = _Killer(db_url)
    killer.thread.start()
    try:
        for i in range(ORDERS):
            credit = 1000 if i % 2 else 0  # half wait for a payment event
            data = {"order_id": f"K-{i}", "grand_total": 100, "credit_available": credit}
            doc = docs.create("sales_order", data, actor="sales")
            docs.transition(doc.id, "submit", actor="sales")
            ids.append(doc.id)
            time.sleep(0.02)  # orders keep arriving while workers die
        time.sleep(1)
        for i in range(0, ORDERS, 2):
            acme.events.send(f"payment:K-{i}", {"paid": True}, event_id=f"pay-{i}")
            time.sleep(0.02)
        time.sleep(2)
    finally:
        killer.stop.set()
        killer.thread.join()
    assert killer.kills >= 4
    # The killed workers did part of the work, and were killed in the middle of some of it.
    [(applied, reclaimed)] = sql(
        "SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE attempts > 1) "
        "FROM charter.document_events"
    )
    assert applied > 0
    final = _worker(db_url)  # one that lives: whatever the killed ones left, it finishes
    try:
        deadline = time.monotonic() + 120
        for doc_id in ids:
            done = docs.wait(doc_id, timeout=max(1, deadline - time.monotonic()))
            assert (done.state, done.workflow.status) == ("confirmed", "completed"), done
    finally:
        final.send_signal(signal.SIGKILL)
        final.wait()
    with Client(db_url, org_id="acme") as client:
        for doc_id in ids:
            actions = [e.action for e in client.documents.history(doc_id)]
            assert actions == ["create", "submit", "sales_order.reserve_inventory", "confirm"]
    assert sql("SELECT count(*) FROM charter.workflow_instances") == [(ORDERS,)]
    assert sql("SELECT count(*) FROM charter.document_events WHERE status <> 'completed'") == [(0,)]
    doubles = sql(
        "SELECT run_id, step_slug, token, entity_version FROM charter.step_executions "
        "WHERE status = 'completed' GROUP BY 1, 2, 3, 4 HAVING count(*) > 1"
    )
    assert doubles == []
    [(reserved,)] = sql(
        "SELECT count(*) FROM charter.step_executions WHERE status = 'completed' "
        "AND step_slug = 'usr:slot:fulfil:reserve_inventory'"
    )
    assert reserved == ORDERS
    print(f"kills {killer.kills}, events applied under the killer {applied}, reclaimed {reclaimed}")


def test_events_claimed_by_a_worker_that_died_are_applied_after_their_lease(acme, sql, db_url):
    docs = acme.documents
    data = {"order_id": "L-1", "grand_total": 100, "credit_available": 1000}
    doc = docs.create("sales_order", data, actor="sales")
    docs.transition(doc.id, "submit", actor="sales")
    # A worker claims the first event and dies before applying it.
    claimed = sql("SELECT * FROM charter.claim_document_events('dead-worker', 10, 1)")
    assert len(claimed) == 1  # only the document's oldest event: they apply in order
    worker = _worker(db_url)
    try:
        done = docs.wait(doc.id, timeout=30)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert (done.state, done.workflow.status) == ("confirmed", "completed")
    [(attempts, worker_id)] = sql(
        "SELECT attempts, worker_id FROM charter.document_events WHERE document_id = %s "
        "AND event_type = 'on_create'",
        doc.id,
    )
    assert attempts == 2 and worker_id != "dead-worker"
