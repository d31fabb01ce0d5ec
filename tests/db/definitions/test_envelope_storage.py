"""Envelopes stored as immutable default definitions (definition_kind 'envelope')."""

import copy

import pytest

from charter.db.sqlstate import charter_errors
from charter.dsl.contract import EntityContract
from charter.errors import WorkflowVersionImmutableError
from charter.library.templates import TEMPLATES
from charter.ops.envelopes import publish_envelope


def _contract(version=1):
    data = copy.deepcopy(TEMPLATES["invoice_approval"].contract)
    data["version"] = version
    return EntityContract.from_json(data)


def test_an_envelope_is_published_once_and_verified_after(conn):
    first = publish_envelope(conn, _contract())
    assert (first["status"], first["workflowId"], first["version"]) == (
        "published",
        "envelope:invoice",
        1,
    )
    assert publish_envelope(conn, _contract())["status"] == "verified"
    second = publish_envelope(conn, _contract(version=2))
    assert (second["status"], second["version"]) == ("published", 2)
    row = conn.execute(
        "SELECT definition_kind, dsl->>'kind', compiled->>'kind', compiled_hash = compiled->>'hash'"
        " FROM charter.workflow_versions WHERE id = %s",
        (first["versionId"],),
    ).fetchone()
    assert row == ("envelope", "envelope", "effective", True)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE charter.workflow_versions SET dsl = '{}' WHERE definition_kind = 'envelope'",
        "UPDATE charter.workflow_versions SET compiled_hash = 'x' "
        "WHERE definition_kind = 'envelope'",
        "DELETE FROM charter.workflow_versions WHERE definition_kind = 'envelope'",
    ],
)
def test_a_stored_envelope_rejects_any_change(conn, statement):
    publish_envelope(conn, _contract())
    with pytest.raises(WorkflowVersionImmutableError), charter_errors():
        conn.execute(statement)


def test_an_incomplete_envelope_row_cannot_be_written(conn):
    import psycopg

    conn.execute("INSERT INTO charter.workflows (slug) VALUES ('envelope:x')")
    with pytest.raises(psycopg.errors.CheckViolation, match="envelope_is_complete"):
        conn.execute(
            "INSERT INTO charter.workflow_versions (id, workflow_slug, version, "
            "definition_kind) VALUES ('v', 'envelope:x', 1, 'envelope')"
        )
