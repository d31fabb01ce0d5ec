"""compile_flow, extract_flow_shape and compare_flow_shapes (pure Python)."""

import copy
import os
import subprocess
import sys

import pytest
from hypothesis import given

from charter import Flow, compare_flow_shapes, compile_flow, extract_flow_shape
from charter.compiler.compiled import COMPILER_VERSION, CompiledWorkflowError, verify_compiled
from charter.errors import FlowDefinitionError
from tests.flows_for_tests import analyze_site, flow_from_shape, shapes


def test_compiled_workflow_has_the_seed_format():
    compiled = compile_flow(analyze_site())
    assert compiled["kind"] == "flow" and compiled["slug"] == "analyze_site"
    assert set(compiled["nodes"]) == {"fetch", "summarize", "score", "report"}
    assert compiled["nodes"]["score"]["type"] == "task"
    assert compiled["nodes"]["score"]["config"]["stepType"] == "map"
    assert compiled["nodes"]["score"]["config"]["over"] == "fetch"
    assert compiled["edgesById"]["fetch->score"] == {
        "id": "fetch->score",
        "source": "fetch",
        "target": "score",
        "priority": 0,
        "provenance": "flow",
    }
    assert compiled["adjacency"]["fetch"] == ["fetch->score", "fetch->summarize"]
    assert compiled["reverseAdjacency"]["report"] == ["score->report", "summarize->report"]
    assert compiled["reverseAdjacency"]["fetch"] == []
    # tie between score and summarize broken by node id
    assert compiled["topologicalOrder"] == ["fetch", "score", "summarize", "report"]
    assert compiled["joinRequirements"] == {"report": {"requiredTokenCount": 2, "mode": "all"}}
    assert compiled["compilerVersion"] == COMPILER_VERSION
    assert compiled["options"] == {
        "maxAttempts": 3,
        "baseDelay": 2,
        "timeout": 60,
        "startDelay": None,
    }
    verify_compiled(compiled)


def _two_orders():
    first = Flow("same")
    a = first.step(slug="a")(lambda run: 1)
    b = first.step(slug="b")(lambda run: 2)
    first.step(slug="c", depends_on=[a, b])(lambda a, b: 3)
    second = Flow("same")
    b2 = second.step(slug="b")(lambda run: 2)
    a2 = second.step(slug="a")(lambda run: 1)
    second.step(slug="c", depends_on=[b2, a2])(lambda a, b: 3)
    return first, second


def test_wf12_wf13_definition_order_does_not_change_hash_or_order():
    first, second = _two_orders()
    one, two = compile_flow(first), compile_flow(second)
    assert one["hash"] == two["hash"]
    assert one["topologicalOrder"] == two["topologicalOrder"] == ["a", "b", "c"]
    assert extract_flow_shape(first) == extract_flow_shape(second)


def test_wf12_compiling_twice_gives_the_same_hash():
    assert compile_flow(analyze_site())["hash"] == compile_flow(analyze_site())["hash"]


def test_the_hash_is_the_same_in_another_process_with_another_hash_seed():
    code = (
        "from tests.flows_for_tests import analyze_site; from charter import compile_flow; "
        "print(compile_flow(analyze_site())['hash'])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=os.getcwd(),
    )
    assert other.stdout.strip() == compile_flow(analyze_site())["hash"]


def test_changing_an_option_changes_the_hash_but_not_the_shape_comparison():
    flow, tuned = analyze_site(), analyze_site()
    tuned.steps["fetch"] = tuned.steps["fetch"].__class__(
        **{
            **tuned.steps["fetch"].__dict__,
            "options": tuned.steps["fetch"].options.__class__(timeout=5),
        }
    )
    assert compile_flow(flow)["hash"] != compile_flow(tuned)["hash"]
    assert compare_flow_shapes(extract_flow_shape(tuned), extract_flow_shape(flow)).match


def test_a_cycle_is_refused_naming_its_steps():
    flow = Flow("loop")
    a = flow.step(slug="a")(lambda run: 1)
    flow.step(slug="b", depends_on=[a])(lambda a: 2)
    # The decorators cannot make a cycle; a flow edited by hand can.
    flow.steps["a"] = flow.steps["a"].__class__(
        **{**flow.steps["a"].__dict__, "dependencies": ("b",)}
    )
    with pytest.raises(FlowDefinitionError) as caught:
        compile_flow(flow)
    assert caught.value.code == "WORKFLOW_CYCLE"
    assert "a → b → a" in caught.value.message
    with pytest.raises(FlowDefinitionError, match="cycle"):
        extract_flow_shape(flow)


def test_an_empty_flow_is_refused():
    with pytest.raises(FlowDefinitionError) as caught:
        compile_flow(Flow("empty"))
    assert caught.value.code == "FLOW_EMPTY"


def test_wf07_a_stale_compiler_version_or_tampered_artifact_is_refused():
    compiled = compile_flow(analyze_site())
    stale = {**compiled, "compilerVersion": "0.9.0"}
    with pytest.raises(CompiledWorkflowError) as caught:
        verify_compiled(stale)
    assert caught.value.code == "WORKFLOW_COMPILER_STALE"
    tampered = copy.deepcopy(compiled)
    tampered["topologicalOrder"].reverse()
    with pytest.raises(CompiledWorkflowError) as caught:
        verify_compiled(tampered)
    assert caught.value.code == "WORKFLOW_HASH_MISMATCH"


def test_shape_of_a_simple_flow_with_a_map():
    shape = extract_flow_shape(analyze_site())
    assert shape["options"] == {"maxAttempts": 3, "baseDelay": 2, "timeout": 60, "startDelay": None}
    assert [(s["slug"], s["stepType"], s["dependencies"]) for s in shape["steps"]] == [
        ("fetch", "single", []),
        ("score", "map", ["fetch"]),
        ("summarize", "single", ["fetch"]),
        ("report", "single", ["score", "summarize"]),  # sorted, not as declared
    ]
    assert shape["steps"][0]["options"] == {
        "maxAttempts": None,
        "baseDelay": None,
        "timeout": None,
        "startDelay": None,
    }


def _shape(*steps):
    return {
        "options": {},
        "steps": [
            {"slug": s, "stepType": t, "dependencies": list(d), "options": {}} for s, t, d in steps
        ],
    }


def test_identical_shapes_match():
    shape = extract_flow_shape(analyze_site())
    assert compare_flow_shapes(shape, copy.deepcopy(shape)).match


@pytest.mark.parametrize(
    ("code", "database", "differences"),
    [
        (
            _shape(("a", "single", ())),
            _shape(("a", "single", ()), ("b", "single", ("a",))),
            ["Step 'b' is in the database but not in the code"],
        ),
        (
            _shape(("a", "single", ()), ("b", "single", ("a",))),
            _shape(("a", "single", ())),
            ["Step 'b' is in the code but not in the database"],
        ),
        (
            _shape(("a", "single", ()), ("b", "single", ()), ("c", "single", ("a", "b"))),
            _shape(("a", "single", ()), ("b", "single", ()), ("c", "single", ("a",))),
            ["Step 'c' changed dependencies: [a] in the database, [a, b] in the code"],
        ),
        (
            _shape(("a", "map", ())),
            _shape(("a", "single", ())),
            ["Step 'a' changed type: single in the database, map in the code"],
        ),
        (
            _shape(("a", "single", ()), ("m", "map", ("a",))),
            _shape(("a", "single", ()), ("m", "map", ())),
            ["Step 'm' changed the array it maps over: run in the database, a in the code"],
        ),
        (
            _shape(("x", "single", ()), ("a", "map", ("x",))),
            _shape(("a", "single", ())),
            [
                "Step 'a' changed type: single in the database, map in the code",
                "Step 'a' changed dependencies: [] in the database, [x] in the code",
                "Step 'x' is in the code but not in the database",
            ],
        ),
    ],
    ids=["missing", "extra", "dependencies", "type", "map-source", "several-sorted"],
)
def test_each_difference_is_detected_with_a_readable_message(code, database, differences):
    result = compare_flow_shapes(code, database)
    assert not result.match
    assert result.differences == differences


def test_options_are_ignored_by_the_comparison():
    code = extract_flow_shape(analyze_site())
    database = copy.deepcopy(code)
    database["options"] = {"maxAttempts": 99, "baseDelay": 0, "timeout": 1, "startDelay": 5}
    database["steps"][0]["options"]["timeout"] = 7
    assert compare_flow_shapes(code, database).match


@given(shapes(sort_dependencies=True))
def test_a_flow_built_from_a_shape_has_that_shape_structurally(shape):
    flow = flow_from_shape("generated", shape)
    extracted = extract_flow_shape(flow)
    assert compare_flow_shapes(extracted, shape).match
    assert extracted["options"] == shape["options"]
