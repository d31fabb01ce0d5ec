"""/api/health: the org's workflow health, stuck and long-waiting instances."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, int_param, jsonable, snake_keys


@api("GET", "/api/health", "The org's workflow health and stuck instances", "health",
     response=dict[str, Any])  # fmt: skip
async def get_health(request: Request, who: Principal, _: None) -> Any:
    report = await who.client.health.report(
        stuck_minutes=int_param(request, "stuck_minutes", 10, low=1, high=525_600)
    )
    return snake_keys({k: v for k, v in jsonable(report).items() if k != "raw"})


@api("GET", "/api/health/waiting",
     "Instances waiting (not stuck) at least `hours`, by what they wait for", "health",
     response=dict[str, list[dict[str, Any]]])  # fmt: skip
async def get_health_waiting(request: Request, who: Principal, _: None) -> Any:
    waiting = await who.client.health.waiting_longer_than(
        hours=int_param(request, "hours", 0, low=0, high=1_000_000),
        stuck_minutes=int_param(request, "stuck_minutes", 10, low=1, high=525_600),
    )
    return snake_keys(jsonable(waiting))
