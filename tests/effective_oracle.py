"""An independent check of WF-06 and WF-08 on a compiled effective workflow: written from
the seed's rules, not from the compiler's code, so that a fuzzer can tell "compiled" from
"compiled and sound"."""

from __future__ import annotations

import re
from typing import Any

USER_TYPES = {
    "action", "approval", "condition", "parallel_split", "parallel_join", "wait_timer",
    "wait_event", "webhook_out", "notification", "script", "rule",
}  # fmt: skip
RANK = {"editable": 0, "amend_only": 1, "locked": 2}
_USER_ID = re.compile(r"\Ausr:(.+):([A-Za-z0-9_-]+)\Z")
_ATTACH_ID = re.compile(r"\Asys:slot:(.+):(in|out)\Z")


def problems(
    bare: dict[str, Any], slots: list[dict[str, Any]], compiled: dict[str, Any]
) -> list[str]:
    """What breaks WF-06 or WF-08 in ``compiled``, given the bare envelope's artifact and the
    envelope's slots; empty when nothing does."""
    found: list[str] = []
    declared = {slot["slotId"]: slot for slot in slots}
    nodes, edges = compiled["nodes"], compiled["edgesById"]
    owner: dict[str, str | None] = {}
    for node_id, node in nodes.items():
        if node_id in bare["nodes"]:
            owner[node_id] = None
            if node != bare["nodes"][node_id]:
                found.append(f"WF-08: system node {node_id} altered")
            continue
        attach, user = _ATTACH_ID.match(node_id), _USER_ID.match(node_id)
        if attach and attach.group(1) in declared:
            owner[node_id] = attach.group(1)
        elif user and user.group(1) in declared:
            owner[node_id] = user.group(1)
            if node["type"] not in USER_TYPES:
                found.append(f"WF-06: {node_id} has system type {node['type']}")
        else:
            owner[node_id] = None
            found.append(f"WF-06/08: {node_id} is neither the envelope's nor a slot's")
    found += [f"WF-08: system node {n} missing" for n in bare["nodes"] if n not in nodes]
    attached = {owner[n] for n in nodes if n.startswith("sys:slot:") and owner.get(n)}
    for edge_id, edge in bare["edgesById"].items():
        replaced = any(
            (s["entryNodeId"], s["exitNodeId"]) == (edge["source"], edge["target"])
            for name, s in declared.items()
            if name in attached
        )
        if replaced == (edge_id in edges) or (edge_id in edges and edges[edge_id] != edge):
            found.append(f"WF-08: system edge {edge_id} missing, altered or bypassing its slot")
    for edge_id, edge in edges.items():
        source, target = edge["source"], edge["target"]
        if source not in nodes or target not in nodes:
            found.append(f"edge {edge_id} names a node that is not in the graph")
            continue
        if owner[source] is None and owner[target] is None and edge_id not in bare["edgesById"]:
            found.append(f"WF-08: unexpected system edge {edge_id}")
        for end, other in ((source, target), (target, source)):
            slot = owner[end]
            if end.startswith("usr:") and slot is not None and owner[other] != slot:
                found.append(f"WF-06: edge {edge_id} leaves slot {slot}")
        for name in attached:
            spec = declared[name]
            if target == f"sys:slot:{name}:in" and source != spec["entryNodeId"]:
                found.append(f"WF-08: slot {name} entered from {source}")
            if source == f"sys:slot:{name}:out" and target != spec["exitNodeId"]:
                found.append(f"WF-08: slot {name} leaves to {target}")
    windows = compiled["editWindows"]
    for node_id in nodes:
        slot = owner[node_id]
        least = (
            declared[slot]["defaultEditWindow"]
            if slot is not None
            else bare["editWindows"].get(node_id, "editable")
        )
        if RANK.get(windows.get(node_id, ""), -1) < RANK[least]:
            found.append(f"WF-06: the edit window of {node_id} is looser than {least}")
    return found
