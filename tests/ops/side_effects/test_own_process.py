"""The business process of docs/side-effects.md (seed 003's checklist), run from the page
itself: its SQL is installed as written, a root task kicked off, and a worker whose login
role is only a charter_worker member runs it against a receiver that fails once."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.servers import Receiver
from tests.workers import running_worker

PAGE = Path(__file__).resolve().parents[3] / "docs" / "side-effects.md"


def _checklist_sql() -> list[str]:
    """Steps 1 to 5 of the page's checklist (step 6 is the test below)."""
    section = PAGE.read_text().split("### Checklist: your own business process", 1)[1]
    blocks = re.findall(r"```sql\n(.*?)```", section, flags=re.S)
    return [re.sub(r"^ {3}", "", block, flags=re.M) for block in blocks[:5]]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def test_the_documented_process_runs_end_to_end_under_the_worker_role(db_url, login, receiver, sql):
    with psycopg.connect(db_url, autocommit=True) as owner:
        for block in _checklist_sql():
            owner.execute(block)
    worker_url = login("charter_worker")
    receiver.script["/invoices"] = [(503, {}), (200, {})]
    [(task_id,)] = sql(
        "INSERT INTO ledger.post_invoice_task (org_id, invoice_id, amount, url)"
        " VALUES ('acme', 'INV-7', 120, %s) RETURNING id",
        receiver.url + "/invoices",
    )
    sql("SELECT ledger.kickoff_post_invoice_task(%s)", task_id)
    with running_worker(worker_url, poll_interval=0.05):
        deadline = time.monotonic() + 30
        while not sql("SELECT 1 FROM ledger.post_invoice_task_succeeded"):
            assert time.monotonic() < deadline, sql("SELECT * FROM charter.task_errors")
            time.sleep(0.05)
    assert sql("SELECT attempt FROM ledger.post_invoice_task_scheduled ORDER BY 1") == [(1,), (2,)]
    [(attempt, error)] = sql("SELECT attempt, error FROM ledger.post_invoice_task_failed")
    assert attempt == 1 and "HTTP 503" in error
    [(attempt, response)] = sql("SELECT attempt, response FROM ledger.post_invoice_task_succeeded")
    assert attempt == 2 and response["status"] == 200
    first, second = receiver.to("/invoices")
    assert json.loads(second["body"]) == {"amount": 120, "invoice": "INV-7"}
    keys = {first["headers"]["Idempotency-Key"], second["headers"]["Idempotency-Key"]}
    assert keys == {f"post_invoice:{task_id}"}
