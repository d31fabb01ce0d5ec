"""A document's evidence outlives retention (issue #38, seed 002: full evidence is kept):
with retention at its minimum and the work moved back in time, a finished invoice's
versions, audit trail, approvals and its instance's steps, receipts and delivered effects
are all still read, while a finished flow run sharing their month is forgotten. Old
evidence may be archived (`charter maintenance --archive-before`) and is still read, under
row-level security, by the app's role."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.cli import main
from charter.errors import RunNotFoundError
from tests.flows_for_tests import analyze_site
from tests.workers import running_worker

MONTH = "2001_01"  # the month the work is moved back to
DAY = "2001-01-15"


def _approved_invoice(client: Client) -> Any:
    docs = client.documents
    doc = docs.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    docs.wait(doc.id, timeout=20)
    [request] = [r for r in client.approvals.history(doc.id) if r.status == "pending"]
    client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    done = docs.wait(doc.id, timeout=20)
    assert done.state == "active"  # final: the instance is finished
    return done


def _move_back(db_url: str, run_ids: list[str]) -> None:
    """Moves the runs' work (evidence, receipts, effects, the runs themselves) to MONTH, in a
    partition of its own, as if it had happened then; the evidence triggers stand aside."""
    start = MONTH.replace("_", "-") + "-01"
    with psycopg.connect(db_url, autocommit=True) as conn:
        for table in ("step_executions", "side_effects"):
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS charter.{table}_{MONTH} PARTITION OF charter.{table}"
                f" FOR VALUES FROM ('{start}') TO ('{start}'::date + interval '1 month')"
            )
        conn.execute("SET session_replication_role = replica")
        shift = f"(now() - timestamptz '{DAY} 12:00+00')"
        for sql in (
            f"UPDATE charter.step_executions SET created_at = created_at - {shift},"
            f" started_at = started_at - {shift}, finished_at = finished_at - {shift}"
            " WHERE run_id = ANY(%s)",
            f"UPDATE charter.side_effects SET created_at = created_at - {shift},"
            f" completed_at = completed_at - {shift} WHERE run_id = ANY(%s)",
            f"UPDATE charter.step_receipts SET created_at = created_at - {shift}"
            " WHERE run_id = ANY(%s)",
            f"UPDATE charter.runs SET created_at = created_at - {shift},"
            f" finished_at = finished_at - {shift} WHERE id = ANY(%s)",
            f"UPDATE charter.workflow_instances SET started_at = started_at - {shift},"
            f" completed_at = completed_at - {shift} WHERE id = ANY(%s)",
        ):
            conn.execute(sql, (run_ids,))


def _evidence(client: Client, sql, doc_id: str, run_id: str) -> dict[str, Any]:
    """Everything seed 002 keeps of a document, as its readers return it."""
    approvals = client.approvals.history(doc_id)
    return {
        "history": client.documents.history(doc_id),
        "approvals": approvals,
        "decisions": [client.approvals.get(r.id).decisions for r in approvals],
        "steps": client.get_run(run_id).steps,
        "versions": sql(
            "SELECT version, data FROM charter.document_versions WHERE document_id = %s"
            " AND org_id = 'acme' ORDER BY version",
            doc_id,
        ),
        "receipts": sql(
            "SELECT idempotency_key FROM charter.step_receipts WHERE run_id = %s"
            " AND org_id = 'acme' ORDER BY 1",
            run_id,
        ),
        "effects": sql(
            "SELECT id, status, response FROM charter.side_effects WHERE run_id = %s"
            " AND org_id = 'acme' ORDER BY id",
            run_id,
        ),
    }


def _delivered_effect(sql, run_id: str) -> None:
    """A webhook the instance delivered (its receipt: the response kept with it)."""
    sql(
        "INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request,"
        " idempotency_key, status, attempts, completed_at, response) VALUES ('acme', %s,"
        " 'usr:slot:posting:notify', 'webhook', '{}', %s, 'completed', 1, now(),"
        " '{\"status\": 200}')",
        run_id,
        f"{run_id}:notify",
    )


def _maintenance(capsys, db_url: str, *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["--database-url", db_url, "maintenance", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def aged(acme, engine, sql, db_url):
    """A finished invoice (approved by a reviewer) and a finished flow run, both moved back
    to MONTH: their evidence shares its partition."""
    done = _approved_invoice(acme)
    instance = done.workflow.run_id
    _delivered_effect(sql, instance)
    flow = analyze_site()
    with running_worker(db_url, flow, poll_interval=0.05):
        flow_run = acme.start(flow, {"pages": ["a", "bb"]})
        assert acme.wait(flow_run, timeout=30).status == "completed"
    assert sql("SELECT count(*) FROM charter.step_executions WHERE run_id = %s", flow_run)[0][0]
    _move_back(db_url, [instance, flow_run])
    before = _evidence(acme, sql, done.id, instance)
    assert before["steps"] and before["receipts"] and before["effects"] and before["approvals"]
    assert sql(f"SELECT count(*) FROM charter.step_executions_{MONTH} WHERE run_id = %s",
               instance)[0][0] == len(before["steps"])  # fmt: skip
    return done, instance, flow_run, before


def test_retention_at_its_minimum_keeps_a_documents_evidence_and_forgets_flow_runs(
    acme, sql, db_url, capsys, aged
):
    done, instance, flow_run, before = aged
    report = _maintenance(capsys, db_url, "--retention-days", "1")

    # The month holds a document's evidence: kept, and only the flow's rows were deleted.
    assert f"step_executions_{MONTH}" not in report["partitionsDropped"]
    kept = {k["partition"]: k["reason"] for k in report["partitionsKept"]}
    assert "document evidence" in kept[f"step_executions_{MONTH}"]
    assert "document evidence" in kept[f"side_effects_{MONTH}"]
    assert report["flowRunsForgotten"]["runs"] == 1
    assert report["flowRunsForgotten"]["stepExecutions"] > 0
    assert _evidence(acme, sql, done.id, instance) == before
    assert [a.action for a in before["history"]][:2] == ["create", "submit"]
    assert [(d.actor, d.decision) for d in before["decisions"][0]] == [("reviewer", "approved")]

    # The finished flow run is gone, whole.
    with pytest.raises(RunNotFoundError):
        acme.get_run(flow_run)
    for table in ("step_executions", "step_receipts", "step_states", "inbox"):
        assert sql(f"SELECT count(*) FROM charter.{table} WHERE run_id = %s", flow_run) == [(0,)]

    # Again: nothing more goes.
    again = _maintenance(capsys, db_url, "--retention-days", "1")
    assert again["flowRunsForgotten"] == {"runs": 0, "stepExecutions": 0}
    assert _evidence(acme, sql, done.id, instance) == before


def test_the_evidence_triggers_refuse_retention_an_instances_rows(acme, engine, sql, db_url):
    done = _approved_invoice(acme)
    with psycopg.connect(db_url) as conn:
        conn.execute("SET LOCAL charter.retention = 'on'")
        for table in ("step_executions", "step_receipts"):
            with (
                pytest.raises(psycopg.Error, match=r"kept for good") as caught,
                conn.transaction(),
            ):
                conn.execute(
                    f"DELETE FROM charter.{table} WHERE run_id = %s", (done.workflow.run_id,)
                )
            assert caught.value.sqlstate == "CH002"


def test_archived_evidence_is_still_read_and_keeps_row_level_security(
    acme, sql, db_url, capsys, login, aged
):
    done, instance, flow_run, before = aged
    # Archived while the flow run is still inside the window (a window of ~270 years).
    report = _maintenance(
        capsys, db_url, "--retention-days", "100000", "--archive-before", "2001-02-01"
    )
    assert report["flowRunsForgotten"]["runs"] == 0
    archived = [f"charter_archive.step_executions_{MONTH}", f"charter_archive.side_effects_{MONTH}"]
    assert sorted(report["archive"]["partitionsArchived"]) == sorted(archived)
    for name in archived:
        schema, table = name.split(".")
        [(rls, acl, parent)] = sql(
            "SELECT c.relrowsecurity, c.relacl::text, i.inhparent::regclass::text"
            " FROM pg_class AS c JOIN pg_inherits AS i ON i.inhrelid = c.oid"
            " WHERE c.oid = %s::regclass",
            name,
        )
        assert rls and "charter_app" not in (acl or "") and "charter_worker" not in (acl or "")
        assert parent == "charter." + table.removesuffix(f"_{MONTH}")
        assert sql(
            "SELECT policyname, qual FROM pg_policies WHERE schemaname = %s AND tablename = %s",
            schema,
            table,
        ) == [("org_isolation", "(org_id = current_setting('charter.org_id'::text, true))")]
        assert sql(f"SELECT count(*) FROM {name} WHERE org_id <> 'acme'") == [(0,)]
    assert sql(f"SELECT to_regclass('charter.step_executions_{MONTH}')") == [(None,)]

    # Read as before, by the owner and by the app's role (its org only).
    assert _evidence(acme, sql, done.id, instance) == before
    with Client(login("charter_app"), org_id="acme", migrate=False) as app:
        assert app.get_run(instance).steps == before["steps"]
        assert app.documents.history(done.id) == before["history"]
    with (
        Client(login("charter_app"), org_id="globex", migrate=False) as other,
        pytest.raises(RunNotFoundError),
    ):
        other.get_run(instance)

    # Retention never drops the archive; it still forgets the expired flow run's rows there.
    later = _maintenance(capsys, db_url, "--retention-days", "1")
    assert not [p for p in later["partitionsDropped"] + later["partitionsKept"] if MONTH in str(p)]
    assert later["flowRunsForgotten"]["runs"] == 1
    assert sql(f"SELECT count(*) FROM charter_archive.step_executions_{MONTH}"
               " WHERE run_id = %s", flow_run) == [(0,)]  # fmt: skip
    assert _evidence(acme, sql, done.id, instance) == before
    # Archiving again finds nothing more in that range.
    assert (
        _maintenance(capsys, db_url, "--archive-before", "2001-02-01")["archive"][
            "partitionsArchived"
        ]
        == []
    )


@pytest.mark.parametrize(
    ("day", "says"),
    [
        ("2025-13-01", "is not a date"),
        ("01/01/2025", "is not a date"),
        ("2999-01-01", "no later than today"),
    ],
)
def test_archive_refuses_a_bad_date(db_url, capsys, day, says):
    capsys.readouterr()
    assert main(["--database-url", db_url, "maintenance", "--archive-before", day]) == 1
    err = capsys.readouterr().err
    assert "ARCHIVE_DATE_INVALID" in err and says in err and "YYYY-MM-DD" in err


def test_maintenance_says_what_it_kept_forgot_and_archived(db_url, sql, capsys):
    sql("CREATE TABLE charter.step_executions_2001_03 PARTITION OF charter.step_executions"
        " FOR VALUES FROM ('2001-03-01') TO ('2001-04-01')")  # fmt: skip
    capsys.readouterr()
    argv = ["--database-url", db_url, "maintenance", "--retention-days", "100000"]
    assert main([*argv, "--archive-before", "2001-04-01"]) == 0
    out = capsys.readouterr().out
    assert "0 finished flow runs forgotten" in out and "documents' evidence kept" in out
    assert "archive before 2001-04-01: 1 partition archived" in out
    assert "archived partition charter_archive.step_executions_2001_03" in out
