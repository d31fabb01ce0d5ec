"""Small contracts for runtime tests: draft → open → done, one body slot between open and
close, and an org definition that fills it with the nodes and edges a test names."""

from __future__ import annotations

from typing import Any


def contract(entity_type: str, fields: dict[str, str], **extra: Any) -> dict[str, Any]:
    """Policies are closed by default: these contracts grant every actor of the org what the
    test's ``policies=`` does not restrict (a ``"*"`` default of ``{"rule": "true"}``)."""
    policies = {"*": {"rule": "true"}, **extra.pop("policies", {})}
    return {
        "entityType": entity_type,
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "open", "editWindow": "editable"},
            {"id": "done", "editWindow": "locked", "final": True},
        ],
        "transitions": [
            {"from": "draft", "to": "open", "gate": "open"},
            {"from": "open", "to": "done", "gate": "close"},
        ],
        "slots": [
            {
                "slotId": "slot:work",
                "entryNodeId": "sys:state:open",
                "exitNodeId": "sys:gate:close",
                "defaultEditWindow": "editable",
                "stableRegion": False,
            }
        ],
        "fields": fields,
        "policies": policies,
        **extra,
    }


def org_definition(
    entity_type: str, nodes: list[tuple[Any, ...]], edges: list[tuple[Any, ...]]
) -> dict[str, Any]:
    def node(local: str, kind: str, **config: Any) -> dict[str, Any]:
        return {"id": f"usr:slot:work:{local}", "type": kind, "config": config}

    return {
        "baseRef": {"entityType": entity_type, "envelopeVersion": 1},
        "slots": {
            "slot:work": {
                "nodes": [node(*n[:2], **n[2]) for n in nodes],
                "edges": [
                    {
                        "id": f"{s}->{t}",
                        "sourceNodeId": f"usr:slot:work:{s}",
                        "targetNodeId": f"usr:slot:work:{t}",
                        **extra,
                    }
                    for s, t, extra in edges
                ],
                "exitEdgeMode": "join",
            }
        },
    }
