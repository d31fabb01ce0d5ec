"""The compiled workflow artifact (seed 002 § Compiled Effective Workflow).

Every definition — a Python flow, or an envelope with org slot patches — compiles into one
``CompiledWorkflow``: nodes, edge-first adjacency, a topological order tie-broken by node
id, join requirements, and a SHA-256 ``hash`` of the canonical JSON of everything else.
The engine only ever runs this artifact.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from typing import Any

from charter.canonical import canonical_hash
from charter.errors import (
    CompiledWorkflowError,
    FlowDefinitionError,
    WorkflowCompilerStaleError,
    WorkflowHashMismatchError,
)

COMPILER_VERSION = "1.0.0"
# Effective workflows (contracted envelopes with org patches) compile on their own version:
# 1.1.0 marks the lifecycle's merges as exclusive (see compile_effective).
EFFECTIVE_COMPILER_VERSION = "1.1.0"

__all__ = [
    "COMPILER_VERSION",
    "EFFECTIVE_COMPILER_VERSION",
    "CompiledWorkflowError",
    "build_compiled",
    "verify_compiled",
]


def build_compiled(
    *,
    kind: str,
    slug: str,
    nodes: Mapping[str, dict[str, Any]],
    edges: Iterable[dict[str, Any]],
    extra: Mapping[str, Any] | None = None,
    joins: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble the artifact from nodes and edges; computes adjacency, order and hash.

    ``edges`` need ``id``, ``source``, ``target`` and ``provenance``; ``priority`` defaults
    to 0. An edge marked ``"loop": true`` (a lifecycle's way back, e.g. reject → draft) is
    kept in the adjacency but left out of the topological order and the join requirements.
    A node with more than one arriving edge waits for all of them unless ``joins`` gives
    its requirement (a parallel join configured from its split, possibly ANY).
    Raises ``FlowDefinitionError(code=WORKFLOW_CYCLE)`` when the other edges form a cycle.
    """
    edges_by_id: dict[str, dict[str, Any]] = {}
    for edge in edges:
        edges_by_id[edge["id"]] = {"priority": 0, **edge}
    adjacency: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    reverse: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    for edge in edges_by_id.values():
        adjacency[edge["source"]].append(edge["id"])
        reverse[edge["target"]].append(edge["id"])
    for node_id in nodes:
        adjacency[node_id].sort(key=lambda e: (edges_by_id[e]["priority"], e))
        reverse[node_id].sort()
    forward = {k: e for k, e in edges_by_id.items() if not e.get("loop")}
    order = topological_order(nodes, forward)
    requirements: dict[str, dict[str, Any]] = {}
    for node_id, incoming in reverse.items():
        arriving = [e for e in incoming if not edges_by_id[e].get("loop")]
        if len(arriving) > 1:
            requirements[node_id] = {"requiredTokenCount": len(arriving), "mode": "all"}
    requirements.update(joins or {})
    artifact: dict[str, Any] = {
        "kind": kind,
        "slug": slug,
        "nodes": {node_id: nodes[node_id] for node_id in sorted(nodes)},
        "edgesById": edges_by_id,
        "adjacency": adjacency,
        "reverseAdjacency": reverse,
        "topologicalOrder": order,
        "joinRequirements": dict(sorted(requirements.items())),
        "editWindows": {},
        "stableRegionNodes": [],
        "slotMap": {},
        "systemGateIntegrity": {"requiredGates": [], "presentGates": [], "valid": True},
        "envelopeVersion": None,
        "compilerVersion": compiler_version(kind),
        **(extra or {}),
    }
    artifact["hash"] = compiled_hash(artifact)
    return artifact


def compiler_version(kind: str | None) -> str:
    """The compiler version that artifacts of ``kind`` are made (and checked) with."""
    return EFFECTIVE_COMPILER_VERSION if kind == "effective" else COMPILER_VERSION


def compiled_hash(artifact: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the artifact without its ``hash`` field."""
    return canonical_hash({k: v for k, v in artifact.items() if k != "hash"})


def verify_compiled(artifact: Mapping[str, Any]) -> None:
    """Refuse an artifact from another compiler version or whose hash does not match (WF-07)."""
    version = artifact.get("compilerVersion")
    current = compiler_version(artifact.get("kind"))
    if version != current:
        raise WorkflowCompilerStaleError(
            f"The compiled workflow '{artifact.get('slug')}' was made by compiler "
            f"{version}, but this charter's compiler is {current}. Recompile it "
            "as the schema's owner (`charter recompile`) before running it."
        )
    expected = compiled_hash(artifact)
    if artifact.get("hash") != expected:
        raise WorkflowHashMismatchError(
            f"The compiled workflow '{artifact.get('slug')}' does not match its hash "
            f"(stored {str(artifact.get('hash'))[:12]}…, recomputed {expected[:12]}…): it was "
            "changed after compilation. Recompile it from its definition."
        )


def topological_order(
    nodes: Iterable[str], edges_by_id: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Kahn's algorithm, always taking the smallest ready node id (WF-13)."""
    node_ids = sorted(nodes)
    indegree = dict.fromkeys(node_ids, 0)
    successors: dict[str, list[str]] = {n: [] for n in node_ids}
    for edge in edges_by_id.values():
        indegree[edge["target"]] += 1
        successors[edge["source"]].append(edge["target"])
    ready = [n for n in node_ids if indegree[n] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for target in successors[node]:
            indegree[target] -= 1
            if indegree[target] == 0:
                heapq.heappush(ready, target)
    if len(order) != len(node_ids):
        predecessors: dict[str, list[str]] = {n: [] for n in node_ids}
        for edge in edges_by_id.values():
            predecessors[edge["target"]].append(edge["source"])
        cycle = _find_cycle({n for n in node_ids if indegree[n] > 0}, predecessors)
        raise FlowDefinitionError(
            f"Steps {' → '.join(cycle)} form a cycle; a workflow must be acyclic. Remove one "
            "of these dependencies.",
            code="WORKFLOW_CYCLE",
        )
    return order


def _find_cycle(remaining: set[str], predecessors: Mapping[str, list[str]]) -> list[str]:
    # Every node left over by Kahn's algorithm has a predecessor that is also left over,
    # so walking backwards from any of them must come round to a node seen before.
    node = min(remaining)
    walk: list[str] = []
    seen: dict[str, int] = {}
    while node not in seen:
        seen[node] = len(walk)
        walk.append(node)
        node = min(p for p in predecessors[node] if p in remaining)
    cycle = walk[seen[node] :]
    cycle.reverse()  # forwards: each step depends on the one before it
    first = cycle.index(min(cycle))
    cycle = cycle[first:] + cycle[:first]
    return [*cycle, cycle[0]]
