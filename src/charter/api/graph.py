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


def focus_node(compiled: dict[str, Any], states: dict[str, dict[str, Any]]) -> str | None:
    """The node a run's page opens at: the first that failed, else the furthest along that
    runs (a document resting at a state runs its state node and its slot's node), else the
    furthest that is ready."""
    order: list[str] = compiled.get("topologicalOrder") or list(compiled.get("nodes") or {})
    status = {node: str((states.get(node) or {}).get("status")) for node in order}
    failed = [n for n in order if status[n] == "failed"]
    if failed:
        return failed[0]
    for wanted in ("running", "ready"):
        found = [n for n in order if status[n] == wanted]
        if found:
            return found[-1]
    return None


def run_svg(
    compiled: dict[str, Any], states: dict[str, dict[str, Any]], focus: str | None = None
) -> str:
    """The graph; the ``focus`` node's group has id ``graph-focus`` (the page scrolls the
    graph to it, and links to it)."""
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
        mark = ' id="graph-focus"' if node == focus else ""
        parts.append(
            f'<g class="node"{mark} data-node="{escape(node)}" data-status="{escape(status)}" '
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


_SW, _SH, _SGAP = 120, 36, 70  # a state's box, and the room between two


def lifecycle_svg(
    states: list[dict[str, Any]], transitions: list[dict[str, Any]], current: str
) -> str:
    """A contract's lifecycle as a small diagram: its states in a row (in the contract's
    order; the current one filled, a final one drawn thicker), each transition an arc from
    state to state, forward ones above the row and backward ones below, named by its gate
    (and its label)."""
    ids = [str(s.get("id")) for s in states]
    place = {state: n for n, state in enumerate(ids)}
    arcs = [
        (place[str(t.get("from"))], place[str(t.get("to"))], t)
        for t in transitions
        if str(t.get("from")) in place
        and str(t.get("to")) in place
        and t.get("from") != t.get("to")
    ]

    def lift(span: int) -> int:  # how far an arc's control point is from the row
        return 30 + 26 * span

    up = max((lift(b - a) for a, b, _ in arcs if b > a), default=0) // 2 + 18
    down = max((lift(a - b) for a, b, _ in arcs if b < a), default=0) // 2 + 18
    width = 20 + len(ids) * (_SW + _SGAP) - _SGAP + 20
    height = up + _SH + down
    row = up
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lifecycle" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" '
        f'aria-label="lifecycle, now in state {escape(current)}">',
        '<defs><marker id="lc-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#555"/></marker></defs>',
    ]
    for a, b, transition in arcs:
        forward = b > a
        x1, x2 = 20 + a * (_SW + _SGAP) + _SW // 2, 20 + b * (_SW + _SGAP) + _SW // 2
        x1, x2 = x1 + (8 if forward else -8), x2 + (-8 if forward else 8)  # arcs pair apart
        y = row if forward else row + _SH
        control = y - lift(abs(b - a)) if forward else y + lift(abs(b - a))
        apex = (y + control) // 2
        gate = str(transition.get("gate") or "")
        name = f"{gate} ({transition['label']})" if transition.get("label") else gate
        parts.append(
            f'<g class="transition" data-gate="{escape(gate)}" '
            f'data-from="{escape(ids[a])}" data-to="{escape(ids[b])}">'
            f'<path d="M {x1} {y} Q {(x1 + x2) // 2} {control} {x2} {y}" fill="none" '
            f'stroke="#555" marker-end="url(#lc-arrow)"/>'
            f'<text x="{(x1 + x2) // 2}" y="{apex + (-4 if forward else 12)}" font-size="11" '
            f'text-anchor="middle" fill="#333">{escape(_clip(name, 28))}</text>'
            f"<title>{escape(name)}: {escape(ids[a])} → {escape(ids[b])}</title></g>"
        )
    for n, state in enumerate(states):
        sid = ids[n]
        x = 20 + n * (_SW + _SGAP)
        now = sid == current
        marked = ' aria-current="true"' if now else ""
        final = bool(state.get("final")) or not any(a == n for a, _, _ in arcs)
        parts.append(
            f'<g class="state{" current" if now else ""}" data-state="{escape(sid)}"'
            f"{marked}>"
            f'<rect x="{x}" y="{row}" width="{_SW}" height="{_SH}" rx="16" '
            f'fill="{"#1565c0" if now else "#fff"}" stroke="{"#0d47a1" if now else "#555"}" '
            f'stroke-width="{3 if final else 1.2}"/>'
            f'<text x="{x + _SW // 2}" y="{row + 23}" font-size="12" text-anchor="middle" '
            f'fill="{"#fff" if now else "#222"}">{escape(_clip(sid, 16))}</text>'
            f"<title>{escape(sid)}{' (now)' if now else ''}{' (final)' if final else ''}"
            "</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
