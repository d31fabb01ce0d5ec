"""What an org changed: an effective workflow against its bare envelope, grouped by slot."""

from __future__ import annotations

from typing import Any


def diff_effective(effective: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """``{"entityType", "envelopeVersion", "slots": {slotId: {"addedNodes", "addedEdges",
    "replacedEdges", "editWindows"}}}``, every list sorted: the same inputs give the same
    diff, byte for byte."""
    slots: dict[str, dict[str, Any]] = {}

    def slot(slot_id: str) -> dict[str, Any]:
        return slots.setdefault(
            slot_id, {"addedNodes": [], "addedEdges": [], "replacedEdges": [], "editWindows": []}
        )

    for node_id in sorted(set(effective["nodes"]) - set(bare["nodes"])):
        node = effective["nodes"][node_id]
        slot(effective["slotMap"][node_id])["addedNodes"].append(
            {"id": node_id, "type": node["type"]}
        )
    for edge_id in sorted(set(effective["edgesById"]) - set(bare["edgesById"])):
        edge = effective["edgesById"][edge_id]
        entry = {"id": edge_id, "source": edge["source"], "target": edge["target"]}
        if "label" in edge:
            entry["label"] = edge["label"]
        slot(edge["provenance"])["addedEdges"].append(entry)
    for edge_id in sorted(set(bare["edgesById"]) - set(effective["edgesById"])):
        edge = bare["edgesById"][edge_id]
        owner = next(
            (
                effective["slotMap"][e["target"]]
                for e in effective["edgesById"].values()
                if e["source"] == edge["source"]
                and e["provenance"] != "envelope"
                and e["target"].startswith("sys:slot:")
            ),
            "envelope",
        )
        slot(owner)["replacedEdges"].append(
            {"id": edge_id, "source": edge["source"], "target": edge["target"]}
        )
    for node_id, window in sorted(effective["editWindows"].items()):
        owner = effective["slotMap"].get(node_id, "envelope")
        if owner == "envelope" and bare["editWindows"].get(node_id) != window:
            slot(owner)["editWindows"].append(
                {"node": node_id, "from": bare["editWindows"].get(node_id), "to": window}
            )
    for changes in slots.values():
        windows = {effective["editWindows"][n["id"]] for n in changes["addedNodes"]}
        if len(windows) == 1:
            changes["slotEditWindow"] = windows.pop()
    return {
        "entityType": effective.get("entityType"),
        "envelopeVersion": effective.get("envelopeVersion"),
        "slots": dict(sorted(slots.items())),
    }
