"""The system envelope of an entity contract (seed 002 § System Envelope).

Stable ids: ``sys:start``, ``sys:state:<state>``, ``sys:gate:<gate>``, ``sys:end``. Each
transition ``from -> to`` through gate ``g`` becomes ``sys:state:from -> sys:gate:g ->
sys:state:to`` (one gate node however many transitions share it; the transition's label on
the gate's outgoing edge); the first state follows ``sys:start``; states with no way out,
and states marked ``final``, lead to ``sys:end``. A lifecycle's ways back (reject → draft,
amend → submit again) are marked ``loop`` edges: found by a depth-first walk from
``sys:start`` in edge-id order, so the result does not depend on declaration order.

Edit windows: a state has its declared window; a gate takes the stricter of ``amend_only``
and the windows of the states it leaves from (a document passing a gate is being decided
on); ``sys:start`` has the first state's window and ``sys:end`` is ``locked``.
"""

from __future__ import annotations

from typing import Any

from charter.dsl.contract import EntityContract, stricter
from charter.errors import ContractError

START, END = "sys:start", "sys:end"


def state_id(state: str) -> str:
    return f"sys:state:{state}"


def gate_id(gate: str) -> str:
    return f"sys:gate:{gate}"


def edge_id(source: str, target: str) -> str:
    return f"{source}->{target}"


def generate_envelope(contract: EntityContract) -> dict[str, Any]:
    """The envelope as JSON data: nodes, edges (loops marked), slots, edit windows."""
    nodes: dict[str, dict[str, Any]] = {
        START: {"id": START, "type": "start", "config": {}},
        END: {"id": END, "type": "end", "config": {}},
    }
    windows: dict[str, str] = {START: contract.states[0].edit_window, END: "locked"}
    for state in contract.states:
        nodes[state_id(state.id)] = {
            "id": state_id(state.id),
            "type": "lifecycle_state",
            "config": {"state": state.id},
        }
        windows[state_id(state.id)] = state.edit_window
    edges: dict[str, dict[str, Any]] = {}

    def add_edge(source: str, target: str, label: str | None = None) -> None:
        edge: dict[str, Any] = {
            "id": edge_id(source, target),
            "sourceNodeId": source,
            "targetNodeId": target,
            "priority": 0,
        }
        if label:
            edge["label"] = label
        edges[str(edge["id"])] = edge

    add_edge(START, state_id(contract.initial_state))
    by_window = {state.id: state.edit_window for state in contract.states}
    gate_transitions: dict[str, list[dict[str, str]]] = {}
    for transition in contract.transitions:
        gate = gate_id(transition.gate)
        gate_transitions.setdefault(gate, []).append(
            {
                "from": transition.from_state,
                "to": transition.to_state,
                **({"label": transition.label} if transition.label else {}),
            }
        )
        windows[gate] = stricter(windows.get(gate, "amend_only"), by_window[transition.from_state])
        add_edge(state_id(transition.from_state), gate)
        add_edge(gate, state_id(transition.to_state), transition.label)
    for gate, transitions in gate_transitions.items():
        ordered = sorted(transitions, key=lambda t: (t["from"], t["to"], t.get("label", "")))
        nodes[gate] = {
            "id": gate,
            "type": "lifecycle_gate",
            "config": {"gate": gate.removeprefix("sys:gate:"), "transitions": ordered},
        }
    leaving = {t.from_state for t in contract.transitions}
    for state in contract.states:
        if state.id not in leaving or state.final:
            add_edge(state_id(state.id), END)
    if not any(edge["targetNodeId"] == END for edge in edges.values()):
        raise ContractError(
            f"The lifecycle of {contract.entity_type} never ends: every state has a transition "
            "out. Give at least one final state (e.g. active or cancelled) no transitions.",
            code="ENVELOPE_NO_END",
        )
    for loop in loop_edges(nodes, edges.values()):
        edges[loop]["loop"] = True
    _check_slots(contract, nodes, edges)
    return {
        "kind": "envelope",
        "entityType": contract.entity_type,
        "envelopeVersion": contract.version,
        "contract": contract.to_json(),
        "nodes": [nodes[k] for k in sorted(nodes)],
        "edges": [edges[k] for k in sorted(edges)],
        "slots": sorted((slot.to_json() for slot in contract.slots), key=lambda s: s["slotId"]),
        "editWindows": dict(sorted(windows.items())),
    }


def loop_edges(nodes: dict[str, Any], edges: Any) -> list[str]:
    """Edges that lead back to a node on the current path of a depth-first walk from
    ``sys:start`` (successors in edge-id order): a lifecycle's ways back."""
    outgoing: dict[str, list[tuple[str, str]]] = {node: [] for node in nodes}
    for edge in edges:
        outgoing[edge["sourceNodeId"]].append((edge["id"], edge["targetNodeId"]))
    for node in outgoing:
        outgoing[node].sort()
    loops: list[str] = []
    state: dict[str, int] = {}  # 1 on the path, 2 finished
    stack: list[tuple[str, int]] = [(START, 0)]
    state[START] = 1
    while stack:
        node, index = stack.pop()
        if index < len(outgoing[node]):
            stack.append((node, index + 1))
            edge, target = outgoing[node][index]
            if state.get(target) == 1:
                loops.append(edge)
            elif target not in state:
                state[target] = 1
                stack.append((target, 0))
        else:
            state[node] = 2
    return sorted(loops)


def _check_slots(
    contract: EntityContract, nodes: dict[str, Any], edges: dict[str, dict[str, Any]]
) -> None:
    used: dict[str, str] = {}
    for slot in contract.slots:
        where = f"Slot {slot.slot_id}"
        for end in (slot.entry_node_id, slot.exit_node_id):
            if end not in nodes:
                raise ContractError(
                    f"{where}: {end} is not a node of the {contract.entity_type} envelope "
                    f"(its nodes: {', '.join(sorted(nodes))}).",
                    code="ENVELOPE_SLOT_INVALID",
                )
        direct = edge_id(slot.entry_node_id, slot.exit_node_id)
        if direct not in edges:
            raise ContractError(
                f"{where}: the envelope has no direct edge {slot.entry_node_id} -> "
                f"{slot.exit_node_id}; a slot sits on one edge between two system nodes.",
                code="ENVELOPE_SLOT_INVALID",
            )
        if direct in used:
            raise ContractError(
                f"{where} sits on the same edge as {used[direct]}; give each slot its own edge.",
                code="ENVELOPE_SLOT_INVALID",
            )
        used[direct] = slot.slot_id
