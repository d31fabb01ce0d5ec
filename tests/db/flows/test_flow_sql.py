"""The SQL side of seed 000: shapes, comparison, creation, deletion, ensure and deploy."""

import pytest
from psycopg.types.json import Jsonb

from charter import compile_flow, extract_flow_shape
from charter.db.sqlstate import charter_errors
from charter.errors import ConfigurationError, FlowShapeInvalidError, WorkflowVersionImmutableError
from charter.ops.flows import deploy_flow, ensure_flow_compiled
from tests.flows_for_tests import analyze_site, flow_from_shape


def _shape_in_db(conn, slug):
    return conn.execute("SELECT charter._get_flow_shape(%s)", (slug,)).fetchone()[0]


def _create(conn, slug, shape, compiled=None):
    with charter_errors():
        return conn.execute(
            "SELECT charter._create_flow_from_shape(%s, %s, %s)",
            (slug, Jsonb(shape), Jsonb(compiled) if compiled else None),
        ).fetchone()[0]


def _compare(conn, local, db):
    return conn.execute(
        "SELECT charter._compare_flow_shapes(%s, %s)", (Jsonb(local), Jsonb(db))
    ).fetchone()[0]


def _counts(conn, slug):
    return conn.execute(
        """SELECT (SELECT count(*) FROM charter.workflows WHERE slug = %(s)s),
                  (SELECT count(*) FROM charter.workflow_versions WHERE workflow_slug = %(s)s),
                  (SELECT count(*) FROM charter.flow_steps fs JOIN charter.workflow_versions v
                      ON v.id = fs.version_id WHERE v.workflow_slug = %(s)s),
                  (SELECT count(*) FROM charter.flow_step_deps d JOIN charter.workflow_versions v
                      ON v.id = d.version_id WHERE v.workflow_slug = %(s)s)""",
        {"s": slug},
    ).fetchone()


def test_get_flow_shape_is_null_for_a_flow_that_does_not_exist(conn):
    assert _shape_in_db(conn, "nope") is None


def test_create_then_get_returns_exactly_the_python_shape(conn):
    flow = analyze_site()
    shape = extract_flow_shape(flow)
    version_id = _create(conn, flow.slug, shape, compile_flow(flow))
    assert version_id.startswith("wf_ver_")
    assert _shape_in_db(conn, flow.slug) == shape  # options included, NULLs kept


def test_create_flow_from_shape_writes_steps_deps_and_options(conn):
    flow = analyze_site()
    compiled = compile_flow(flow)
    version_id = _create(conn, flow.slug, extract_flow_shape(flow), compiled)
    steps = conn.execute(
        "SELECT slug, step_index, step_type FROM charter.flow_steps WHERE version_id = %s "
        "ORDER BY step_index",
        (version_id,),
    ).fetchall()
    assert steps == [
        ("fetch", 0, "single"),
        ("score", 1, "map"),
        ("summarize", 2, "single"),
        ("report", 3, "single"),
    ]
    deps = conn.execute(
        "SELECT step_slug, dep_slug FROM charter.flow_step_deps WHERE version_id = %s "
        "ORDER BY 1, 2",
        (version_id,),
    ).fetchall()
    assert deps == [
        ("report", "score"),
        ("report", "summarize"),
        ("score", "fetch"),
        ("summarize", "fetch"),
    ]
    version = conn.execute(
        "SELECT version, definition_kind, opt_max_attempts, opt_base_delay, opt_timeout, "
        "opt_start_delay, compiled_hash, compiler_version FROM charter.workflow_versions "
        "WHERE id = %s",
        (version_id,),
    ).fetchone()
    assert version == (1, "flow", 3, 2, 60, None, compiled["hash"], compiled["compilerVersion"])
    current = conn.execute(
        "SELECT current_version_id FROM charter.workflows WHERE slug = %s", (flow.slug,)
    ).fetchone()[0]
    assert current == version_id


def test_option_defaults_are_defined_once_in_sql(conn):
    defaults = conn.execute("SELECT charter.flow_option_defaults()").fetchone()[0]
    assert defaults == {"maxAttempts": 3, "baseDelay": 1, "timeout": 60, "startDelay": 0}


def test_compare_in_sql_finds_nothing_for_matching_shapes(conn):
    shape = extract_flow_shape(analyze_site())
    assert _compare(conn, shape, shape) == []


def _steps(*steps):
    return {
        "options": {},
        "steps": [
            {"slug": s, "stepType": t, "dependencies": list(d), "options": {}} for s, t, d in steps
        ],
    }


@pytest.mark.parametrize(
    ("local", "db", "expected"),
    [
        (
            _steps(("a", "single", ())),
            _steps(("a", "single", ()), ("b", "single", ("a",))),
            ["Step 'b' is in the database but not in the code"],
        ),
        (
            _steps(("a", "single", ()), ("b", "single", ("a",))),
            _steps(("a", "single", ())),
            ["Step 'b' is in the code but not in the database"],
        ),
        (
            _steps(("a", "single", ()), ("b", "single", ()), ("c", "single", ("b", "a"))),
            _steps(("a", "single", ()), ("b", "single", ()), ("c", "single", ("a",))),
            ["Step 'c' changed dependencies: [a] in the database, [a, b] in the code"],
        ),
        (
            _steps(("a", "map", ())),
            _steps(("a", "single", ())),
            ["Step 'a' changed type: single in the database, map in the code"],
        ),
        (
            _steps(("a", "single", ()), ("m", "map", ())),
            _steps(("a", "single", ()), ("m", "map", ("a",))),
            ["Step 'm' changed the array it maps over: a in the database, run in the code"],
        ),
    ],
    ids=["extra", "missing", "dependencies", "type", "map-source"],
)
def test_compare_in_sql_detects_each_difference_type(conn, local, db, expected):
    assert _compare(conn, local, db) == expected


@pytest.mark.parametrize(
    ("slug", "shape", "fragment"),
    [
        ("bad-slug", _steps(("a", "single", ())), "not a valid flow slug"),
        ("f", {"steps": []}, 'non-empty "steps" array'),
        ("f", ["not", "an", "object"], 'non-empty "steps" array'),
        ("f", _steps(("a", "single", ()), ("a", "single", ())), "appears twice"),
        ("f", _steps(("b", "single", ("a",)), ("a", "single", ())), "not an earlier step"),
        ("f", _steps(("a", "single", ("zzz",))), "'zzz', which is not an earlier step"),
        (
            "f",
            _steps(("a", "single", ()), ("b", "single", ()), ("m", "map", ("a", "b"))),
            "a map has one array source",
        ),
        ("f", _steps(("a", "parallel", ())), 'use "single", "map", "sleep" or "wait_event"'),
        ("f", _steps(("1a", "single", ())), "step slug '1a' is not valid"),
        (
            "f",
            {"options": {"maxAttempts": 0}, "steps": _steps(("a", "single", ()))["steps"]},
            "maxAttempts is 0",
        ),
        (
            "f",
            {"options": {"retries": 1}, "steps": _steps(("a", "single", ()))["steps"]},
            "unknown option 'retries'",
        ),
        (
            "f",
            {
                "steps": [
                    {
                        "slug": "a",
                        "stepType": "single",
                        "dependencies": [],
                        "options": {"timeout": 2.5},
                    }
                ]
            },
            "timeout is 2.5",
        ),
    ],
)
def test_malformed_shapes_are_refused_by_sql_and_nothing_is_written(conn, slug, shape, fragment):
    with pytest.raises(FlowShapeInvalidError) as caught:
        _create(conn, slug, shape)
    assert caught.value.code == "FLOW_SHAPE_INVALID"
    assert fragment in caught.value.message
    assert conn.execute("SELECT count(*) FROM charter.workflows").fetchone() == (0,)


def test_delete_flow_and_data_removes_that_flow_only(conn):
    keep, drop = analyze_site(), flow_from_shape("other", _steps(("x", "single", ())))
    ensure_flow_compiled(conn, keep, "production")
    ensure_flow_compiled(conn, drop, "production")
    before = _counts(conn, keep.slug)
    deleted = conn.execute("SELECT charter.delete_flow_and_data('other')").fetchone()[0]
    assert deleted == {"deleted": True, "runs": 0, "versions": 1}
    assert _counts(conn, "other") == (0, 0, 0, 0)
    assert _counts(conn, keep.slug) == before == (1, 1, 4, 4)
    again = conn.execute("SELECT charter.delete_flow_and_data('other')").fetchone()[0]
    assert again["deleted"] is False


def test_ensure_compiles_a_missing_flow_in_both_modes(conn):
    for mode, slug in [("production", "p"), ("development", "d")]:
        flow = flow_from_shape(slug, _steps(("a", "single", ())))
        result = ensure_flow_compiled(conn, flow, mode)
        assert result.status == "compiled" and result.differences == []
        assert _counts(conn, slug) == (1, 1, 1, 0)


def test_ensure_verifies_a_matching_flow_and_changes_nothing(conn):
    flow = analyze_site()
    first = ensure_flow_compiled(conn, flow, "production")
    again = ensure_flow_compiled(conn, analyze_site(), "production")
    assert again.status == "verified" and again.version_id == first.version_id
    assert _counts(conn, flow.slug) == (1, 1, 4, 4)


def test_ensure_publishes_a_changed_flow_as_a_new_version_in_development(conn):
    first = ensure_flow_compiled(conn, analyze_site(), "development")
    old_run = conn.execute("SELECT charter.start_run('analyze_site', '{\"pages\": []}')")
    old_run_id = old_run.fetchone()[0]["runId"]
    changed = flow_from_shape(
        "analyze_site", _steps(("fetch", "single", ()), ("report", "single", ("fetch",)))
    )
    result = ensure_flow_compiled(conn, changed, "development")
    assert result.status == "recompiled"
    assert result.differences == [
        "Step 'report' changed dependencies: [score, summarize] in the database, [fetch] in "
        "the code",
        "Step 'score' is in the database but not in the code",
        "Step 'summarize' is in the database but not in the code",
    ]
    assert result.version_id != first.version_id
    # The new version is current; the old one and its run are intact.
    assert _counts(conn, "analyze_site") == (1, 2, 6, 5)
    assert _shape_in_db(conn, "analyze_site") == extract_flow_shape(changed)
    old = conn.execute("SELECT version_id FROM charter.runs WHERE id = %s", (old_run_id,))
    assert old.fetchone()[0] == first.version_id


def test_ensure_reports_a_mismatch_in_production_and_changes_nothing(conn):
    original = ensure_flow_compiled(conn, analyze_site(), "production")
    changed = flow_from_shape("analyze_site", _steps(("fetch", "single", ())))
    result = ensure_flow_compiled(conn, changed, "production")
    assert result.status == "mismatch"
    assert result.version_id == original.version_id
    assert len(result.differences) == 3
    assert _shape_in_db(conn, "analyze_site") == extract_flow_shape(analyze_site())


def test_ensure_refuses_an_unknown_mode(conn):
    with pytest.raises(ConfigurationError, match="mode 'staging' is not known"), charter_errors():
        conn.execute(
            "SELECT charter.ensure_flow_compiled('f', %s, 'staging')",
            (Jsonb(_steps(("a", "single", ()))),),
        )


def test_deploy_publishes_a_new_version_and_keeps_the_old_one(conn):
    first = deploy_flow(conn, analyze_site())
    assert (first.status, first.version) == ("compiled", 1)
    assert deploy_flow(conn, analyze_site()).status == "verified"
    changed = flow_from_shape("analyze_site", _steps(("fetch", "single", ())))
    second = deploy_flow(conn, changed)
    assert (second.status, second.version) == ("deployed", 2)
    assert len(second.differences) == 3
    versions = conn.execute(
        "SELECT id, version FROM charter.workflow_versions WHERE workflow_slug = "
        "'analyze_site' ORDER BY version"
    ).fetchall()
    assert versions == [(first.version_id, 1), (second.version_id, 2)]
    assert _shape_in_db(conn, "analyze_site") == extract_flow_shape(changed)
    # the old version is intact, for the runs that pinned it
    old_steps = conn.execute(
        "SELECT count(*) FROM charter.flow_steps WHERE version_id = %s", (first.version_id,)
    ).fetchone()
    assert old_steps == (4,)
    # and production verification now checks against the new version
    assert ensure_flow_compiled(conn, changed, "production").status == "verified"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE charter.workflow_versions SET version = 7",
        "UPDATE charter.workflow_versions SET shape = '{}'",
        "DELETE FROM charter.workflow_versions",
        "UPDATE charter.flow_steps SET step_type = 'map' WHERE slug = 'fetch'",
        "UPDATE charter.flow_steps SET slug = 'fetch2' WHERE slug = 'fetch'",
        "DELETE FROM charter.flow_steps WHERE slug = 'report'",
        "UPDATE charter.flow_step_deps SET dep_slug = 'fetch' WHERE dep_slug = 'score'",
        "DELETE FROM charter.flow_step_deps",
        "UPDATE charter.flow_version_facts SET keeps_readiness = NOT keeps_readiness",
        "DELETE FROM charter.flow_version_facts",
    ],
)
def test_wf04_published_versions_are_immutable(conn, statement):
    ensure_flow_compiled(conn, analyze_site(), "production")
    before = _shape_in_db(conn, "analyze_site")
    with pytest.raises(WorkflowVersionImmutableError) as caught, charter_errors():
        conn.execute(statement)
    assert caught.value.code == "WORKFLOW_VERSION_IMMUTABLE"
    assert "charter deploy" in caught.value.message
    assert _shape_in_db(conn, "analyze_site") == before


def test_step_options_may_be_tuned_in_place_without_a_new_version(conn):
    ensure_flow_compiled(conn, analyze_site(), "production")
    conn.execute("UPDATE charter.flow_steps SET opt_timeout = 5 WHERE slug = 'fetch'")
    assert ensure_flow_compiled(conn, analyze_site(), "production").status == "verified"
    tuned = _shape_in_db(conn, "analyze_site")["steps"][0]
    assert (tuned["slug"], tuned["options"]["timeout"]) == ("fetch", 5)


@pytest.mark.parametrize("how", ["production", "development", "deploy"])
def test_runs_of_the_old_shape_survive_a_changed_shape_in_every_mode(conn, how):
    from tests.engine import claim, complete, handle, run_row, start

    old = analyze_site()
    first = ensure_flow_compiled(conn, old, "production")
    running = start(conn, "analyze_site", {"pages": ["a"]})
    finished = start(conn, "analyze_site", {"pages": []})
    [task] = [t for t in claim(conn, ["analyze_site"]) if t.run_id == finished]
    complete(conn, task, handle(old, task))
    before = {rid: run_row(conn, rid) for rid in (running, finished)}
    changed = flow_from_shape("analyze_site", _steps(("fetch", "single", ())))
    if how == "deploy":
        result = deploy_flow(conn, changed)
    else:
        result = ensure_flow_compiled(conn, changed, how)
    assert (
        result.status
        == {"production": "mismatch", "development": "recompiled", "deploy": "deployed"}[how]
    )
    for rid, row in before.items():
        after = run_row(conn, rid)
        assert after["versionId"] == first.version_id == row["versionId"]
        assert after["status"] == row["status"] and after["steps"] == row["steps"]
    versions = conn.execute(
        "SELECT count(*) FROM charter.workflow_versions WHERE workflow_slug = 'analyze_site'"
    ).fetchone()[0]
    assert versions == (1 if how == "production" else 2)
