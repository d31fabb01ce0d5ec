"""Schedule operations: events sent to documents on a timetable."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from charter.db.store import Call, Operation, first_json, first_value, json_rows
from charter.errors import ArgumentError
from charter.ops.arguments import text_argument
from charter.payloads import json_text


@dataclass(frozen=True)
class Schedule:
    name: str
    cron: str
    timezone: str
    target: dict[str, Any]  # {"kind": "flow", "flow", "input"} | {"kind": "document", …}
    missed: str  # latest | all | skip
    next_at: datetime
    last_tick_at: datetime | None
    last_result: dict[str, Any] | None


def _schedule(data: dict[str, Any]) -> Schedule:
    return Schedule(
        name=data["name"],
        cron=data["cron"],
        timezone=data["timezone"],
        target=data["target"],
        missed=data["missed"],
        next_at=datetime.fromisoformat(data["nextAt"]),
        last_tick_at=(
            datetime.fromisoformat(data["lastTickAt"]) if data.get("lastTickAt") else None
        ),
        last_result=data.get("lastResult"),
    )


def put_schedule(
    org_id: str,
    name: str,
    cron: str,
    *,
    flow: Any = None,
    input: Any = None,
    entity_type: str | None = None,
    action: str | None = None,
    missed: str = "latest",
    timezone: str = "UTC",
) -> Operation[Schedule]:
    if (flow is None) == (entity_type is None):
        raise ArgumentError(
            "A schedule starts a flow (flow=, input=) or acts on documents (entity_type=, "
            "action='create' or a gate); pass exactly one of flow= and entity_type=."
        )
    if flow is not None:
        slug = getattr(flow, "slug", flow)
        target: dict[str, Any] = {"kind": "flow", "flow": text_argument(slug, "flow")}
    else:
        if action is None:
            raise ArgumentError("entity_type= needs action= ('create' or a gate of the contract)")
        target = {
            "kind": "document",
            "entityType": text_argument(entity_type, "entity_type"),
            "action": text_argument(action, "action"),
        }
    if input is not None:
        target["input"] = json.loads(json_text(input, "schedule input"))
    params = {
        "org_id": org_id,
        "name": text_argument(name, "name"),
        "cron": text_argument(cron, "cron"),
        "target": Jsonb(target),
        "missed": text_argument(missed, "missed"),
        "timezone": text_argument(timezone, "timezone"),
    }
    return _schedule((yield Call("put_schedule", params, first_json, what=f"schedule {name}")))


def list_schedules(org_id: str) -> Operation[list[Schedule]]:
    rows = yield Call("list_schedules", {"org_id": org_id}, json_rows)
    return [_schedule(row) for row in rows]


def delete_schedule(org_id: str, name: str) -> Operation[bool]:
    params = {"org_id": org_id, "name": text_argument(name, "name")}
    return bool((yield Call("delete_schedule", params, first_value)))
