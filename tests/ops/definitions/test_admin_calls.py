"""The explicit, recorded ways back: retry_run resumes a failed instance from the node that
failed; dead-lettered events go back to pending."""

from __future__ import annotations

import copy
import time

from charter import Client
from charter.demos.use_cases import invoice_contract, invoice_org
from tests.workers import running_worker


def _strict_org():
    """Invoice review without a default edge: a total between 500 and 1,000 matches nothing."""
    org = copy.deepcopy(invoice_org())
    slot = org["slots"]["slot:review"]
    slot["edges"] = [
        {
            "id": "small",
            "sourceNodeId": "usr:slot:review:fast_lane",
            "targetNodeId": "usr:slot:review:auto_approved",
            "condition": "entity.grand_total <= 500",
        },
        {
            "id": "large",
            "sourceNodeId": "usr:slot:review:fast_lane",
            "targetNodeId": "usr:slot:review:review",
            "condition": "entity.grand_total > 1000",
        },
    ]
    return org


def test_retry_run_resumes_a_failed_instance_from_the_node_that_failed(db_url, sql):
    with Client(db_url, org_id="acme") as client, running_worker(db_url, poll_interval=0.05):
        client.definitions.publish(invoice_contract())
        client.definitions.publish(invoice_contract(), _strict_org())
        client.directory.put_user("clerk", roles=["ap_clerk"])
        docs = client.documents
        doc = docs.create("ap_invoice", {"grand_total": 700, "vendor_id": "v"}, actor="clerk")
        docs.transition(doc.id, "submit", actor="clerk")
        failed = docs.wait(doc.id, timeout=20)
        assert failed.workflow.status == "failed"
        assert failed.workflow.error["sqlstate"] == "CH042"  # CONDITION_NO_MATCH
        assert "usr:slot:review:fast_lane" in failed.workflow.error["message"]
        run = failed.workflow.run_id
        assert client.get_run(run).status == "failed"
        # The data is corrected (no instance holds the document now; its events change
        # nothing), then the admin retries: the instance catches up with the new version.
        docs.update(doc.id, {"grand_total": 300}, actor="clerk")
        docs.wait(doc.id, timeout=20)
        assert client.retry(run, actor="ops") == "running"
        done = docs.wait(doc.id, timeout=20)
        assert (done.state, done.workflow.status, done.workflow.run_id) == (
            "active", "completed", run,
        )  # fmt: skip
        rows = sql(
            "SELECT output FROM charter.step_executions WHERE run_id = %s "
            "AND step_slug = '$instance'",
            run,
        )
        retry, restart = (r[0] for r in rows)
        assert "usr:slot:review:fast_lane" in retry["retry"] and retry["by"] == "ops"
        assert (restart["drift"]["from"], restart["drift"]["to"]) == (2, 3)
        [(derived,)] = sql("SELECT charter.compute_instance_projection(%s)", run)
        assert derived["status"] == "completed"


def test_dead_letters_go_back_to_pending_on_the_admins_call(acme, db_url, sql):
    doc = acme.documents.create("shipment", {"shipment_id": "S-1"}, actor="sales")
    # The events of this document fail until the version is verified: refuse it by hand.
    sql(
        "SELECT charter.apply_document_events(jsonb_build_array(jsonb_build_object("
        "'created_at', e.created_at, 'id', e.id)), '{}', '{}') "
        "FROM charter.document_events AS e WHERE e.document_id = %s",
        doc.id,
    )  # not processing: nothing applied
    sql("UPDATE charter.document_events SET status = 'processing' WHERE document_id = %s", doc.id)
    sql(
        "UPDATE charter.document_events SET status = 'dead_letter', error = 'boom' "
        "WHERE document_id = %s",
        doc.id,
    )
    assert sql("SELECT charter.retry_dead_letters('acme', %s)", doc.id) == [(1,)]
    [(status, error)] = sql(
        "SELECT status, error FROM charter.document_events WHERE document_id = %s", doc.id
    )
    assert status == "pending" and "was: boom" in error and "retried by" in error
    with running_worker(db_url, poll_interval=0.05):
        deadline = time.monotonic() + 20
        while acme.documents.get(doc.id).workflow.run_id is None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert acme.documents.get(doc.id).workflow.status == "running"
