"""/api/runs: start, list, show, cancel and retry runs."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, int_param
from charter.api.schemas import Reason, RunState, Started, StartRun
from charter.db.store import Call, first_value
from charter.errors import RunNotFoundError
from charter.ops import runs as ops
from charter.ops.run_model import Run
from charter.vocabulary import RunStatus


async def _own_run(who: Principal, run_id: str) -> None:
    owned = await who.client.store.execute(
        Call("runs_of_org", {"org_id": who.org_id, "run_ids": [run_id]}, first_value)
    )
    if run_id not in (owned or []):
        raise RunNotFoundError(f"Run {run_id!r} does not exist in org {who.org_id}.")


@api("POST", "/api/runs", "Start a run of a published flow", "runs", body=StartRun,
     response=Started, status=201)  # fmt: skip
async def start_run(request: Request, who: Principal, body: StartRun) -> Any:
    return Started(id=await who.client.start(body.flow, body.input, run_id=body.run_id))


@api("GET", "/api/runs", "List the org's runs (newest first)", "runs",
     response=list[dict[str, Any]])  # fmt: skip
async def list_runs(request: Request, who: Principal, _: None) -> Any:
    op = ops.list_runs(
        request.query_params.get("flow"),
        request.query_params.get("status"),
        int_param(request, "limit", 100, high=1000),
        request.query_params.get("after"),
        org_id=who.org_id,
    )
    return await who.client.store.perform(op)


@api("GET", "/api/runs/{run_id}", "A run with its steps and evidence", "runs", response=Run)
async def get_run(request: Request, who: Principal, _: None) -> Any:
    run_id = request.path_params["run_id"]
    await _own_run(who, run_id)
    return await who.client.get_run(run_id)


@api("POST", "/api/runs/{run_id}/cancel",
     "Cancel a run (a document's instance: its approvals close, its undelivered effects stop)",
     "runs", body=Reason, body_required=False, response=RunState)  # fmt: skip
async def cancel_run(request: Request, who: Principal, body: Reason) -> Any:
    run_id = request.path_params["run_id"]
    await _own_run(who, run_id)
    who.require_admin("cancel runs")
    status = await who.client.cancel(run_id, actor=who.actor, reason=body.reason)
    return RunState(id=run_id, status=RunStatus(status))


@api("POST", "/api/runs/{run_id}/retry", "Retry a failed run (or document instance)", "runs",
     response=RunState)  # fmt: skip
async def retry_run(request: Request, who: Principal, _: None) -> Any:
    run_id = request.path_params["run_id"]
    await _own_run(who, run_id)
    status = await who.client.retry(run_id, actor=who.actor)
    return RunState(id=run_id, status=RunStatus(status))
