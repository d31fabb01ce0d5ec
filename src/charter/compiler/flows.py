"""Compiling a :class:`~charter.dsl.flow.Flow`, and its shape (seed 000).

The *shape* is a flow's structure — step slugs, step types, sorted dependencies — plus
its options, which travel with the shape (to create the flow) but are never compared, so
they can be tuned in the database without a new version. ``compare_flow_shapes`` here and
``charter._compare_flow_shapes`` in SQL produce the same differences, word for word.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Required, TypedDict

from charter.compiler.compiled import build_compiled, topological_order
from charter.dsl.flow import Flow, Step
from charter.dsl.handler import RUN
from charter.errors import FlowDefinitionError


class StepShape(TypedDict, total=False):
    slug: Required[str]
    stepType: Required[str]
    dependencies: Required[list[str]]
    options: Required[dict[str, Any]]
    config: dict[str, Any]  # sleep, wait_event and child steps only


class FlowShape(TypedDict):
    options: dict[str, Any]
    steps: list[StepShape]


@dataclass(frozen=True)
class ShapeComparison:
    match: bool
    differences: list[str]


def compile_flow(flow: Flow) -> dict[str, Any]:
    """The flow's ``CompiledWorkflow`` (as JSON-ready data, with its ``hash``)."""
    handlers = {step.slug: step.handler_name for step in flow.steps.values()}
    return compile_shape(flow.slug, extract_flow_shape(flow), handlers)


def compile_shape(
    slug: str, shape: FlowShape, handlers: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``CompiledWorkflow`` of a flow shape; ``handlers`` names each step's handler
    (``module:qualname``) when the flow's code is at hand, as for :func:`compile_flow`;
    a registry version whose DSL is a flow shape has none."""
    nodes = {
        step["slug"]: {
            "id": step["slug"],
            "type": "task",
            "config": {
                "stepType": step["stepType"],
                "over": (step["dependencies"][0] if step["dependencies"] else RUN)
                if step["stepType"] == "map"
                else None,
                "handler": (handlers or {}).get(step["slug"]),
                "options": step.get("options") or {},
                **({"config": step["config"]} if step.get("config") else {}),
            },
        }
        for step in shape["steps"]
    }
    edges = [
        {
            "id": f"{dep}->{step['slug']}",
            "source": dep,
            "target": step["slug"],
            "provenance": "flow",
        }
        for step in shape["steps"]
        for dep in step["dependencies"]
    ]
    return build_compiled(
        kind="flow",
        slug=slug,
        nodes=nodes,
        edges=edges,
        extra={"options": shape.get("options") or {}},
    )


def is_flow_shape(value: Any) -> bool:
    """Whether a JSON value looks like a flow shape (the registry's test, as in SQL)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("steps"), list)
        and bool(value["steps"])
        and isinstance(value["steps"][0], dict)
        and isinstance(value["steps"][0].get("stepType"), str)
    )


def extract_flow_shape(flow: Flow) -> FlowShape:
    """The flow's shape: steps in topological order (ties by slug), dependencies sorted."""
    _check_not_empty(flow)
    edges = {
        f"{dep}->{step.slug}": {"source": dep, "target": step.slug}
        for step in flow.steps.values()
        for dep in step.dependencies
    }
    order = topological_order(flow.steps, edges)
    return {
        "options": flow.options.as_shape(),
        "steps": [_step_shape(flow.steps[slug]) for slug in order],
    }


def _step_shape(step: Step) -> StepShape:
    shape: StepShape = {
        "slug": step.slug,
        "stepType": step.step_type,
        "dependencies": sorted(step.dependencies),
        "options": step.options.as_shape(),
    }
    if step.config is not None:
        shape["config"] = dict(step.config)
    return shape


def compare_flow_shapes(code: FlowShape, database: FlowShape) -> ShapeComparison:
    """Structural differences between the shape in the code and the one in the database.

    Options are ignored. Differences are ordered by step slug, then missing/extra, type,
    dependencies, config — the same order and words as ``charter._compare_flow_shapes`` in SQL.
    """
    ours = {s["slug"]: s for s in code["steps"]}
    theirs = {s["slug"]: s for s in database["steps"]}
    differences: list[str] = []
    for slug in sorted(ours.keys() | theirs.keys()):
        mine, stored = ours.get(slug), theirs.get(slug)
        if stored is None:
            differences.append(f"Step '{slug}' is in the code but not in the database")
        elif mine is None:
            differences.append(f"Step '{slug}' is in the database but not in the code")
        else:
            differences.extend(_step_differences(slug, mine, stored))
    return ShapeComparison(match=not differences, differences=differences)


def _step_differences(slug: str, code: StepShape, database: StepShape) -> list[str]:
    found = []
    if code["stepType"] != database["stepType"]:
        found.append(
            f"Step '{slug}' changed type: {database['stepType']} in the database, "
            f"{code['stepType']} in the code"
        )
    code_deps, db_deps = sorted(code["dependencies"]), sorted(database["dependencies"])
    if code_deps != db_deps:
        if code["stepType"] == database["stepType"] == "map":
            found.append(
                f"Step '{slug}' changed the array it maps over: {_source(db_deps)} in the "
                f"database, {_source(code_deps)} in the code"
            )
        else:
            found.append(
                f"Step '{slug}' changed dependencies: [{', '.join(db_deps)}] in the "
                f"database, [{', '.join(code_deps)}] in the code"
            )
    if code["stepType"] == database["stepType"] and code.get("config") != database.get("config"):
        found.append(
            f"Step '{slug}' changed its config: {_jsonb_text(database.get('config'))} in the "
            f"database, {_jsonb_text(code.get('config'))} in the code"
        )
    return found


def _jsonb_text(value: dict[str, Any] | None) -> str:
    """A flat config object as PostgreSQL prints jsonb: keys shortest first, then by bytes."""
    if value is None:
        return "none"
    keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(value[k])}" for k in keys) + "}"


def _source(dependencies: list[str]) -> str:
    return dependencies[0] if dependencies else RUN


def _check_not_empty(flow: Flow) -> None:
    if not flow.steps:
        raise FlowDefinitionError(
            f"Flow '{flow.slug}' has no steps; add at least one with @flow.step.",
            code="FLOW_EMPTY",
        )
