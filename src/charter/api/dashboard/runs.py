"""The runs list and a run's page (its graph, opened at the node it is at or failed at;
its failure summed up; steps, dead letters; cancel and retry). A run of a document's
workflow is named by the document's title."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render
from charter.api.graph import focus_node, run_svg
from charter.db.store import Call, first_json
from charter.errors import RunNotFoundError, with_code
from charter.ops import runs as ops


@page
async def runs_page(request: Request, who: Principal) -> Response:
    op = ops.list_runs(
        request.query_params.get("flow") or None,
        request.query_params.get("status") or None,
        100,
        None,
        org_id=who.org_id,
    )
    mine = await who.client.store.perform(op)
    titles = await _titles(who, [r.id for r in mine])
    return render(request, who, "runs.html", runs=mine, titles=titles, query=request.query_params)


async def _titles(who: Principal, run_ids: list[str]) -> dict[str, dict[str, str]]:
    """The runs among ``run_ids`` that are document instances: their document's id and title."""
    params = {"org_id": who.org_id, "run_ids": run_ids}
    return await who.client.store.execute(Call("run_titles", params, first_json)) or {}


@page
async def run_page(request: Request, who: Principal) -> Response:
    run_id = request.path_params["run_id"]
    graph = await who.client.store.execute(
        Call("run_graph", {"org_id": who.org_id, "run_id": run_id}, first_json)
    )
    if not graph:
        raise RunNotFoundError(f"Run {run_id!r} does not exist in org {who.org_id}.")
    if request.method == "POST":
        form = await request.form()
        if form.get("action") == "cancel":
            who.require_admin("cancel runs")
            await who.client.cancel(run_id, actor=who.actor)
        elif form.get("action") == "retry":
            await who.client.retry(run_id, actor=who.actor)
        return redirect(request, "run", run_id=run_id)
    run = await who.client.get_run(run_id)
    focus = focus_node(graph["compiled"], graph["nodes"])
    svg = run_svg(graph["compiled"], graph["nodes"], focus)
    letters = await who.client.dead_letters.list(run_id=run_id)
    document = (await _titles(who, [run_id])).get(run_id)
    failed = next((s for s in run.steps if s.status == "failed" and s.error), None)
    return render(
        request, who, "run.html", run=run, svg=svg, letters=letters, focus=focus,
        document=document, failure=with_code(run.error or (failed.error if failed else None)),
    )  # fmt: skip
