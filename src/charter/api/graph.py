"""A run's graph as SVG, drawn on the server: nodes in columns by their longest path from
the start, coloured by state, with their token and (on hover) the slot that contributed
them — the envelope's own, or an org's slot; edges as arrows. No script needed."""

from __future__ import annotations

from html import escape
from typing import Any

COLOURS = {
    "completed": "#2e7d32",
    "running": "#1565c0",
    "ready": "#6a1b9a",
    "failed": "#c62828",
    "cancelled": "#757575",
    "skipped": "#9e9e9e",
    "waiting": "#bdbdbd",
}
_W, _H, _GAP_X, _GAP_Y = 170, 44, 60, 24


def run_svg(compiled: dict[str, Any], states: dict[str, dict[str, Any]]) -> str:
    order: list[str] = compiled.get("topologicalOrder") or list(compiled.get("nodes") or {})
    edges = list((compiled.get("edgesById") or {}).values())
    depth = dict.fromkeys(order, 0)
    for node in order:  # topological: every edge's source is placed before its target
        for edge in edges:
            if edge.get("source") == node and not edge.get("loop") and edge.get("target") in depth:
                depth[edge["target"]] = max(depth[edge["target"]], depth[node] + 1)
    columns: dict[int, list[str]] = {}
    for node in order:
        columns.setdefault(depth[node], []).append(node)
    where: dict[str, tuple[int, int]] = {}
    for column, members in columns.items():
        for row, node in enumerate(members):
            where[node] = (20 + column * (_W + _GAP_X), 20 + row * (_H + _GAP_Y))
    width = 40 + (max(columns, default=0) + 1) * (_W + _GAP_X)
    height = 40 + max((len(m) for m in columns.values()), default=1) * (_H + _GAP_Y)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dag" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="run graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#555"/></marker></defs>',
    ]
    for edge in edges:
        if edge.get("source") not in where or edge.get("target") not in where:
            continue
        (x1, y1), (x2, y2) = where[edge["source"]], where[edge["target"]]
        label = escape(str(edge.get("label") or edge.get("id") or ""))
        dash = ' stroke-dasharray="4 3"' if edge.get("loop") else ""
        parts.append(
            f'<line x1="{x1 + _W}" y1="{y1 + _H // 2}" x2="{x2}" y2="{y2 + _H // 2}" '
            f'stroke="#555"{dash} marker-end="url(#arrow)"><title>{label}</title></line>'
        )
    nodes = compiled.get("nodes") or {}
    slots = compiled.get("slotMap") or {}
    for node, (x, y) in where.items():
        state = states.get(node) or {}
        status = str(state.get("status") or "waiting")
        kind = str(
            (nodes.get(node) or {}).get("type") or (nodes.get(node) or {}).get("stepType") or ""
        )
        token = f" · {state['token']}" if state.get("token") else ""
        parts.append(
            f'<g class="node" data-node="{escape(node)}" data-status="{escape(status)}" '
            f'data-slot="{escape(str(slots.get(node, "envelope")))}">'
            f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="6" '
            f'fill="{COLOURS.get(status, "#bdbdbd")}"/>'
            f'<text x="{x + 8}" y="{y + 18}" fill="#fff" font-size="12">'
            f"{escape(_short(node))}</text>"
            f'<text x="{x + 8}" y="{y + 34}" fill="#fff" font-size="10">'
            f"{escape(kind)} · {escape(status)}{escape(token)}</text>"
            f"<title>{escape(node)} ({escape(str(slots.get(node, 'envelope')))})</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _short(node: str) -> str:
    text = node.split(":")[-1] if node.startswith(("usr:", "sys:")) else node
    return text if len(text) <= 24 else text[:23] + "…"
