"""Any compiled workflow as a Mermaid flowchart, provenance shown: slot nodes are grouped in
a subgraph per slot, envelope nodes are styled as system nodes, edges name their slot. Given
an instance's node statuses, it colours where the instance is (current nodes), where it
went (completed) and what it cancelled, skipped or failed."""

from __future__ import annotations

from typing import Any

_SHAPES = {
    "start": ("([", "])"),
    "end": ("([", "])"),
    "lifecycle_state": ("[", "]"),
    "lifecycle_gate": ("{{", "}}"),
    "policy_gate": ("{{", "}}"),
    "condition": ("{", "}"),
    "approval": ("[/", "/]"),
    "parallel_split": ("[[", "]]"),
    "parallel_join": ("[[", "]]"),
    "slot_entry": ("((", "))"),
    "slot_exit": ("((", "))"),
}


_POSITION_STYLES = {
    "current": "fill:#fd6,stroke:#a60,stroke-width:3px",
    "completed": "fill:#cfc,stroke:#393",
    "skipped": "fill:#eee,stroke:#999,stroke-dasharray:3",
    "cancelled": "fill:#eee,stroke:#999,stroke-dasharray:3",
    "failed": "fill:#fcc,stroke:#c33,stroke-width:3px",
}


def to_mermaid(compiled: dict[str, Any], position: dict[str, str] | None = None) -> str:
    names = {node_id: f"n{i}" for i, node_id in enumerate(compiled["topologicalOrder"])}
    lines = ["flowchart TD"]
    slot_map = compiled.get("slotMap") or {}
    by_slot: dict[str, list[str]] = {}
    for node_id in compiled["topologicalOrder"]:
        by_slot.setdefault(slot_map.get(node_id, "envelope"), []).append(node_id)

    def node_line(node_id: str) -> str:
        node = compiled["nodes"][node_id]
        left, right = _SHAPES.get(node["type"], ("[", "]"))
        label = f"{node_id}<br/>{node['type']}".replace('"', "'")
        return f'{names[node_id]}{left}"{label}"{right}'

    for node_id in by_slot.pop("envelope", []):
        lines.append(f"    {node_line(node_id)}")
    for slot_id, members in sorted(by_slot.items()):
        lines.append(f'    subgraph {_safe(slot_id)}["{slot_id}"]')
        lines.extend(f"        {node_line(node_id)}" for node_id in members)
        lines.append("    end")
    for edge_id in sorted(compiled["edgesById"]):
        edge = compiled["edgesById"][edge_id]
        parts = [edge["label"]] if edge.get("label") else []
        if edge.get("provenance") not in (None, "envelope", "flow"):
            parts.append(edge["provenance"])
        arrow = "-.->" if edge.get("loop") else "-->"
        label = f'|"{" · ".join(parts)}"|' if parts else ""
        lines.append(f"    {names[edge['source']]} {arrow}{label} {names[edge['target']]}")
    system = [
        names[n]
        for n in compiled["topologicalOrder"]
        if slot_map.get(n, "envelope") == "envelope" and n.startswith("sys:")
    ]
    if system:
        lines.append("    classDef system fill:#eef,stroke:#446")
        lines.append(f"    class {','.join(system)} system")
    if position:
        by_class: dict[str, list[str]] = {}
        for node_id in compiled["topologicalOrder"]:
            status = position.get(node_id, "waiting")
            css = "current" if status in ("ready", "running") else status
            if css in _POSITION_STYLES:
                by_class.setdefault(css, []).append(names[node_id])
        for css, members in by_class.items():
            lines.append(f"    classDef {css} {_POSITION_STYLES[css]}")
            lines.append(f"    class {','.join(members)} {css}")
    return "\n".join(lines) + "\n"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)
