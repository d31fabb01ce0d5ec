"""mutate(): the one write path — versions, audit, events, and every refusal with the input
that causes it, each leaving everything recorded as it was."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from charter import AsyncClient
from charter.errors import (
    ActorUnknownError,
    ContractPolicyMissingError,
    DocumentAmendedError,
    DocumentExistsError,
    DocumentInvalidError,
    DocumentNotFoundError,
    DocumentVersionConflictError,
    EntityTypeUnknownError,
    LifecycleTransitionError,
    PermissionDeniedError,
    PolicyDeniedError,
    WorkflowEditLockedError,
)
from tests.ops.documents.conftest import counts


def _events(db_url, document_id):
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT event_type, entity_version, payload, trace_id FROM charter.document_events "
            "WHERE document_id = %s ORDER BY id",
            (document_id,),
        ).fetchall()


def test_a_document_lives_through_create_update_gates_and_actions(acme, db_url):
    docs = acme.documents
    doc = docs.create("invoice", {"grand_total": 12500, "vendor_id": "v-7"}, actor="u-1")
    assert (doc.version, doc.state, doc.org_id) == (1, "draft", "acme")
    doc = docs.update(
        doc.id, {"grand_total": 13000}, actor="u-1", expected_version=1, reason="typo"
    )
    assert doc.version == 2 and doc.data == {"grand_total": 13000, "vendor_id": "v-7"}
    doc = docs.transition(doc.id, "submit", actor="u-1")
    assert doc.state == "submitted"
    doc = docs.transition(doc.id, "approve", actor="u-2", to="active")
    doc = docs.mutate(doc.id, "invoice.post", {"gl_batch": "B-7"}, actor="u-3")
    assert (doc.version, doc.state, doc.data["gl_batch"]) == (5, "active", "B-7")

    assert docs.get(doc.id, version=1).data == {"grand_total": 12500, "vendor_id": "v-7"}
    assert docs.get(doc.id, version=3).state == "submitted"
    history = docs.history(doc.id)
    assert [(h.version, h.action, h.actor) for h in history] == [
        (1, "create", "u-1"),
        (2, "update", "u-1"),
        (3, "submit", "u-1"),
        (4, "approve", "u-2"),
        (5, "invoice.post", "u-3"),
    ]
    assert history[1].changes == {"grand_total": {"from": 12500, "to": 13000}}
    assert history[1].reason == "typo" and history[1].via == "api"
    assert history[2].changes == {"$state": {"from": "draft", "to": "submitted"}}
    assert [e[0] for e in _events(db_url, doc.id)] == [
        "on_create",
        "on_mutation",
        "on_lifecycle_transition",
        "on_lifecycle_transition",
        "on_mutation",
    ]
    assert [d.id for d in docs.list(entity_type="invoice", state="active")] == [doc.id]


def test_versions_reproduce_every_change(acme):
    docs = acme.documents
    doc = docs.create("invoice", {"grand_total": 1}, actor="u-1")
    for total in range(2, 6):
        doc = docs.update(doc.id, {"grand_total": total, "note": {"n": total}}, actor="u-1")
    replayed: dict[str, object] = {}
    for entry in docs.history(doc.id):
        for field, change in entry.changes.items():
            replayed[field] = change["to"]
        assert replayed == docs.get(doc.id, version=entry.version).data


@pytest.mark.parametrize(
    ("case", "error", "fragment"),
    [
        ("unknown actor", ActorUnknownError, "not in the directory of org 'acme'"),
        ("role missing", PolicyDeniedError, "one of the roles"),
        ("rule false", PolicyDeniedError, "org.approvers contains actor.id"),
        ("stale version", DocumentVersionConflictError, "is at version 2, not 1"),
        ("undeclared field", DocumentInvalidError, "'colour' is not declared"),
        ("wrong type", DocumentInvalidError, "'grand_total' must be a number"),
        ("action field", DocumentInvalidError, "may set only"),
        ("illegal gate", LifecycleTransitionError, "does not lead anywhere from state 'draft'"),
        ("ambiguous gate", LifecycleTransitionError, "say which with to="),
        ("unknown action", LifecycleTransitionError, "neither update, a gate nor an action"),
        ("gate with changes", DocumentInvalidError, "changes no fields"),
        ("locked", WorkflowEditLockedError, "is locked (state 'active')"),
        ("missing", DocumentNotFoundError, "does not exist in org 'acme'"),
        ("taken id", DocumentExistsError, "already exists"),
        ("unknown type", EntityTypeUnknownError, "No contract is published"),
    ],
)
def test_every_refusal_names_the_problem_and_writes_nothing(acme, db_url, case, error, fragment):
    docs = acme.documents
    draft = docs.create("invoice", {"grand_total": 10}, actor="u-1", id="inv-draft")
    draft = docs.update(draft.id, {"grand_total": 11}, actor="u-1")
    submitted = docs.transition(docs.create("invoice", {}, actor="u-1").id, "submit", actor="u-1")
    active = docs.transition(submitted.id, "approve", actor="u-2", to="active")
    submitted = docs.transition(docs.create("invoice", {}, actor="u-1").id, "submit", actor="u-1")
    attempts = {
        "unknown actor": lambda: docs.update(draft.id, {"grand_total": 1}, actor="nobody"),
        "role missing": lambda: docs.create("invoice", {}, actor="u-3"),
        "rule false": lambda: docs.transition(submitted.id, "approve", actor="u-9", to="active"),
        "stale version": lambda: docs.update(
            draft.id, {"grand_total": 1}, actor="u-1", expected_version=1
        ),
        "undeclared field": lambda: docs.update(draft.id, {"colour": "red"}, actor="u-1"),
        "wrong type": lambda: docs.update(draft.id, {"grand_total": "lots"}, actor="u-1"),
        "action field": lambda: docs.mutate(
            active.id, "invoice.post", {"grand_total": 1}, actor="u-3"
        ),
        "illegal gate": lambda: docs.transition(draft.id, "approve", actor="u-2"),
        "ambiguous gate": lambda: docs.transition(submitted.id, "approve", actor="u-2"),
        "unknown action": lambda: docs.mutate(draft.id, "invoice.burn", {}, actor="u-1"),
        "gate with changes": lambda: docs.mutate(
            draft.id, "submit", {"grand_total": 1}, actor="u-1"
        ),
        "locked": lambda: docs.update(active.id, {"grand_total": 1}, actor="u-1"),
        "missing": lambda: docs.update("no-such-doc", {}, actor="u-1"),
        "taken id": lambda: docs.create("invoice", {}, actor="u-1", id="inv-draft"),
        "unknown type": lambda: docs.create("purchase_order", {}, actor="u-1"),
    }
    before = counts(db_url)
    with pytest.raises(error) as caught:
        attempts[case]()
    assert fragment in caught.value.message
    assert counts(db_url) == before  # nothing recorded is lost, nothing half-written
    assert docs.get(draft.id).version == 2


def test_an_edit_in_an_amend_only_window_is_written_and_forces_an_amendment_event(acme, db_url):
    docs = acme.documents
    doc = docs.transition(
        docs.create("invoice", {"grand_total": 5}, actor="u-1").id, "submit", actor="u-1"
    )
    doc = docs.update(doc.id, {"grand_total": 6}, actor="u-1")  # no worker runs: mutate() decides
    assert doc.data["grand_total"] == 6 and doc.state == "submitted"
    events = _events(db_url, doc.id)
    assert [e[0] for e in events][-2:] == ["on_mutation", "on_amendment"]
    amendment = events[-1]
    assert amendment[1] == doc.version and amendment[2]["changes"]["grand_total"]["to"] == 6
    assert amendment[3] == events[-2][3]  # one trace for the mutation and what it forced


def test_amending_a_locked_document_creates_a_new_one_pointing_to_it(acme, db_url):
    docs = acme.documents
    original = docs.create("invoice", {"grand_total": 100, "vendor_id": "v-7"}, actor="u-1")
    original = docs.transition(original.id, "submit", actor="u-1")
    original = docs.transition(original.id, "approve", actor="u-2", to="active")
    new = docs.amend(original.id, {"grand_total": 90}, actor="u-1", reason="credit")
    assert new.id != original.id and new.amended_from == original.id
    assert (new.version, new.state) == (1, "draft")
    assert new.data == {"grand_total": 90, "vendor_id": "v-7"}
    superseded = docs.get(original.id)  # its data untouched; the contract declares amended
    assert (superseded.version, superseded.state) == (original.version + 1, "amended")
    assert superseded.data == original.data and superseded.amended_by == new.id
    assert [e[0] for e in _events(db_url, original.id)][-1] == "on_amended"
    assert _events(db_url, new.id)[0][2]["amendedFrom"] == original.id
    assert docs.history(original.id)[-1].action == "amended"
    draft = docs.create("invoice", {"grand_total": 1}, actor="u-1")
    same = docs.amend(draft.id, {"grand_total": 2}, actor="u-1")  # a draft: a plain update
    assert same.id == draft.id and same.version == 2


def test_events_are_deduplicated_by_their_key(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with psycopg.connect(db_url, autocommit=True) as conn:
        again = conn.execute(
            "SELECT charter._emit_event('acme', %s, 'invoice', 1, 'on_create', '{}', 't')",
            (doc.id,),
        ).fetchone()[0]
        keys = conn.execute(
            "SELECT count(*) FROM charter.outbox_receipts WHERE org_id = 'acme'"
        ).fetchone()[0]
    assert again is False and keys == 1
    assert len(_events(db_url, doc.id)) == 1


def test_versions_audit_and_receipts_are_append_only(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with psycopg.connect(db_url, autocommit=True) as conn:
        for statement in (
            "UPDATE charter.document_versions SET data = '{}'",
            "DELETE FROM charter.document_versions",
            "UPDATE charter.document_audit SET actor = 'x'",
            "DELETE FROM charter.document_audit",
            "DELETE FROM charter.outbox_receipts",
        ):
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(statement)
    assert len(acme.documents.history(doc.id)) == 1


def _engine_mutate(
    db_url: str,
    action: str,
    document_id: str | None,
    actor: str,
    changes: str | None = None,
    entity_type: str | None = None,
) -> str:
    """mutate() as the engine calls it: in SQL, on the schema owner's role."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT charter.mutate('acme', %s, %s, %s::jsonb, %s, %s)->>'id'",
            (action, document_id, changes, actor, entity_type),
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_reserved_actors_act_for_the_engine_and_are_recorded_as_such(acme, db_url):
    doc_id = _engine_mutate(db_url, "create", None, "system", entity_type="invoice")
    _engine_mutate(db_url, "update", doc_id, "service:erp-sync", changes='{"note": "synced"}')
    assert [(h.actor, h.run_as) for h in acme.documents.history(doc_id)] == [
        ("system", "system"),
        ("service:erp-sync", "service:erp-sync"),
    ]


@pytest.mark.parametrize("actor", ["system", "service:erp-sync", "service:ops"])
def test_an_application_never_acts_as_the_engine(acme, db_url, actor):
    """Whatever role the client runs on (here the schema's owner, which the database lets
    act as the engine), the client refuses the engine's actors for every document call."""
    doc = acme.documents.create("invoice", {}, actor="u-1")
    before = counts(db_url)
    calls = [
        lambda: acme.documents.create("invoice", {}, actor=actor),
        lambda: acme.documents.update(doc.id, {"note": "x"}, actor=actor),
        lambda: acme.documents.transition(doc.id, "submit", actor=actor),
        lambda: acme.documents.mutate(doc.id, "update", {"note": "x"}, actor=actor),
        lambda: acme.documents.amend(doc.id, {"note": "x"}, actor=actor),
    ]
    for call in calls:
        with pytest.raises(PermissionDeniedError) as caught:
            call()
        assert (
            actor in caught.value.message and "user of the org's directory" in caught.value.message
        )
        assert caught.value.code == "PERMISSION_DENIED"
    assert counts(db_url) == before

    async def asynchronous() -> None:
        async with AsyncClient(db_url, org_id="acme", migrate=False) as client:
            with pytest.raises(PermissionDeniedError):
                await client.documents.create("invoice", {}, actor=actor)
            with pytest.raises(PermissionDeniedError):
                await client.documents.amend(doc.id, {"note": "x"}, actor=actor)

    asyncio.run(asynchronous())
    assert counts(db_url) == before


def test_a_document_written_in_a_rolled_back_transaction_never_existed(acme, db_url):
    with psycopg.connect(db_url) as conn:
        with conn.transaction(force_rollback=True):
            doc = acme.documents.create("invoice", {}, actor="u-1", connection=conn)
            assert acme.documents.get(doc.id, connection=conn).version == 1
        with pytest.raises(DocumentNotFoundError):
            acme.documents.get(doc.id)
        with conn.transaction():
            kept = acme.documents.create("invoice", {}, actor="u-1", connection=conn)
    assert acme.documents.get(kept.id).version == 1


def test_the_async_api_is_the_same(acme, db_url):
    async def scenario():
        async with AsyncClient(db_url, org_id="acme") as client:
            doc = await client.documents.create("invoice", {"grand_total": 3}, actor="u-1")
            doc = await client.documents.transition(doc.id, "submit", actor="u-1")
            history = await client.documents.history(doc.id)
            assert (await client.directory.get_user("u-1")).manager == "u-9"
            current = await client.definitions.current("invoice")
            return doc, history, current

    doc, history, current = asyncio.run(scenario())
    assert doc.state == "submitted" and len(history) == 2 and current.kind == "envelope"


def test_the_policy_is_checked_before_anything_else_is_revealed(acme):
    docs = acme.documents
    doc = docs.transition(docs.create("invoice", {}, actor="u-1").id, "submit", actor="u-1")
    with pytest.raises(PolicyDeniedError):  # not the stale version, not the legal gates
        docs.transition(doc.id, "approve", actor="u-9", to="nowhere", expected_version=1)


def _memo_contract(policies):
    return {
        "entityType": "memo",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "open", "editWindow": "editable"},
            {"id": "done", "editWindow": "locked"},
        ],
        "transitions": [
            {"from": "draft", "to": "open", "gate": "open"},
            {"from": "open", "to": "done", "gate": "close"},
        ],
        "fields": {"text": "string", "stamp": "string"},
        "actions": [{"actionType": "memo.stamp", "fields": ["stamp"]}],
        "policies": policies,
    }


def _store_as_published_before(db_url, contract):
    """Stores a contract as publish did before a gate or action needed a policy: its
    policies as given (publish now refuses it with CONTRACT_POLICY_MISSING)."""
    from psycopg.types.json import Jsonb

    from charter.compiler.effective import compile_effective
    from charter.compiler.envelope import generate_envelope
    from charter.dsl.contract import EntityContract

    granted = EntityContract.from_json({**contract, "policies": {"*": {"rule": "true"}}})
    with pytest.raises(ContractPolicyMissingError):
        EntityContract.from_json(contract)
    envelope = generate_envelope(granted)
    stored = {k: v for k, v in granted.stored_json().items() if k != "policies"}
    if contract.get("policies"):
        stored["policies"] = contract["policies"]
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "SELECT charter.publish_contract(%s, %s, %s)",
            (Jsonb(stored), Jsonb(envelope), Jsonb(compile_effective(envelope))),
        )


def test_a_gate_or_action_no_policy_grants_is_refused_for_a_contract_stored_before(acme, db_url):
    """Closed by default, in the write path too: a contract stored before publish required a
    policy for every gate and action refuses those to every user (the engine's reserved
    actors still pass); create and update without a policy stay open."""
    _store_as_published_before(db_url, _memo_contract({"close": {"roles": ["manager"]}}))
    docs = acme.documents
    doc = docs.create("memo", {"text": "hi"}, actor="u-1")
    doc = docs.update(doc.id, {"text": "hello"}, actor="u-1")
    before = counts(db_url)
    with pytest.raises(ContractPolicyMissingError) as caught:
        docs.transition(doc.id, "open", actor="u-2")
    assert "gate 'open'" in caught.value.message and '"*"' in caught.value.message
    assert "charter publish" in caught.value.message  # the fix: publish it with policies
    with pytest.raises(ContractPolicyMissingError, match=r"action 'memo\.stamp'"):
        docs.mutate(doc.id, "memo.stamp", {"stamp": "S"}, actor="u-1")
    assert counts(db_url) == before
    _engine_mutate(db_url, "open", doc.id, "system")  # the engine passes
    assert docs.transition(doc.id, "close", actor="u-2").state == "done"  # its own policy


def test_the_default_policy_covers_what_has_none_of_its_own(acme, db_url):
    """ "*" is the policy of create, update, every gate and action without one; a key's own
    policy comes first."""
    policies = {"*": {"roles": ["clerk"]}, "close": {"roles": ["manager"]}}
    acme.definitions.publish(_memo_contract(policies))
    docs = acme.documents
    with pytest.raises(PolicyDeniedError, match="may not create"):
        docs.create("memo", {"text": "x"}, actor="u-2")  # a manager, not a clerk
    doc = docs.create("memo", {"text": "x"}, actor="u-1")
    with pytest.raises(PolicyDeniedError, match="may not update"):
        docs.update(doc.id, {"text": "y"}, actor="u-3")
    with pytest.raises(PolicyDeniedError, match="may not open"):
        docs.transition(doc.id, "open", actor="u-2")
    doc = docs.transition(doc.id, "open", actor="u-1")
    doc = docs.mutate(doc.id, "memo.stamp", {"stamp": "S"}, actor="u-1")
    with pytest.raises(PolicyDeniedError, match="may not close"):
        docs.transition(doc.id, "close", actor="u-1")  # close has its own: managers
    assert docs.transition(doc.id, "close", actor="u-2").state == "done"


def test_a_contract_with_a_gate_no_policy_grants_is_not_published(acme, db_url):
    with pytest.raises(
        ContractPolicyMissingError, match=r"the gate 'open' and the action 'memo\.stamp'"
    ):
        acme.definitions.publish(_memo_contract({"close": {"roles": ["manager"]}}))
    with psycopg.connect(db_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM charter.workflows WHERE slug = 'envelope:memo'"
        ).fetchone() == (0,)


def test_a_document_is_amended_once_and_an_amend_only_window_takes_the_edit(acme, db_url):
    docs = acme.documents
    active = docs.transition(docs.create("invoice", {}, actor="u-1").id, "submit", actor="u-1")
    submitted = docs.create("invoice", {"grand_total": 1}, actor="u-1")
    submitted = docs.transition(submitted.id, "submit", actor="u-1")
    edited = docs.amend(submitted.id, {"grand_total": 2}, actor="u-1")  # amend_only: an update
    assert edited.id == submitted.id and edited.version == 3
    assert [e[0] for e in _events(db_url, submitted.id)][-1] == "on_amendment"
    active = docs.transition(active.id, "approve", actor="u-2", to="active")
    first = docs.amend(active.id, {"grand_total": 9}, actor="u-1")
    with pytest.raises(DocumentAmendedError, match=f"was amended by '{first.id}'"):
        docs.amend(active.id, {"grand_total": 8}, actor="u-1")
    assert docs.amend(first.id, {"grand_total": 8}, actor="u-1").id == first.id  # a draft


def test_concurrent_creates_with_one_id_give_one_document_and_a_coded_refusal(acme):
    import threading

    outcomes: list[object] = []

    def create() -> None:
        try:
            outcomes.append(acme.documents.create("invoice", {}, actor="u-1", id="inv-race").id)
        except DocumentExistsError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, outcomes)) == ["DOCUMENT_EXISTS"] * 5 + ["inv-race"]


def test_mutate_inlines_its_sql_helpers(acme, db_url):
    """A SQL-language function that PostgreSQL does not inline is planned again in every
    transaction. mutate()'s SQL helpers (the event key, the document as JSON) must be
    inlined; track_functions counts only the calls that were not."""
    with psycopg.connect(db_url) as conn:
        conn.execute("SET track_functions = 'all'")
        for action, document, changes in (
            ("create", "inl-1", '{"grand_total": 5}'),
            ("update", "inl-1", '{"grand_total": 6}'),
            ("submit", "inl-1", None),
        ):
            conn.execute(
                "SELECT charter.mutate('acme', %s, %s, %s, 'u-1', 'invoice')",
                (action, document, changes),
            )
        called = conn.execute(
            "SELECT f.funcname, l.lanname FROM pg_stat_xact_user_functions AS f"
            " JOIN pg_proc AS p ON p.oid = f.funcid JOIN pg_language AS l ON l.oid = p.prolang"
        ).fetchall()
    assert ("mutate", "plpgsql") in called
    assert [name for name, language in called if language == "sql"] == []


FIELDS = {"n": "number", "s": "string", "a": "any", "o": "object"}
VALUES = (1, "x", None, {"k": 1}, [1], True)


@pytest.mark.parametrize("declared", [FIELDS, None], ids=["fields", "no-fields"])
@pytest.mark.parametrize("allowed", [None, ["n", "a"]], ids=["update", "action"])
def test_the_patch_check_in_mutates_pass_refuses_what_checked_changes_refuses(
    db_url, declared, allowed
):
    """mutate() checks an update's fields in the pass that computes its changes
    (_field_refused) and calls _checked_changes only to say what is wrong: the two must
    agree on every field, or a refused value would be written."""
    contract = {"entityType": "t"} if declared is None else {"entityType": "t", "fields": declared}
    with psycopg.connect(db_url, autocommit=True) as conn:
        for key in (*FIELDS, "undeclared"):
            for value in VALUES:
                patch = psycopg.types.json.Jsonb({key: value})
                refused = conn.execute(
                    "SELECT charter._field_refused(%s::jsonb -> 'fields', %s, %s, %s::jsonb -> %s)",
                    (
                        psycopg.types.json.Jsonb(contract),
                        None if allowed is None else psycopg.types.json.Jsonb(allowed),
                        key,
                        patch,
                        key,
                    ),
                ).fetchone()[0]
                sqlstate = None
                try:
                    conn.execute(
                        "SELECT charter._checked_changes(%s, %s, %s, 'update')",
                        (
                            psycopg.types.json.Jsonb(contract),
                            patch,
                            None if allowed is None else psycopg.types.json.Jsonb(allowed),
                        ),
                    )
                except psycopg.Error as exc:
                    sqlstate = exc.sqlstate
                assert sqlstate in (None, "CH032"), (key, value, sqlstate)
                assert refused is (sqlstate == "CH032"), (key, value)


POLICIES = (
    None,
    {},
    {"roles": ["clerk"]},
    {"roles": ["clerk", "manager"]},
    {"roles": []},
    {"roles": "clerk"},
    {"roles": [["clerk"]]},
    {"roles": [1, "clerk"]},
    {"roles": ["clerk"], "rule": "true", "compiled": True},
)
ACTORS = (
    {"id": "u-1", "roles": ["clerk"], "reserved": False},
    {"id": "u-2", "roles": ["manager", "auditor"], "reserved": False},
    {"id": "u-3", "roles": [], "reserved": False},
    {"id": "system", "roles": [], "reserved": True},
)


def _string_roles(policy):
    roles = policy.get("roles", [])
    return isinstance(roles, list) and all(isinstance(role, str) for role in roles)


def test_a_policy_that_passes_without_a_call_is_one_check_policy_allows(db_url):
    """mutate() calls _check_policy only when _policy_passes cannot tell that the actor may
    act: whatever _policy_passes lets through, _check_policy must allow, and a policy of
    roles alone (strings, as publish requires) it refuses, _check_policy must refuse."""
    Jsonb = psycopg.types.json.Jsonb
    with psycopg.connect(db_url, autocommit=True) as conn:
        for policy, key in [(p, k) for p in POLICIES for k in ("act", "*")]:
            contract = Jsonb({"policies": {} if policy is None else {key: policy}})
            for actor in ACTORS:
                # mutate() passes the key's policy, else the "*" default
                passes = conn.execute(
                    "SELECT charter._policy_passes(coalesce(%s::jsonb #> '{policies,act}', "
                    "%s::jsonb #> '{policies,*}'), %s)",
                    (contract, contract, Jsonb(actor)),
                ).fetchone()[0]
                if passes:
                    conn.execute(
                        "SELECT charter._check_policy(%s, 'act', %s, '{}', '{}', '{}')",
                        (contract, Jsonb(actor)),
                    )
                elif policy is not None and "rule" not in policy and _string_roles(policy):
                    with pytest.raises(psycopg.Error):
                        conn.execute(
                            "SELECT charter._check_policy(%s, 'act', %s, '{}', '{}', '{}')",
                            (contract, Jsonb(actor)),
                        )
        assert conn.execute(
            'SELECT charter._policy_passes(\'{"roles": ["clerk"]}\', %s)', (Jsonb(ACTORS[0]),)
        ).fetchone()[0]


@pytest.mark.parametrize(
    ("nodes", "windows", "window"),
    [
        (["a", "b"], {"a": "editable", "b": "amend_only"}, "amend_only"),
        (["a", "b"], {"a": "locked", "b": "amend_only"}, "locked"),
        (["a"], {"a": "editable", "b": "locked"}, "editable"),
        (["c"], {"a": "locked"}, None),
        ([], {"a": "locked"}, None),
        (["a"], {"a": "unknown"}, None),
        (["a"], {"a": ["editable"]}, None),
        (["a"], [{"a": "editable"}], None),
        (["a"], None, None),
    ],
)
def test_the_window_of_an_instances_nodes_is_the_strictest_they_declare(
    db_url, nodes, windows, window
):
    """None means the state's window applies: no node declares one, or the compiled
    windows are malformed (a window that is not a string, windows that are not an object)."""
    with psycopg.connect(db_url) as conn:
        got = conn.execute(
            "SELECT charter._nodes_window(%s, %s::jsonb)",
            (nodes, psycopg.types.json.Jsonb(windows)),
        ).fetchone()[0]
    assert got == window
