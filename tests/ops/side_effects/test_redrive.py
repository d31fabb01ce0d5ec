"""A workflow's dead letter re-driven into its workflow: the instance that failed with
DELIVERY_FAILED resumes at the node once the same effect (same row, same idempotency key) is
delivered, whether an operator re-drives the dead letter or retries the run, and however many
of them do so at once. A real receiver on 127.0.0.1 counts the deliveries."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from charter import Client
from charter.cli import main
from charter.errors import DeadLetterNotFoundError, RunStateError
from tests.ops.side_effects.test_webhooks import _open, _publish
from tests.servers import Receiver

SEND = "usr:slot:work:send"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _until(check: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def _dead_lettered(acme, receiver, code):
    """A document whose webhook (no `failed` edge) was refused once (404): its instance
    failed with DELIVERY_FAILED and its effect is a dead letter. The receiver takes the next
    attempt (200)."""
    _publish(acme, receiver.url, failed_edge=False)
    receiver.script[f"/hooks/{code}"] = [(404, {}), (200, {})]
    doc = _open(acme, code)
    failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed" and failed.error["sqlstate"] == "CH059"
    [letter] = acme.dead_letters.list()
    assert (letter.run_id, letter.node) == (failed.run_id, SEND)
    return doc, failed.run_id, letter


def _done(acme, doc_id):
    return _until(lambda: (d := acme.documents.get(doc_id)).workflow.status != "running"
                  and not d.workflow.current_nodes and d)  # fmt: skip


def _assert_delivered_once(acme, sql, receiver, code, run_id, letter):
    """The instance went on past the node; the receiver saw the refused attempt and one
    delivery, both under the effect's one key; the run has that one effect row."""
    doc = acme.documents.wait(_done(acme, _doc_of(sql, run_id)).id, timeout=20)
    assert doc.state == "done" and doc.workflow.status == "completed"
    assert doc.workflow.context["sent"] is True
    seen = receiver.to(f"/hooks/{code}")
    assert len(seen) == 2
    assert {r["headers"]["Idempotency-Key"] for r in seen} == {letter.idempotency_key}
    rows = sql(
        "SELECT id, status, idempotency_key FROM charter.side_effects WHERE run_id = %s", run_id
    )
    assert rows == [(letter.id, "completed", letter.idempotency_key)]
    # The node's evidence: it failed, then (re-driven) completed on the same effect.
    failed, done = [s for s in acme.get_run(run_id).steps if s.slug == SEND]
    assert failed.status == "failed" and failed.error["delivery"]["effectId"] == letter.id
    assert done.status == "completed" and done.output["delivery"]["effectId"] == letter.id
    assert done.output["idempotencyKey"] == letter.idempotency_key
    _assert_replayed(sql, run_id)


def _assert_replayed(sql, run_id):
    """WF-15: the projection derived from the evidence alone agrees with the live one."""
    [(computed, status, nodes)] = sql(
        "SELECT charter.compute_instance_projection(id), status, current_nodes "
        "FROM charter.workflow_instances WHERE id = %s",
        run_id,
    )
    assert (computed["status"], sorted(computed["currentNodes"])) == (status, sorted(nodes))


def _doc_of(sql, run_id):
    [(doc_id,)] = sql("SELECT document_id FROM charter.workflow_instances WHERE id = %s", run_id)
    return doc_id


def _redrives(sql, run_id):
    return [
        output
        for (output,) in sql(
            "SELECT output FROM charter.step_executions WHERE run_id = %s "
            "AND step_slug = '$instance' AND node_type = 'redrive' ORDER BY id",
            run_id,
        )
    ]


def test_a_redriven_dead_letter_resumes_its_instance_at_the_node(acme, engine, receiver, sql):
    doc, run_id, letter = _dead_lettered(acme, receiver, "R1")
    assert acme.dead_letters.retry([letter.id], actor="ops") == [letter.id]
    _assert_delivered_once(acme, sql, receiver, "R1", run_id, letter)
    # Who re-drove it: the effect, the instance's evidence and the document's audit say so.
    [intervention] = acme.side_effects.get(letter.id).interventions
    assert (intervention["action"], intervention["by"]) == ("retry", "ops")
    [redrive] = _redrives(sql, run_id)
    assert (redrive["by"], redrive["effectId"], redrive["node"]) == ("ops", letter.id, SEND)
    done = [s for s in acme.get_run(run_id).steps if s.slug == SEND][-1]
    assert done.actor == "ops" and done.output["redrivenBy"] == "ops"
    audit = [e for e in acme.documents.history(doc.id) if e.action == "instance.redrive"]
    assert [(e.actor, e.changes["$instance"]["effectId"]) for e in audit] == [("ops", letter.id)]
    # Done: not a dead letter any more, and a second re-drive is refused.
    with pytest.raises(DeadLetterNotFoundError):
        acme.dead_letters.retry([letter.id], actor="ops")


def test_retrying_the_run_redrives_the_same_effect(acme, engine, receiver, sql):
    doc, run_id, letter = _dead_lettered(acme, receiver, "R2")
    assert acme.retry(run_id, actor="ops2") == "running"
    _assert_delivered_once(acme, sql, receiver, "R2", run_id, letter)
    [intervention] = acme.side_effects.get(letter.id).interventions
    assert (intervention["action"], intervention["by"], intervention["via"]) == (
        "retry", "ops2", "retry_run"
    )  # fmt: skip
    [redrive] = _redrives(sql, run_id)
    assert (redrive["effectId"], redrive["by"], redrive["via"]) == (letter.id, "ops2", "retry_run")
    audit = [e for e in acme.documents.history(doc.id) if e.action == "instance.redrive"]
    assert [e.actor for e in audit] == ["ops2"]


def test_a_redrive_that_fails_again_fails_the_instance_again(
    acme, engine, receiver, sql, db_url, capsys
):
    doc, run_id, letter = _dead_lettered(acme, receiver, "R3")
    receiver.script["/hooks/R3"] = [(404, {}), (200, {})]  # the re-drive is refused too
    cli = ["--database-url", db_url, "dlq"]
    assert main([*cli, "list", "--org", "acme", "--run", run_id, "--json"]) == 0
    assert [d["id"] for d in json.loads(capsys.readouterr().out)] == [letter.id]
    assert main([*cli, "list", "--org", "acme", "--run", "other", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main([*cli, "retry", str(letter.id), "--org", "acme", "--actor", "ops"]) == 0
    _until(lambda: acme.documents.get(doc.id).workflow.status == "failed"
           and acme.dead_letters.list())  # fmt: skip
    assert acme.documents.get(doc.id).workflow.error["sqlstate"] == "CH059"
    _assert_replayed(sql, run_id)
    # Then the run's retry takes the same effect up once more.
    acme.retry(run_id)
    _until(lambda: acme.documents.get(doc.id).workflow.status == "completed")
    seen = receiver.to("/hooks/R3")
    assert len(seen) == 3
    assert {r["headers"]["Idempotency-Key"] for r in seen} == {letter.idempotency_key}
    assert len(sql("SELECT 1 FROM charter.side_effects WHERE run_id = %s", run_id)) == 1
    assert len(_redrives(sql, run_id)) == 2


def test_redrive_and_retry_at_once_deliver_once_and_resume_once(
    acme, engine, receiver, sql, db_url
):
    _doc, run_id, letter = _dead_lettered(acme, receiver, "R4")
    clients = [Client(db_url, org_id="acme") for _ in range(6)]
    start = threading.Barrier(len(clients))
    results: list[Any] = []

    def go(i: int) -> None:
        start.wait()
        try:
            if i % 2:
                results.append(
                    ("redrive", clients[i].dead_letters.retry([letter.id], actor=f"ops{i}"))
                )
            else:
                results.append(("retry", clients[i].retry(run_id, actor=f"ops{i}")))
        except (DeadLetterNotFoundError, RunStateError) as error:
            results.append(("refused", type(error).__name__))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()
    winners = [r for r in results if r[0] != "refused"]
    assert len(winners) == 1, results
    _assert_delivered_once(acme, sql, receiver, "R4", run_id, letter)
    assert len(_redrives(sql, run_id)) == 1
    [intervention] = acme.side_effects.get(letter.id).interventions
    assert intervention["action"] == "retry"


def test_a_notifications_dead_letter_redrives_into_its_workflow_too(acme, engine, mail, sql):
    from tests.ops.side_effects import test_channels as channels

    mail.script["wh@example.com"] = ["550 5.1.1 no such mailbox", "250 OK"]
    channels._publish(acme, "email", "wh", failed_edge=False)
    doc = channels._settled(acme, channels._open(acme, "N1").id)
    assert doc.workflow.status == "failed" and doc.workflow.error["sqlstate"] == "CH059"
    [letter] = acme.dead_letters.list(run_id=doc.workflow.run_id)
    assert acme.retry(doc.workflow.run_id, actor="ops") == "running"
    done = channels._settled(acme, doc.id)
    assert done.workflow.status == "completed" and done.workflow.context["told"] is True
    [message] = mail.to("wh@example.com")  # once, under the effect's key (its recipient 0)
    assert message["key"] == f"{letter.idempotency_key}.0"
    rows = sql("SELECT id, status FROM charter.side_effects WHERE run_id = %s", doc.workflow.run_id)
    assert rows == [(letter.id, "completed")]
    _assert_replayed(sql, doc.workflow.run_id)
