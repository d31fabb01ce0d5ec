"""Published definitions per org, the directory, and org isolation (functions and RLS)."""

from __future__ import annotations

import copy
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.cli import main
from charter.errors import (
    ArgumentError,
    ContractError,
    DefinitionNotFoundError,
    DocumentNotFoundError,
    OrgMismatchError,
    PermissionDeniedError,
)
from charter.library.templates import TEMPLATES
from tests.ops.documents.conftest import invoice_contract


def _org_definition() -> dict[str, Any]:
    return copy.deepcopy(TEMPLATES["invoice_approval"].org)


def test_publishing_a_contract_and_an_org_definition_makes_the_effective_workflow_current(acme):
    defs = acme.definitions
    assert defs.publish(invoice_contract()).status == "verified"  # the fixture published it
    bare = defs.current("invoice")
    assert bare.kind == "envelope" and bare.compiled["kind"] == "effective"
    made = defs.publish(invoice_contract(), _org_definition())
    assert made.status == "published" and made.kind == "effective" and made.hash
    assert defs.publish(invoice_contract(), _org_definition()).status == "verified"
    current = defs.current("invoice")
    assert (current.version_id, current.hash) == (made.version_id, made.hash)
    assert any(node.startswith("usr:") for node in current.compiled["nodes"])
    # Another org still runs the bare envelope.
    with Client(acme.target.url, org_id="globex") as other:
        assert other.definitions.current("invoice").kind == "envelope"
    archived = defs.archive(made.version_id)
    assert archived.status == "archived"
    assert defs.current("invoice").kind == "envelope"  # back to the bare envelope


def test_a_draft_is_editable_until_published_and_frozen_afterwards(acme, db_url):
    defs = acme.definitions
    first = defs.save_draft(_org_definition())
    changed = _org_definition()
    changed["slots"]["slot:submitted_to_approved"]["editWindowOverride"] = "locked"
    second = defs.save_draft(changed)
    assert second.version_id == first.version_id and second.status == "draft"  # edited
    published = defs.publish(invoice_contract(), changed)  # promotes the draft
    with psycopg.connect(db_url, autocommit=True) as conn:
        status = conn.execute(
            "SELECT status FROM charter.workflow_versions WHERE id = %s", (first.version_id,)
        ).fetchone()[0]
        assert status == "published"
        with pytest.raises(psycopg.Error, match="immutable"):
            conn.execute(
                "UPDATE charter.workflow_versions SET dsl = '{}' WHERE id = %s",
                (published.version_id,),
            )
    with pytest.raises(DefinitionNotFoundError):
        defs.archive("wf_ver_nonexistent")


def test_bad_definitions_are_refused_with_the_rule(acme):
    broken = invoice_contract()
    broken["policies"]["teleport"] = {"roles": ["x"]}
    with pytest.raises(ContractError, match="'teleport' is neither create"):
        acme.definitions.publish(broken)
    bad_rule = invoice_contract()
    bad_rule["policies"]["create"] = {"rule": "actor.roles + 1"}
    with pytest.raises(ContractError, match=r"policies\.create\.rule"):
        acme.definitions.publish(bad_rule)
    bad_action = invoice_contract()
    bad_action["actions"] = [{"actionType": "post", "fields": ["gl_batch"]}]
    with pytest.raises(ContractError, match=r"look like .invoice\.post."):
        acme.definitions.publish(bad_action)
    outside = _org_definition()
    outside["slots"]["slot:submitted_to_approved"]["nodes"][0]["id"] = "sys:sneaky"
    with pytest.raises(ContractError):
        acme.definitions.publish(invoice_contract(), outside)


def test_the_directory_holds_users_roles_and_org_data(acme):
    directory = acme.directory
    assert directory.get_user("u-1").email == "ann@example.com"
    assert directory.users_with_role("manager") == ["u-2", "u-9"]
    directory.put_user("u-2", roles=["clerk"])  # roles replaced
    assert directory.users_with_role("manager") == ["u-9"]
    assert directory.remove_user("u-2") is True and directory.remove_user("u-2") is False
    assert directory.get_org()["trusted_vendors"] == ["v-7"]
    for reserved in ("system", "service:bot"):
        with pytest.raises(ArgumentError, match="reserved"):
            directory.put_user(reserved)


def test_an_org_cannot_see_or_touch_another_orgs_documents(acme, db_url):
    doc = acme.documents.create("invoice", {"grand_total": 1}, actor="u-1")
    with Client(db_url, org_id="globex") as globex:
        globex.directory.put_user("u-1", roles=["clerk", "manager"])
        for attempt in (
            lambda: globex.documents.get(doc.id),
            lambda: globex.documents.update(doc.id, {"grand_total": 2}, actor="u-1"),
            lambda: globex.documents.transition(doc.id, "submit", actor="u-1"),
            lambda: globex.documents.amend(doc.id, {"grand_total": 2}, actor="u-1"),
            lambda: globex.documents.history(doc.id),
        ):
            with pytest.raises(DocumentNotFoundError):
                attempt()
        assert globex.documents.list() == []
    assert acme.documents.get(doc.id).version == 1


def test_two_orgs_in_one_transaction_are_refused(acme, db_url):
    with psycopg.connect(db_url) as conn, conn.transaction():
        conn.execute("SELECT set_config('charter.org_id', 'globex', true)")
        with pytest.raises(OrgMismatchError):
            acme.documents.create("invoice", {}, actor="u-1", connection=conn)


@pytest.fixture
def app_login(login):
    return login("charter_app")


def test_row_level_security_shows_the_app_role_only_its_orgs_rows(acme, db_url, app_login):
    acme.documents.create("invoice", {"grand_total": 1}, actor="u-1")
    with Client(db_url, org_id="globex") as globex:
        globex.directory.put_user("g-1", roles=["clerk"])
        globex.documents.create("invoice", {"grand_total": 2}, actor="g-1")
    with psycopg.connect(app_login) as conn:
        tables = ("documents", "document_versions", "document_audit", "directory_users")
        unscoped = [conn.execute(f"SELECT count(*) FROM charter.{t}").fetchone()[0] for t in tables]
        assert unscoped == [0, 0, 0, 0]  # no org named: nothing visible
        conn.execute("SELECT set_config('charter.org_id', 'acme', false)")
        orgs = {row[0] for row in conn.execute("SELECT org_id FROM charter.documents")}
        assert orgs == {"acme"}
        users = {row[0] for row in conn.execute("SELECT user_id FROM charter.directory_users")}
        assert users == {"u-1", "u-2", "u-3", "u-9"}
        for statement in (
            "UPDATE charter.documents SET data = '{}'",
            "INSERT INTO charter.directory_users (org_id, user_id) VALUES ('acme', 'x')",
            "SELECT * FROM charter.document_events",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute(statement)
    # The app role writes through mutate() and publishes org definitions, not contracts.
    with Client(app_login, org_id="acme") as app:
        doc = app.documents.create("invoice", {"grand_total": 3}, actor="u-1")
        assert app.documents.get(doc.id).version == 1
        for reserved in ("system", "service:bot"):  # the engine's actors are not the app's
            with pytest.raises(PermissionDeniedError, match="engine's actors"):
                app.documents.update(doc.id, {"grand_total": 4}, actor=reserved)
            # nor does the database let the app role act as them, past the client
            with (
                psycopg.connect(app_login, autocommit=True) as conn,
                pytest.raises(psycopg.Error, match="reserved for the engine"),
            ):
                conn.execute(
                    """SELECT charter.mutate('acme', 'update', %s, '{"grand_total": 4}', %s)""",
                    (doc.id, reserved),
                )
        app.definitions.publish(invoice_contract(), _org_definition())
        changed = invoice_contract()
        changed["version"] = 2
        with pytest.raises(PermissionDeniedError, match="owner"):
            app.definitions.publish(changed)


def test_charter_publish_on_the_command_line(db_url, tmp_path, capsys):
    import json

    (tmp_path / "contract.json").write_text(json.dumps(invoice_contract()))
    (tmp_path / "org.json").write_text(json.dumps(_org_definition()))
    contract, org = str(tmp_path / "contract.json"), str(tmp_path / "org.json")
    assert main(["--database-url", db_url, "publish", contract]) == 0
    assert main(["--database-url", db_url, "publish", contract, org, "--org", "acme"]) == 0
    assert main(["--database-url", db_url, "publish", contract, org, "--org", "acme"]) == 0
    printed = capsys.readouterr().out
    assert "envelope: published" in printed and "effective: published" in printed
    assert "effective: verified" in printed


def test_a_forged_effective_workflow_may_not_loosen_an_edit_window(acme, db_url):
    import json

    envelope = acme.definitions.current("invoice").compiled
    forged = json.loads(json.dumps(envelope))
    forged["editWindows"]["sys:state:active"] = "editable"  # active invoices are locked
    with psycopg.connect(db_url, autocommit=True) as conn, pytest.raises(psycopg.Error) as caught:
        conn.execute(
            "SELECT charter.publish_org_definition('acme', 'invoice', '{}', %s, %s)",
            (json.dumps({"entityType": "invoice", "envelopeVersion": 1}), json.dumps(forged)),
        )
    assert "loosens or drops the edit window of 'sys:state:active'" in str(caught.value)


def test_archiving_a_published_patch_archives_what_was_compiled_from_it(acme):
    made = acme.definitions.publish(invoice_contract(), _org_definition())
    with psycopg.connect(acme.target.url) as conn:
        patch = conn.execute(
            "SELECT parent_version_id FROM charter.workflow_version_parents WHERE version_id = %s",
            (made.version_id,),
        ).fetchone()[0]
    assert acme.definitions.archive(patch).status == "archived"
    assert acme.definitions.current("invoice").kind == "envelope"


def test_an_envelope_is_not_a_flow_to_start(acme):
    from charter.errors import FlowNotFoundError

    with pytest.raises(FlowNotFoundError):
        acme.start("envelope:invoice", {})
