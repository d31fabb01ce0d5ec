"""/api/dead-letters: side effects out of attempts; re-drive or drop them."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, int_param
from charter.api.schemas import Dropped, Ids, Retried
from charter.errors import DeadLetterNotFoundError
from charter.ops.side_effects import SideEffect


@api("GET", "/api/dead-letters", "Side effects out of attempts (?run_id=: one run's)",
     "dead letters", response=list[SideEffect])  # fmt: skip
async def list_dead_letters(request: Request, who: Principal, _: None) -> Any:
    letters = await who.client.dead_letters.list(
        limit=int_param(request, "limit", 100),
        run_id=request.query_params.get("run_id") or None,
    )
    # Secret-carrying request headers and receivers' response bodies are for admins only.
    return letters if who.admin else [letter.redacted() for letter in letters]


@api("GET", "/api/dead-letters/{effect_id}", "One dead letter: its request, last error and "
     "what the receiver answered", "dead letters", response=SideEffect)  # fmt: skip
async def show_dead_letter(request: Request, who: Principal, _: None) -> Any:
    raw = request.path_params["effect_id"]
    known = raw.isdigit() and len(raw) < 19  # a bigint
    effect = await who.client.side_effects.get(int(raw)) if known else None
    if effect is None or effect.status != "dead_letter" or effect.kind != "effect":
        raise DeadLetterNotFoundError(
            f"No dead letter {raw!r} in org {who.org_id}; GET /api/dead-letters lists them."
        )
    return effect if who.admin else effect.redacted()


@api("POST", "/api/dead-letters/retry", "Re-drive dead letters (same idempotency keys; a "
     "workflow's failed instance resumes at the node)", "dead letters", body=Ids,
     response=Retried)  # fmt: skip
async def retry_dead_letters(request: Request, who: Principal, body: Ids) -> Any:
    return Retried(retried=await who.client.dead_letters.retry(body.ids, actor=who.actor))


@api("POST", "/api/dead-letters/drop", "Drop dead letters for good", "dead letters", body=Ids,
     response=Dropped)  # fmt: skip
async def drop_dead_letters(request: Request, who: Principal, body: Ids) -> Any:
    who.require_admin("drop dead letters")
    return Dropped(dropped=await who.client.dead_letters.drop(body.ids, actor=who.actor))
