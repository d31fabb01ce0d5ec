"""Dead letter operations: list, retry and drop side effects that gave up."""

from __future__ import annotations

from typing import Any

from charter.db.store import Call, Operation, first_value, json_rows
from charter.ops.arguments import effect_ids, text_argument, whole_number
from charter.ops.side_effects import SideEffect, side_effect


def list_dead_letters(
    org_id: str, limit: int, run_id: str | None = None
) -> Operation[list[SideEffect]]:
    params = {
        "org_id": org_id,
        "limit": whole_number(limit, "limit"),
        "run_id": None if run_id is None else text_argument(run_id, "run_id"),
    }
    rows = yield Call("list_dead_letters", params, json_rows)
    return [side_effect(row) for row in rows]


def retry_dead_letters(org_id: str, ids: Any, actor: str | None) -> Operation[list[int]]:
    params = {"org_id": org_id, "ids": effect_ids(ids, "dead_letters.retry"), "actor": actor}
    return list((yield Call("retry_side_effects", params, first_value)))


def drop_dead_letters(org_id: str, ids: Any, actor: str | None) -> Operation[list[int]]:
    params = {"org_id": org_id, "ids": effect_ids(ids, "dead_letters.drop"), "actor": actor}
    return list((yield Call("drop_side_effects", params, first_value)))
