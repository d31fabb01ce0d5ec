"""The insertion state chart of seed 001, row by row, on a real database."""

import threading

import psycopg
import pytest

from charter.client.client import Client
from charter.errors import (
    InvocationExistsError,
    InvocationIdRequiredError,
    InvocationIdTakenError,
    ParentVersionNotFoundError,
    RegistryInputError,
    RunStateError,
    VersionExistsError,
    VersionIdTakenError,
    VersionNotFoundError,
    WorkflowExistsError,
    WorkflowMismatchError,
    WorkflowNotFoundError,
    WorkflowVersionImmutableError,
)

DSL = {"model": "gpt", "prompt": "Summarise {ticket}"}


@pytest.fixture
def reg(db_url):
    with Client(db_url) as client:
        yield client.registry


def _counts(db_url):
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM charter.workflows), "
            "(SELECT count(*) FROM charter.workflow_versions), "
            "(SELECT count(*) FROM charter.runs)"
        ).fetchone()


def _codes(result):
    return [(w.code, w.severity) for w in result.warnings]


# -- the complete state matrix: (WF, WFV, WI) exists? x operation ------------------------


def _arrange(reg, wf, wfv, wi):
    """Bring the database into a state of the matrix (only consistent states exist)."""
    if wf:
        reg.ensure_workflow("wf", "a workflow")
    if wfv:
        reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    if wi:
        reg.create_invocation("inv", "ver")


@pytest.mark.parametrize(
    ("wf", "wfv", "wi", "operation", "outcome"),
    [
        (False, False, False, "invocation", VersionNotFoundError),
        (False, False, False, "version", ("created", [("PARENT_WORKFLOW_AUTO_CREATED", "WARN")])),
        (False, False, False, "workflow", ("created", [])),
        (True, False, False, "invocation", VersionNotFoundError),
        (True, False, False, "version", ("created", [])),
        (True, False, False, "workflow", ("updated", [("WORKFLOW_EXISTS_UPDATED", "INFO")])),
        (True, True, False, "invocation", ("created", [])),
        (True, True, False, "version", ("updated", [("VERSION_EXISTS_UPDATED", "INFO")])),
        (True, True, False, "workflow", ("updated", [("WORKFLOW_EXISTS_UPDATED", "INFO")])),
        (True, True, True, "invocation", ("updated", [("INVOCATION_EXISTS_UPDATED", "INFO")])),
        (True, True, True, "version", ("updated", [("VERSION_EXISTS_UPDATED", "INFO")])),
        (True, True, True, "workflow", ("updated", [("WORKFLOW_EXISTS_UPDATED", "INFO")])),
    ],
)
def test_state_matrix(reg, db_url, wf, wfv, wi, operation, outcome):
    _arrange(reg, wf, wfv, wi)
    before = _counts(db_url)

    def act():
        if operation == "workflow":
            return reg.ensure_workflow("wf", "described again")
        if operation == "version":
            return reg.create_workflow_version("wf", DSL, "v1 again", "init", version_id="ver")
        return reg.create_invocation("inv", "ver")

    if isinstance(outcome, type):
        with pytest.raises(outcome):
            act()
        assert _counts(db_url) == before  # a failed call writes nothing
        return
    result = act()
    assert (result.action, _codes(result)) == outcome


@pytest.mark.parametrize(
    "statement",
    [
        # WF missing + WFV exists, and WFV missing + WI exists, cannot be written at all:
        "INSERT INTO charter.workflow_versions (id, workflow_slug, version, definition_kind) "
        "VALUES ('orphan', 'no_such_workflow', 1, 'external')",
        "INSERT INTO charter.runs (id, workflow_slug, version_id, input) "
        "VALUES ('orphan-run', 'wf', 'no_such_version', 'null')",
    ],
)
def test_the_inconsistent_states_of_the_matrix_cannot_exist(reg, db_url, statement):
    reg.ensure_workflow("wf", "a workflow")
    with psycopg.connect(db_url) as conn, pytest.raises(psycopg.errors.ForeignKeyViolation):
        conn.execute(statement)


def test_a_workflow_cannot_be_deleted_out_from_under_its_versions(reg, db_url):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    with psycopg.connect(db_url) as conn, pytest.raises(psycopg.Error):
        conn.execute("DELETE FROM charter.workflows WHERE slug = 'wf'")


# -- section 1: workflows ----------------------------------------------------------------


def test_ensure_workflow_options(reg, db_url):
    created = reg.ensure_workflow("wf", "first", owner_id="clerk_1")
    assert (created.action, created.warnings) == ("created", [])
    skipped = reg.ensure_workflow("wf", "second", on_existing="skip")
    assert skipped.action == "skipped"
    assert skipped.warnings[0].message == "Workflow already exists (wf_id: wf). Skipping."
    with pytest.raises(WorkflowExistsError, match="Workflow already exists"):
        reg.ensure_workflow("wf", "third", on_existing="error")
    updated = reg.ensure_workflow("wf", "fourth")
    assert updated.warnings[0].message == "Workflow already exists (wf_id: wf). Updating."
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT description, owner_id FROM charter.workflows").fetchone()
    assert row == ("fourth", "clerk_1")


@pytest.mark.parametrize("wf_id", ["", "   ", "x" * 201])
def test_ensure_workflow_needs_an_id(reg, wf_id):
    with pytest.raises(RegistryInputError, match="workflow id"):
        reg.ensure_workflow(wf_id, "d")


@pytest.mark.parametrize("description", [None, "", "   "])
def test_ensure_workflow_needs_a_description(reg, db_url, description):
    """Seed 001: a workflow's description is required, on creation and on update."""
    with pytest.raises(RegistryInputError, match="needs a description") as caught:
        reg.ensure_workflow("wf", description)
    assert "ensure_workflow(" in caught.value.message  # the fix, by example
    reg.ensure_workflow("wf", "described")
    with pytest.raises(RegistryInputError, match="needs a description"):
        reg.ensure_workflow("wf", description)  # an update may not clear it either
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT description FROM charter.workflows").fetchall() == [
            ("described",)
        ]


def test_unknown_on_existing_is_refused(reg):
    with pytest.raises(RegistryInputError, match="on_existing='merge'"):
        reg.ensure_workflow("wf", "d", on_existing="merge")


# -- section 2: versions -----------------------------------------------------------------


def test_version_ids_are_generated_when_not_given(reg):
    made = reg.create_workflow_version("wf", DSL, "v1", "init")
    assert made.version_id.startswith("wf_ver_") and len(made.version_id) == len("wf_ver_") + 12
    assert made.version == 1
    assert reg.create_workflow_version("wf", DSL, "v2", "mutation").version == 2


def test_auto_created_parent_uses_the_commit_message_and_warns(reg, db_url):
    made = reg.create_workflow_version("wf_new", DSL, "initial import", "init")
    [warning] = made.warnings
    assert (warning.code, warning.severity) == ("PARENT_WORKFLOW_AUTO_CREATED", "WARN")
    assert warning.message == (
        "Workflow not found for version (workflow_id: wf_new). "
        "Auto-creating with description='initial import'."
    )
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT description FROM charter.workflows").fetchone() == (
            "initial import",
        )


def test_strict_mode_refuses_a_missing_parent_and_writes_nothing(reg, db_url):
    with pytest.raises(WorkflowNotFoundError, match="Workflow wf_new not found"):
        reg.create_workflow_version("wf_new", DSL, "v1", "init", auto_create_parent=False)
    assert _counts(db_url) == (0, 0, 0)


def test_existing_version_options(reg):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    skipped = reg.create_workflow_version(
        "wf", DSL, "v1b", "init", version_id="ver", on_existing="skip"
    )
    assert skipped.action == "skipped" and skipped.warnings[0].code == "VERSION_EXISTS_SKIPPED"
    with pytest.raises(VersionExistsError):
        reg.create_workflow_version("wf", DSL, "v1c", "init", version_id="ver", on_existing="error")
    updated = reg.create_workflow_version(
        "wf", DSL, "better message", "init", version_id="ver", generation_id="gen-3"
    )
    assert updated.action == "updated" and updated.version == 1


def test_a_version_id_of_another_workflow_is_an_error(reg):
    reg.create_workflow_version("wf_a", DSL, "v1", "init", version_id="shared")
    with pytest.raises(VersionIdTakenError, match="already used by different workflow"):
        reg.create_workflow_version("wf_b", DSL, "v1", "init", version_id="shared")


def test_a_versions_dsl_and_lineage_never_change(reg):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="v1")
    with pytest.raises(WorkflowVersionImmutableError, match="new version"):
        reg.create_workflow_version("wf", {**DSL, "model": "other"}, "v1", "init", version_id="v1")
    with pytest.raises(WorkflowVersionImmutableError):
        reg.create_workflow_version("wf", DSL, "v1", "mutation", version_id="v1")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"operation": "evolve"}, "operation='evolve'"),
        ({"commit_message": None}, "no commit_message"),
        ({"dsl": None}, "no dsl"),
        ({"version_id": ""}, "non-empty"),
        ({"workflow_id": ""}, "workflow_id is required"),
    ],
)
def test_bad_version_input_is_refused(reg, kwargs, fragment):
    args = {"workflow_id": "wf", "dsl": DSL, "commit_message": "m", "operation": "init", **kwargs}
    with pytest.raises(RegistryInputError, match=fragment):
        reg.create_workflow_version(
            args.pop("workflow_id"),
            args.pop("dsl"),
            args.pop("commit_message"),
            args.pop("operation"),
            **args,
        )


def test_dsl_that_is_not_json_is_refused_before_the_database(reg):
    from charter.errors import RunInputError

    with pytest.raises(RunInputError, match="The dsl is not JSON"):
        reg.create_workflow_version("wf", {"when": object()}, "m", "init")


def test_lineage_of_crossovers_and_mutations(reg):
    a = reg.create_workflow_version("wf", {"g": "a"}, "seed a", "init", version_id="a")
    b = reg.create_workflow_version("wf", {"g": "b"}, "seed b", "immigrant", version_id="b")
    c = reg.create_workflow_version(
        "wf",
        {"g": "ab"},
        "cross",
        "crossover",
        version_id="c",
        parent_version_ids=["a", "b"],
        generation_id="g1",
    )
    d = reg.create_workflow_version(
        "wf",
        {"g": "ab'"},
        "mutate",
        "mutation",
        version_id="d",
        parent_version_ids=["c"],
        generation_id="g2",
    )
    assert [v.version for v in (a, b, c, d)] == [1, 2, 3, 4]
    tree = reg.lineage("d")
    assert (tree.version_id, tree.operation, tree.generation_id) == ("d", "mutation", "g2")
    assert [p.version_id for p in tree.parents] == ["c"]
    assert [p.version_id for p in tree.parents[0].parents] == ["a", "b"]
    assert tree.ancestors() == ["c", "a", "b"]
    with pytest.raises(ParentVersionNotFoundError, match="Parent version zzz"):
        reg.create_workflow_version("wf", {"g": "x"}, "m", "mutation", parent_version_ids=["zzz"])
    with pytest.raises(VersionNotFoundError):
        reg.lineage("nope")


def test_a_dsl_that_is_a_flow_shape_makes_a_runnable_version(reg, db_url):
    from charter import extract_flow_shape
    from tests.flows_for_tests import diamond
    from tests.workers import running_worker

    flow = diamond()
    made = reg.create_workflow_version(
        "diamond", extract_flow_shape(flow), "from the registry", "init", version_id="diamond-v1"
    )
    assert made.runnable
    other = reg.create_workflow_version("notes", {"text": "not a flow"}, "m", "init")
    assert not other.runnable
    with psycopg.connect(db_url) as conn:
        stored = dict(
            conn.execute(
                "SELECT id, compiled FROM charter.workflow_versions WHERE id IN ('diamond-v1', %s)",
                (other.version_id,),
            ).fetchall()
        )
    from charter.compiler.compiled import verify_compiled

    verify_compiled(stored["diamond-v1"])  # compiled, with a hash that checks out
    assert stored["diamond-v1"]["topologicalOrder"] == ["seed", "count", "square", "total"]
    assert stored[other.version_id] is None
    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start("diamond", {"n": 2}, run_id="reg-run", version_id="diamond-v1")
        run = client.wait(run_id, timeout=30)
    assert run.status == "completed" and run.version_id == "diamond-v1"
    # a run charter started with a run id is an invocation of its pinned version
    again = reg.create_invocation("reg-run", "diamond-v1")
    assert again.action == "updated"


# -- section 3: invocations --------------------------------------------------------------


@pytest.mark.parametrize("invocation_id", ["", "  ", None])
def test_an_invocation_id_is_required_and_never_generated(reg, invocation_id):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    with pytest.raises(InvocationIdRequiredError, match="Cannot auto-generate"):
        reg.create_invocation(invocation_id, "ver")


def test_invocation_defaults_and_inferred_workflow(reg, db_url):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    made = reg.create_invocation("inv", "ver", owner_id="clerk_9")
    assert (made.workflow_id, made.action, made.warnings) == ("wf", "created", [])
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT status, usd_cost, finished_at, created_at <= now(), owner_id "
            "FROM charter.runs WHERE id = 'inv'"
        ).fetchone()
    assert row == ("running", 0, None, True, "clerk_9")


def test_invocation_version_checks(reg):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    reg.create_workflow_version("wf_other", DSL, "v1", "init", version_id="other")
    with pytest.raises(VersionNotFoundError, match="Workflow version missing not found"):
        reg.create_invocation("inv", "missing")
    with pytest.raises(WorkflowMismatchError, match="belongs to workflow wf, not wf_other"):
        reg.create_invocation("inv", "ver", workflow_id="wf_other")
    reg.create_invocation("inv", "ver", workflow_id="wf")
    with pytest.raises(InvocationIdTakenError, match="different workflow version"):
        reg.create_invocation("inv", "other")
    with pytest.raises(InvocationExistsError):
        reg.create_invocation("inv", "ver", on_existing="error")
    with pytest.raises(RegistryInputError, match="not one of update, error"):
        reg.create_invocation("inv", "ver", on_existing="skip")


@pytest.mark.parametrize(
    ("run_id", "generation_id", "expected"),
    [
        ("evo-1", None, [("EVOLUTION_GENERATION_MISSING", "WARN")]),
        (None, "gen-1", [("EVOLUTION_RUN_MISSING", "WARN")]),
        ("evo-1", "gen-1", []),
        (None, None, []),
    ],
)
def test_partial_evolution_context_warns(reg, run_id, generation_id, expected):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    made = reg.create_invocation("inv", "ver", run_id=run_id, generation_id=generation_id)
    assert _codes(made) == expected


def test_update_invocation_status_end_time_and_cost(reg):
    import datetime

    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    reg.create_invocation("inv", "ver")
    cost = reg.update_invocation("inv", usd_cost=0.0125)
    assert (cost.status, cost.usd_cost, cost.end_time) == ("running", 0.0125, None)
    end = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)
    done = reg.update_invocation("inv", status="completed", end_time=end)
    assert (done.status, done.end_time, done.usd_cost) == ("completed", end, 0.0125)
    with pytest.raises(RegistryInputError, match="status='finished'"):
        reg.update_invocation("inv", status="finished")
    with pytest.raises(RegistryInputError, match="negative"):
        reg.update_invocation("inv", usd_cost=-1)
    with pytest.raises(RegistryInputError, match="end time while running"):
        reg.update_invocation("inv", status="running", end_time=end)
    from charter.errors import RunNotFoundError

    with pytest.raises(RunNotFoundError):
        reg.update_invocation("nope", status="failed")


def test_charter_runs_keep_the_status_their_steps_give_them(reg, db_url):
    from tests.flows_for_tests import diamond

    with Client(db_url) as client:
        run_id = client.start(diamond(), {"n": 1})
        with pytest.raises(RunStateError, match="executed by charter"):
            client.registry.update_invocation(run_id, status="completed")
        assert client.registry.update_invocation(run_id, usd_cost=1.5).usd_cost == 1.5


# -- concurrency: racing calls on the same ids --------------------------------------------


def _race(db_url, call, workers=8):
    results, errors = [], []
    barrier = threading.Barrier(workers)

    def one():
        with Client(db_url, migrate=False) as client:
            barrier.wait()
            try:
                results.append(call(client.registry))
            except Exception as exc:
                errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results, errors


def test_racing_ensure_workflow_creates_once(reg, db_url):
    results, errors = _race(db_url, lambda r: r.ensure_workflow("wf", "d"))
    assert errors == []
    assert sorted(r.action for r in results) == ["created"] + ["updated"] * 7
    assert _counts(db_url)[0] == 1


def test_racing_version_creation_with_one_id(reg, db_url):
    results, errors = _race(
        db_url,
        lambda r: r.create_workflow_version(
            "wf", DSL, "v1", "init", version_id="ver", on_existing="error"
        ),
    )
    assert len(results) == 1 and results[0].action == "created"
    assert len(errors) == 7 and all(isinstance(e, VersionExistsError) for e in errors)
    assert _counts(db_url)[:2] == (1, 1)


def test_racing_generated_versions_number_uniquely(reg, db_url):
    results, errors = _race(db_url, lambda r: r.create_workflow_version("wf", DSL, "v", "init"))
    assert errors == []
    assert sorted(r.version for r in results) == list(range(1, 9))


def test_racing_invocations_with_one_id(reg, db_url):
    reg.create_workflow_version("wf", DSL, "v1", "init", version_id="ver")
    results, errors = _race(db_url, lambda r: r.create_invocation("inv", "ver"))
    assert errors == []
    assert sorted(r.action for r in results) == ["created"] + ["updated"] * 7
    strict, strict_errors = _race(
        db_url, lambda r: r.create_invocation("inv2", "ver", on_existing="error")
    )
    assert len(strict) == 1 and len(strict_errors) == 7
    assert all(isinstance(e, InvocationExistsError) for e in strict_errors)
    assert _counts(db_url)[2] == 2
