"""The health page (the dashboard's home) and the stuck detector's ways out."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render
from charter.ops.health import STUCK_REASONS

WAITING_HOURS = 24  # the health page lists the instances waiting this long


@page
async def health_page(request: Request, who: Principal) -> Response:
    report = await who.client.health.report()
    waiting = await who.client.health.waiting_longer_than(hours=WAITING_HOURS)
    return render(
        request,
        who,
        "health.html",
        report=report,
        reasons=STUCK_REASONS,
        waiting=waiting,
        waiting_hours=WAITING_HOURS,
    )


@page
async def stuck_action(request: Request, who: Principal) -> Response:
    """The stuck detector's ways out, from the health page."""
    form = await request.form()
    run_id = request.path_params["run_id"]
    action = form.get("action")
    if action == "nudge":
        await who.client.health.nudge(run_id, actor=who.actor)
    elif action == "rebuild":
        await who.client.health.rebuild(run_id)
    elif action == "force-fail":
        who.require_admin("force-fail instances")
        reason = str(form.get("reason") or "").strip() or "stuck (failed from the dashboard)"
        await who.client.health.force_fail(run_id, reason, actor=who.actor)
    return redirect(request, "health")
