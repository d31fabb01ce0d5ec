"""``compile_effective(envelope, org_definition)``: the seed's merge algorithm, step by step.

For each slot with a patch (in slot-id order):

1. validate the patch's scope (WF-06): node ids ``usr:<slotId>:<id>``, user node types
   only, edges only between the patch's own nodes (attachment is implicit), an edit-window
   override only if stricter;
2. create the attachment nodes ``sys:slot:<slotId>:in`` and ``:out``;
3. replace the envelope's direct edge ``entry -> exit`` with ``entry -> in -> <starts>`` and
   ``<ends> -> out -> exit`` (``serial`` entry takes one start, ``branch`` several; ``single``
   exit one end, ``join`` several, joined at ``out``);
4. give the slot's nodes its edit window;
5. tag stable regions (the slot's nodes and its entry node go to ``stableRegionNodes``).

Then the effective graph is validated (no cycle but the envelope's own loops, every node
reachable from ``sys:start`` and reaching ``sys:end``, parallel splits and joins well
formed) and, last, the system gates' integrity is verified against the contract (WF-08):
every system node present, unaltered, and in the envelope's topological order. The result
is a ``CompiledWorkflow`` with the same format and hashing as flows (WF-12, WF-13).
"""

from __future__ import annotations

import re
from typing import Any

from charter.compiler.compiled import build_compiled, topological_order
from charter.compiler.envelope import END, START, edge_id, generate_envelope, loop_edges
from charter.compiler.nodes import compile_node_config
from charter.dsl.contract import STRICTNESS, EntityContract
from charter.dsl.slots import USER_NODE_TYPES, OrgWorkflowDefinition, SlotGraphPatch
from charter.errors import ContractError, ExpressionError, FlowDefinitionError
from charter.expr.compile import Schema, compile_expression
from charter.payloads import MAX_DEPTH, nesting_depth
from charter.vocabulary import NodeType

LOCAL_ID = re.compile(r"\A[A-Za-z0-9_-]+\Z")


def compile_effective(
    envelope: dict[str, Any], org: OrgWorkflowDefinition | dict[str, Any] | None = None
) -> dict[str, Any]:
    """The effective CompiledWorkflow of ``envelope`` with ``org``'s slot patches (or bare)."""
    _check_envelope_structure(envelope)
    contract = EntityContract.from_json(envelope.get("contract"))
    _check_envelope_nodes(contract, envelope)
    if org is not None and not isinstance(org, OrgWorkflowDefinition):
        if nesting_depth(org, MAX_DEPTH) > MAX_DEPTH:
            raise ContractError(
                f"The org workflow definition nests more than {MAX_DEPTH} levels deep (or "
                "contains itself); node configurations are a few levels deep. Flatten it.",
                code="ORG_DEFINITION_INVALID",
            )
        org = OrgWorkflowDefinition.from_json(org)
    schema = field_schema(contract)
    nodes: dict[str, dict[str, Any]] = {}
    for node in envelope["nodes"]:
        nodes[node["id"]] = {
            "id": node["id"],
            "type": node["type"],
            "config": node.get("config", {}),
        }
    edges: dict[str, dict[str, Any]] = {}
    for edge in envelope["edges"]:
        edges[edge["id"]] = _edge(
            edge["sourceNodeId"],
            edge["targetNodeId"],
            "envelope",
            label=edge.get("label"),
            priority=edge.get("priority", 0),
            edge_id_=edge["id"],
        )
    windows: dict[str, str] = dict(envelope["editWindows"])
    slot_map = dict.fromkeys(nodes, "envelope")
    stable: set[str] = set()
    slots = {slot["slotId"]: slot for slot in envelope["slots"]}
    patches = org.slots if org is not None else {}
    if org is not None:
        _check_base_ref(org, envelope)
    for slot_id in sorted(slots):
        slot = slots[slot_id]
        window = slot["defaultEditWindow"]
        patch = patches.get(slot_id)
        if patch is not None:
            window = _apply_patch(slot, patch, schema, nodes, edges, slot_map)
        if slot.get("stableRegion"):
            stable.add(slot["entryNodeId"])
            stable.update(n for n, owner in slot_map.items() if owner == slot_id)
        for node_id, owner in slot_map.items():
            if owner == slot_id:
                windows[node_id] = window
    for slot_id in sorted(set(patches) - set(slots)):
        raise ContractError(
            f"Slot {slot_id} is not a slot of the {contract.entity_type} envelope (its slots: "
            f"{', '.join(sorted(slots)) or 'none'}). Patch a declared slot.",
            code="SLOT_UNKNOWN",
            slot_id=slot_id,
        )

    _mark_loops(nodes, edges)
    _check_graph(nodes, edges)
    joins = _check_parallel(nodes, edges)
    joins.update(_lifecycle_merges(nodes, edges))
    integrity = _verify_system_integrity(contract, nodes, edges)
    try:
        compiled = build_compiled(
            kind="effective",
            slug=contract.entity_type,
            nodes=nodes,
            edges=[edges[k] for k in sorted(edges)],
            extra={
                "entityType": contract.entity_type,
                "envelopeVersion": contract.version,
                "editWindows": dict(sorted(windows.items())),
                "stableRegionNodes": sorted(stable),
                "slotMap": dict(sorted(slot_map.items())),
                "systemGateIntegrity": integrity,
            },
            joins=joins,
        )
    except FlowDefinitionError as exc:
        if isinstance(exc, ContractError):  # a workflow structure rule: both families
            raise
        raise ContractError(exc.message) from None
    return compiled


def field_schema(contract: EntityContract) -> Schema:
    """What expressions are checked against: the contract's fields as ``entity.*``."""
    return {"entity": dict(contract.fields)} if contract.fields is not None else {}


_WINDOWS = tuple(STRICTNESS)
# What compile_effective reads of an envelope: key -> (type, what it must be).
_ENVELOPE_ITEMS: dict[str, dict[str, tuple[type | tuple[type, ...], str]]] = {
    "nodes": {"id": (str, "a string"), "type": (str, "a string")},
    "edges": {
        "id": (str, "a string"),
        "sourceNodeId": (str, "a string"),
        "targetNodeId": (str, "a string"),
    },
    "slots": {
        "slotId": (str, "a string"),
        "entryNodeId": (str, "a string"),
        "exitNodeId": (str, "a string"),
        "defaultEditWindow": (str, "an edit window"),
    },
}
_ENVELOPE_OPTIONAL: dict[str, tuple[type | tuple[type, ...], str]] = {
    "config": (dict, "an object"),
    "label": ((str, type(None)), "a string"),
    "priority": (int, "a whole number"),
    "stableRegion": (bool, "true or false"),
}


def _check_envelope_structure(envelope: Any) -> None:
    """An envelope is generated (``generate_envelope``); one that was edited by hand or
    damaged in storage into something else than its shape is refused, naming the place."""
    problem = _envelope_problem(envelope)
    if problem:
        raise ContractError(
            f"System gate integrity failed (WF-08): the envelope is malformed: {problem}. "
            "Pass the envelope generate_envelope(contract) returns; org definitions change "
            "slots only.",
            code="WORKFLOW_SYSTEM_INTEGRITY",
        )


def _envelope_problem(envelope: Any) -> str | None:
    if not isinstance(envelope, dict):
        return f"it is {type(envelope).__name__}, not an object"
    if nesting_depth(envelope, MAX_DEPTH) > MAX_DEPTH:
        return f"it nests more than {MAX_DEPTH} levels deep (or contains itself)"
    if not isinstance(envelope.get("entityType"), str):
        return "entityType is not a string"
    version = envelope.get("envelopeVersion")
    if isinstance(version, bool) or not isinstance(version, int):
        return "envelopeVersion is not a whole number"
    windows = envelope.get("editWindows")
    if not isinstance(windows, dict) or any(
        not isinstance(k, str) or v not in _WINDOWS for k, v in windows.items()
    ):
        return f"editWindows must map node ids to {', '.join(_WINDOWS)}"
    for key, required in _ENVELOPE_ITEMS.items():
        items = envelope.get(key)
        if not isinstance(items, list):
            return f"{key} is not a list"
        for n, item in enumerate(items):
            if not isinstance(item, dict):
                return f"{key}[{n}] is not an object"
            for name, (kind, what) in required.items():
                if not isinstance(item.get(name), kind):
                    return f"{key}[{n}].{name} is not {what}"
            for name, (kind, what) in _ENVELOPE_OPTIONAL.items():
                if name in item and (
                    not isinstance(item[name], kind)
                    or isinstance(item[name], bool) is not (kind is bool)
                ):
                    return f"{key}[{n}].{name} is not {what}"
    for n, slot in enumerate(envelope["slots"]):
        if slot["defaultEditWindow"] not in _WINDOWS:
            return f"slots[{n}].defaultEditWindow is not one of {', '.join(_WINDOWS)}"
    return None


def _check_envelope_nodes(contract: EntityContract, envelope: dict[str, Any]) -> None:
    """A hand-edited envelope can lose nodes its edges still name: refuse it as WF-08 does."""
    present = {node["id"] for node in envelope["nodes"]}
    named = {e[end] for e in envelope["edges"] for end in ("sourceNodeId", "targetNodeId")}
    expected = {node["id"] for node in generate_envelope(contract)["nodes"]}
    missing = sorted((expected | named) - present)
    if missing:
        raise ContractError(
            f"System gate integrity failed (WF-08): missing system node(s) {', '.join(missing)}. "
            "The envelope must be the one generated from its contract; org definitions change "
            "slots only.",
            code="WORKFLOW_SYSTEM_INTEGRITY",
        )


def _edge(
    source: str,
    target: str,
    provenance: str,
    *,
    label: str | None = None,
    priority: int = 0,
    condition: dict[str, Any] | None = None,
    edge_id_: str | None = None,
) -> dict[str, Any]:
    edge: dict[str, Any] = {
        "id": edge_id_ or edge_id(source, target),
        "source": source,
        "target": target,
        "priority": priority,
        "provenance": provenance,
    }
    if label:
        edge["label"] = label
    if condition is not None:
        edge["condition"] = condition
    return edge


def _check_base_ref(org: OrgWorkflowDefinition, envelope: dict[str, Any]) -> None:
    ref = org.base_ref
    if ref.entity_type != envelope["entityType"]:
        raise ContractError(
            f"The org definition is for entity type {ref.entity_type}, but the envelope is for "
            f"{envelope['entityType']}.",
            code="ENVELOPE_MISMATCH",
            path="baseRef.entityType",
        )
    if ref.envelope_version != envelope["envelopeVersion"]:
        raise ContractError(
            f"The org definition pins envelope version {ref.envelope_version}, but this envelope "
            f"is version {envelope['envelopeVersion']}. Update baseRef.envelopeVersion after "
            "checking the patches against the new envelope.",
            code="ENVELOPE_VERSION_MISMATCH",
            path="baseRef.envelopeVersion",
        )


def _apply_patch(
    slot: dict[str, Any],
    patch: SlotGraphPatch,
    schema: Schema,
    nodes: dict[str, dict[str, Any]],
    edges: dict[str, dict[str, Any]],
    slot_map: dict[str, str],
) -> str:
    """Merges one slot's patch into the graph (steps 1 to 3 of the module's algorithm) and
    returns the slot's edit window."""
    window = _edit_window(slot, patch)
    own = _add_slot_nodes(slot["slotId"], patch, schema, nodes, slot_map)
    patch_edges = _slot_edges(slot["slotId"], patch, schema, own, edges)
    starts, ends = _slot_starts_and_ends(slot["slotId"], patch, own)
    _attach_slot(slot, patch, nodes, edges, slot_map, patch_edges, (starts, ends))
    return window


def _edit_window(slot: dict[str, Any], patch: SlotGraphPatch) -> str:
    """The slot's default edit window, or the patch's override if it is stricter."""
    window = slot["defaultEditWindow"]
    override = patch.edit_window_override
    if override is None:
        return str(window)
    if STRICTNESS[override] < STRICTNESS[window]:
        raise ContractError(
            f"Slot {slot['slotId']}: editWindowOverride {override} is looser than the "
            f"slot's {window}; an override may only be stricter (editable < amend_only < "
            "locked).",
            code="SLOT_EDIT_WINDOW_LOOSER",
            slot_id=slot["slotId"],
            path="editWindowOverride",
        )
    return str(override)


def _add_slot_nodes(
    slot_id: str,
    patch: SlotGraphPatch,
    schema: Schema,
    nodes: dict[str, dict[str, Any]],
    slot_map: dict[str, str],
) -> set[str]:
    """Checks the patch's nodes against the slot's scope (WF-06), compiles each into
    ``nodes`` and returns their ids."""
    if not patch.nodes:
        raise ContractError(
            f"Slot {slot_id}: a patch needs at least one node.",
            code="SLOT_PATCH_EMPTY",
            slot_id=slot_id,
        )
    prefix = f"usr:{slot_id}:"
    own: set[str] = set()
    for node in patch.nodes:
        local = node.id.removeprefix(prefix)
        if not node.id.startswith(prefix) or not LOCAL_ID.match(local):
            raise ContractError(
                f"Slot {slot_id}: node id {node.id!r} must be {prefix}<id> (letters, digits, _ "
                "and -); custom nodes live in their slot's namespace (WF-06).",
                code="SLOT_NODE_ID_INVALID",
                slot_id=slot_id,
                node_id=node.id,
            )
        if node.type not in USER_NODE_TYPES:
            raise ContractError(
                f"Slot {slot_id}: node {node.id} has type {node.type}, which only the system "
                f"envelope may use; slot nodes are one of {', '.join(USER_NODE_TYPES)}.",
                code="SLOT_NODE_TYPE_RESERVED",
                slot_id=slot_id,
                node_id=node.id,
            )
        if node.id in own:
            raise ContractError(
                f"Slot {slot_id}: node {node.id} is declared twice.",
                code="SLOT_NODE_DUPLICATE",
                slot_id=slot_id,
                node_id=node.id,
            )
        own.add(node.id)
        try:
            config = compile_node_config(node.id, node.type, node.config, schema)
        except ContractError as exc:
            exc.slot_id = slot_id
            raise
        nodes[node.id] = {"id": node.id, "type": node.type, "config": config}
        slot_map[node.id] = slot_id
    return own


def _slot_edges(
    slot_id: str,
    patch: SlotGraphPatch,
    schema: Schema,
    own: set[str],
    edges: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """The patch's edges, compiled: each stays inside the slot and has an id of its own."""
    patch_edges: list[dict[str, Any]] = []
    for edge in patch.edges:
        for end in (edge.source_node_id, edge.target_node_id):
            if end not in own:
                raise ContractError(
                    f"Slot {slot_id}: edge {edge.id} connects {edge.source_node_id} -> "
                    f"{edge.target_node_id}, but {end} is not a node of this slot. Edges stay "
                    "inside their slot; the slot is attached to the envelope automatically "
                    "(WF-06).",
                    code="SLOT_EDGE_OUT_OF_SCOPE",
                    slot_id=slot_id,
                    edge_id=edge.id,
                )
        if (
            edge.id.startswith("sys:")
            or edge.id in edges
            or any(e["id"] == edge.id for e in patch_edges)
        ):
            raise ContractError(
                f"Slot {slot_id}: edge id {edge.id} is reserved or used twice.",
                code="SLOT_EDGE_ID_INVALID",
                slot_id=slot_id,
                edge_id=edge.id,
            )
        patch_edges.append(
            _edge(
                edge.source_node_id,
                edge.target_node_id,
                slot_id,
                label=edge.label,
                priority=edge.priority,
                condition=edge_condition(slot_id, edge.id, edge.condition, schema),
                edge_id_=edge.id,
            )
        )
    return patch_edges


def edge_condition(
    slot_id: str, edge: str, condition: str | None, schema: Schema
) -> dict[str, Any] | None:
    if condition is None:
        return None
    try:
        return compile_expression(condition, schema, boolean=True)
    except ExpressionError as exc:
        raise ContractError(
            f"Slot {slot_id}: edge {edge}: condition: {exc.message}",
            code="SLOT_EDGE_CONDITION_INVALID",
            slot_id=slot_id,
            edge_id=edge,
            path="condition",
            line=exc.line,
            caret=exc.column - 1,
        ) from exc


def _slot_starts_and_ends(
    slot_id: str, patch: SlotGraphPatch, own: set[str]
) -> tuple[list[str], list[str]]:
    """The slot's first nodes (nothing leads in) and last nodes (nothing leads out), as
    many as its entry and exit modes allow."""
    incoming: dict[str, int] = dict.fromkeys(own, 0)
    outgoing: dict[str, int] = dict.fromkeys(own, 0)
    for edge in patch.edges:
        outgoing[edge.source_node_id] += 1
        incoming[edge.target_node_id] += 1
    starts = sorted(n for n in own if incoming[n] == 0)
    ends = sorted(n for n in own if outgoing[n] == 0)
    cycle = _cycle_edge(patch, own)
    if cycle is not None:
        raise ContractError(
            f"Slot {slot_id}: the patch's edges form a cycle (edge {cycle.id}, "
            f"{cycle.source_node_id} -> {cycle.target_node_id}, closes it); a slot's body "
            "must be acyclic (WF-06).",
            code="WORKFLOW_CYCLE",
            slot_id=slot_id,
            edge_id=cycle.id,
            node_id=cycle.target_node_id,
        )
    if patch.entry_edge_mode == "serial" and len(starts) != 1:
        # The first nodes apart from the one that leads furthest: most likely the ones
        # nothing was connected to.
        stray = _least_connected(starts, patch, forward=True)
        raise ContractError(
            f"Slot {slot_id}: entryEdgeMode serial needs exactly one first node, found "
            f"{', '.join(starts)}; connect them or use entryEdgeMode branch.",
            code="SLOT_ENTRY_INVALID",
            slot_id=slot_id,
            node_ids=tuple(stray),
        )
    if patch.exit_edge_mode == "single" and len(ends) != 1:
        stray = _least_connected(ends, patch, forward=False)
        raise ContractError(
            f"Slot {slot_id}: exitEdgeMode single needs exactly one last node, found "
            f"{', '.join(ends)}; join them or use exitEdgeMode join.",
            code="SLOT_EXIT_INVALID",
            slot_id=slot_id,
            node_ids=tuple(stray),
        )
    return starts, ends


def _cycle_edge(patch: SlotGraphPatch, own: set[str]) -> Any:
    """An edge of the patch on a cycle (the first by id), or None: what is left once every
    node without an incoming edge is peeled off, repeatedly, lies on or behind a cycle."""
    left = set(own)
    while True:
        targets = {e.target_node_id for e in patch.edges if e.source_node_id in left}
        peel = left - targets
        if not peel:
            break
        left -= peel
    closing = sorted(
        (e for e in patch.edges if e.source_node_id in left and e.target_node_id in left),
        key=lambda e: e.id,
    )
    return closing[0] if closing else None


def _least_connected(candidates: list[str], patch: SlotGraphPatch, *, forward: bool) -> list[str]:
    """All of ``candidates`` but the one reaching the most nodes (downstream if
    ``forward``, else upstream)."""
    links: dict[str, list[str]] = {}
    for e in patch.edges:
        a, b = (
            (e.source_node_id, e.target_node_id)
            if forward
            else (e.target_node_id, e.source_node_id)
        )
        links.setdefault(a, []).append(b)

    def reach(node: str) -> int:
        seen, frontier = {node}, [node]
        while frontier:
            for nxt in links.get(frontier.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return len(seen)

    keep = max(candidates, key=lambda n: (reach(n), n))
    return [n for n in candidates if n != keep]


def _attach_slot(
    slot: dict[str, Any],
    patch: SlotGraphPatch,
    nodes: dict[str, dict[str, Any]],
    edges: dict[str, dict[str, Any]],
    slot_map: dict[str, str],
    patch_edges: list[dict[str, Any]],
    starts_and_ends: tuple[list[str], list[str]],
) -> None:
    """Replaces the envelope's edge ``entry -> exit`` with ``entry -> in -> <starts>``, the
    patch's edges and ``<ends> -> out -> exit`` (steps 2 and 3)."""
    slot_id = slot["slotId"]
    entry, exit_ = slot["entryNodeId"], slot["exitNodeId"]
    replaced = edges.pop(edge_id(entry, exit_), None)
    if replaced is None:
        raise ContractError(
            f"System gate integrity failed (WF-08): system edge {entry} -> {exit_} is "
            f"missing, and slot {slot_id} sits on it. The envelope must be the one generated "
            "from its contract; org definitions change slots only.",
            code="WORKFLOW_SYSTEM_INTEGRITY",
        )
    attach_in, attach_out = f"sys:slot:{slot_id}:in", f"sys:slot:{slot_id}:out"
    nodes[attach_in] = {
        "id": attach_in,
        "type": NodeType.SLOT_ENTRY.value,
        "config": {"slot": slot_id, "mode": patch.entry_edge_mode},
    }
    nodes[attach_out] = {
        "id": attach_out,
        "type": NodeType.SLOT_EXIT.value,
        "config": {"slot": slot_id, "mode": patch.exit_edge_mode},
    }
    slot_map[attach_in] = slot_map[attach_out] = slot_id
    starts, ends = starts_and_ends
    for attached in [
        _edge(entry, attach_in, slot_id, label=replaced.get("label")),
        *(_edge(attach_in, start, slot_id) for start in starts),
        *patch_edges,
        *(_edge(end, attach_out, slot_id) for end in ends),
        _edge(attach_out, exit_, slot_id),
    ]:
        edges[attached["id"]] = attached


def _mark_loops(nodes: dict[str, Any], edges: dict[str, dict[str, Any]]) -> None:
    for edge in edges.values():
        edge.pop("loop", None)
    as_source = [
        {"id": e["id"], "sourceNodeId": e["source"], "targetNodeId": e["target"]}
        for e in edges.values()
    ]
    for loop in loop_edges(nodes, as_source):
        edge = edges[loop]
        if not edge["target"].startswith("sys:") or (
            edge["provenance"] != "envelope" and not edge["source"].startswith("sys:slot:")
        ):
            raise ContractError(
                f"Edge {loop} ({edge['source']} -> {edge['target']}) closes a cycle; only the "
                "envelope's lifecycle may loop back (WF-06). Make the slot's body acyclic.",
                code="WORKFLOW_CYCLE",
                edge_id=loop,
                node_id=edge["target"],
                slot_id=None if edge["provenance"] == "envelope" else edge["provenance"],
            )
        edge["loop"] = True


def _check_graph(nodes: dict[str, Any], edges: dict[str, dict[str, Any]]) -> None:
    successors: dict[str, list[str]] = {n: [] for n in nodes}
    predecessors: dict[str, list[str]] = {n: [] for n in nodes}
    for edge in edges.values():
        successors[edge["source"]].append(edge["target"])
        predecessors[edge["target"]].append(edge["source"])
    for origin, links, what, fix in (
        (START, successors, "cannot be reached from sys:start", "connect it"),
        (END, predecessors, "never reaches sys:end", "give it a way out"),
    ):
        seen = {origin}
        frontier = [origin]
        while frontier:
            for nxt in links[frontier.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        missing = sorted(set(nodes) - seen)
        if missing:
            raise ContractError(
                f"Node(s) {', '.join(missing)} {what}; {fix}.",
                code="WORKFLOW_UNREACHABLE",
                node_ids=tuple(missing),
            )


def _check_parallel(
    nodes: dict[str, Any], edges: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Splits fan out to two or more paths. Each join is configured from its split (the
    nearest parallel_split upstream): it waits for as many tokens as that split sends
    towards it, which must be every path that arrives."""
    forward = [e for e in edges.values() if not e.get("loop")]
    predecessors: dict[str, list[str]] = {n: [] for n in nodes}
    for edge in forward:
        predecessors[edge["target"]].append(edge["source"])
    joins: dict[str, dict[str, Any]] = {}
    for node_id, node in sorted(nodes.items()):
        leaving = [e for e in forward if e["source"] == node_id]
        if node["type"] == "parallel_split" and len(leaving) < 2:
            raise ContractError(
                f"Node {node_id}: a parallel_split needs two or more outgoing "
                f"paths, has {len(leaving)}.",
                code="WORKFLOW_SPLIT_INVALID",
                node_id=node_id,
            )
    for node_id, node in sorted(nodes.items()):
        if node["type"] != "parallel_join":
            continue
        arriving = predecessors[node_id]
        split = _nearest_split(node_id, nodes, predecessors)
        if split is None or len(arriving) < 2:
            raise ContractError(
                f"Node {node_id}: a parallel_join joins the paths of a parallel_split, but "
                + (
                    "there is no parallel_split before it."
                    if split is None
                    else f"only {len(arriving)} path arrives."
                ),
                code="WORKFLOW_JOIN_INVALID",
                node_id=node_id,
            )
        ancestors = _ancestors(node_id, predecessors)
        paths = [
            e
            for e in forward
            if e["source"] == split and (e["target"] == node_id or e["target"] in ancestors)
        ]
        if len(paths) != len(arriving):
            raise ContractError(
                f"Node {node_id}: it joins {len(arriving)} paths, but its parallel_split "
                f"{split} sends {len(paths)} towards it; join exactly the split's paths.",
                code="WORKFLOW_JOIN_INVALID",
                node_id=node_id,
            )
        joins[node_id] = {
            "requiredTokenCount": len(paths),
            "mode": node["config"].get("mode", "all"),
            "split": split,
        }
    return joins


# The lifecycle's own nodes: a document is in one state at a time, so a node of the
# envelope reached from several states (sys:end, a gate shared by two states) is an
# exclusive merge that the first arrival passes, never a join that counts arrivals.
_LIFECYCLE_TYPES = {"start", "lifecycle_state", "lifecycle_gate", "end", "slot_entry"}


def _lifecycle_merges(
    nodes: dict[str, Any], edges: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    arriving: dict[str, int] = dict.fromkeys(nodes, 0)
    for edge in edges.values():
        if not edge.get("loop"):
            arriving[edge["target"]] += 1
    return {
        node_id: {"requiredTokenCount": 1, "mode": "exclusive"}
        for node_id, count in arriving.items()
        if count > 1 and nodes[node_id]["type"] in _LIFECYCLE_TYPES
    }


def _ancestors(node_id: str, predecessors: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    frontier = list(predecessors[node_id])
    while frontier:
        current = frontier.pop()
        if current not in seen:
            seen.add(current)
            frontier.extend(predecessors[current])
    return seen


def _nearest_split(
    node_id: str, nodes: dict[str, Any], predecessors: dict[str, list[str]]
) -> str | None:
    """The closest parallel_split upstream (breadth-first, ties by id)."""
    frontier = sorted(predecessors[node_id])
    seen: set[str] = set()
    while frontier:
        following: list[str] = []
        for current in frontier:
            if current in seen:
                continue
            seen.add(current)
            if nodes[current]["type"] == "parallel_split":
                return current
            following.extend(predecessors[current])
        frontier = sorted(set(following))
    return None


def _verify_system_integrity(
    contract: EntityContract, nodes: dict[str, Any], edges: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """WF-08, the last step: the system envelope is whole and in order."""
    reference = generate_envelope(contract)
    ref_nodes = {n["id"]: n for n in reference["nodes"]}
    required = sorted(n for n in ref_nodes if n.startswith("sys:gate:"))
    present = sorted(n for n in nodes if n.startswith("sys:gate:"))
    problems = []
    missing = sorted(set(ref_nodes) - set(nodes))
    if missing:
        problems.append(f"missing system node(s) {', '.join(missing)}")
    for node_id in sorted(set(ref_nodes) & set(nodes)):
        if (nodes[node_id]["type"], nodes[node_id]["config"]) != (
            ref_nodes[node_id]["type"],
            ref_nodes[node_id]["config"],
        ):
            problems.append(f"system node {node_id} was altered")
    extra_sys = sorted(
        n
        for n in nodes
        if n.startswith("sys:") and n not in ref_nodes and not n.startswith("sys:slot:")
    )
    if extra_sys:
        problems.append(f"unknown system node(s) {', '.join(extra_sys)}")
    ref_edges = {e["id"]: e for e in reference["edges"]}
    for ref_edge in reference["edges"]:
        source, target = ref_edge["sourceNodeId"], ref_edge["targetNodeId"]
        if not _connected_through_slots(source, target, edges):
            problems.append(f"system edge {source} -> {target} is missing")
        elif ref_edge["id"] in edges and bool(edges[ref_edge["id"]].get("loop")) != bool(
            ref_edge.get("loop")
        ):
            problems.append(f"system edge {source} -> {target} changed direction")
    for edge_key, edge in sorted(edges.items()):
        if edge["provenance"] == "envelope" and edge_key not in ref_edges:
            problems.append(f"unexpected system edge {edge['source']} -> {edge['target']}")
    if not problems:
        # Every ordering the lifecycle imposes still holds (slots only add nodes in between).
        forward = {k: e for k, e in edges.items() if not e.get("loop")}
        position = {n: i for i, n in enumerate(topological_order(nodes, forward))}
        for ref_edge in reference["edges"]:
            source, target = ref_edge["sourceNodeId"], ref_edge["targetNodeId"]
            if not ref_edge.get("loop") and position[source] > position[target]:
                problems.append(f"system nodes out of order: {source} must precede {target}")
    if problems:
        raise ContractError(
            "System gate integrity failed (WF-08): "
            + "; ".join(problems)
            + ". The envelope must be the one generated from its contract; org definitions "
            "change slots only.",
            code="WORKFLOW_SYSTEM_INTEGRITY",
        )
    return {"requiredGates": required, "presentGates": present, "valid": True}


def _connected_through_slots(source: str, target: str, edges: dict[str, dict[str, Any]]) -> bool:
    if edge_id(source, target) in edges:
        return True
    # replaced by a slot: source -> sys:slot:X:in ... sys:slot:X:out -> target
    for edge in edges.values():
        if (
            edge["source"] == source
            and edge["target"].startswith("sys:slot:")
            and edge["target"].endswith(":in")
        ):
            slot_out = edge["target"].removesuffix(":in") + ":out"
            if edge_id(slot_out, target) in edges:
                return True
    return False
