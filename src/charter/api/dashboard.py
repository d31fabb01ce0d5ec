"""The dashboard: server-rendered pages (Jinja2) over the same client calls as the API.

Signing in takes an API key; the browser then holds only a random session id in a signed,
HTTP-only cookie (the key stays in the server's memory, so a restart signs everyone out).
Every form carries a CSRF token bound to the session."""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from charter.api.auth import Principal, Unauthenticated, principal_from_key
from charter.api.graph import run_svg
from charter.db.store import Call, first_json, json_rows
from charter.errors import CharterError, RunNotFoundError
from charter.ops import runs as ops
from charter.ops.approvals import request as approval_request
from charter.ops.health import STUCK_REASONS
from charter.ops.run_model import waiting_text

HERE = Path(__file__).parent
WAITING_HOURS = 24  # the health page lists the instances waiting this long
templates = Jinja2Templates(directory=str(HERE / "templates"))
# JSON as people read it (autoescaping keeps it safe in the page).
templates.env.filters["waiting"] = waiting_text
templates.env.filters["json"] = lambda value, indent=None: json.dumps(
    value, indent=indent, ensure_ascii=False, default=str
)
# Bidirectional controls (U+202E and its kin) reorder what follows them on screen: "9100"
# after U+202E shows as "0019". Every value a page shows has them made visible instead.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(value: Any) -> Any:
    """``value`` with each bidirectional control written as ``[U+202E]``."""
    if isinstance(value, str) and _BIDI.search(value):
        shown = _BIDI.sub(lambda found: f"[U+{ord(found.group()):04X}]", value)
        return Markup(shown) if isinstance(value, Markup) else shown  # escaped once only
    return value


templates.env.finalize = visible


class Sessions:
    """Session id → API key, in this process's memory; a session lasts 12 hours."""

    LIFETIME = 12 * 3600.0

    def __init__(self) -> None:
        self._keys: dict[str, tuple[str, float]] = {}

    def open(self, key: str) -> str:
        now = time.monotonic()
        self._keys = {s: v for s, v in self._keys.items() if now - v[1] < self.LIFETIME}
        session_id = secrets.token_urlsafe(32)
        self._keys[session_id] = (key, now)
        return session_id

    def key(self, session_id: str | None) -> str | None:
        found = self._keys.get(session_id or "")
        if found is None or time.monotonic() - found[1] >= self.LIFETIME:
            return None
        return found[0]

    def close(self, session_id: str | None) -> None:
        self._keys.pop(session_id or "", None)


async def _who(request: Request) -> Principal | None:
    key = request.app.state.sessions.key(request.session.get("sid"))
    if key is None:
        return None
    try:
        return await principal_from_key(request.app.state.client, key)
    except Unauthenticated:
        return None


def _csrf(request: Request) -> str:
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


async def _checked_form(request: Request) -> dict[str, Any]:
    form = dict(await request.form())
    sent = str(form.get("csrf", ""))
    if not sent or not secrets.compare_digest(sent, str(request.session.get("csrf", ""))):
        raise PermissionError("the form's CSRF token does not match this session")
    return form


def _page(
    request: Request, who: Principal | None, name: str, status: int = 200, **context: Any
) -> Response:
    return templates.TemplateResponse(
        request, name, {"who": who, "csrf": _csrf(request), **context}, status_code=status
    )


View = Callable[[Request, Principal], Awaitable[Response]]


def page(name: str) -> Callable[[View], Callable[[Request], Awaitable[Response]]]:
    """A page that needs a signed-in principal; charter's errors are shown on it."""

    def wrap(view: View) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            who = await _who(request)
            if who is None:
                return RedirectResponse(f"/sign-in?next={request.url.path}", status_code=303)
            try:
                if request.method == "POST":
                    await _checked_form(request)
                return await view(request, who)
            except PermissionError as exc:
                return _page(request, who, "error.html", 403, message=str(exc))
            except CharterError as exc:
                status = (
                    404
                    if "NOT_FOUND" in exc.code
                    else 403
                    if exc.code == "PERMISSION_DENIED"
                    else 400
                )
                return _page(
                    request, who, "error.html", status, message=f"[{exc.code}] {exc.message}"
                )
            except ValueError:  # a form value that is no number: a hand-made request
                message = "the form's values are not what this page sends; reload it"
                return _page(request, who, "error.html", 400, message=message)

        run.__name__ = view.__name__
        return run

    return wrap


async def sign_in(request: Request) -> Response:
    if request.method == "GET":
        return _page(request, None, "sign_in.html", next=request.query_params.get("next", "/"))
    try:
        form = await _checked_form(request)
    except PermissionError as exc:
        return _page(request, None, "sign_in.html", 403, error=str(exc), next="/")
    key = str(form.get("key", "")).strip()
    try:
        await principal_from_key(request.app.state.client, key)
    except Unauthenticated as exc:
        return _page(
            request, None, "sign_in.html", 401, error=exc.message, next=form.get("next", "/")
        )
    # A new session on every sign-in: no sid or CSRF token chosen before it survives.
    request.app.state.sessions.close(request.session.get("sid"))
    request.session.clear()
    request.session["sid"] = request.app.state.sessions.open(key)
    target = str(form.get("next") or "/")
    # Only a path of this site: never another origin ("//host", "/\\host").
    local = target.startswith("/") and not target.startswith(("//", "/\\"))
    return RedirectResponse(target if local else "/", status_code=303)


async def sign_out(request: Request) -> Response:
    try:
        await _checked_form(request)
    except PermissionError:
        return RedirectResponse("/", status_code=303)
    request.app.state.sessions.close(request.session.get("sid"))
    request.session.clear()
    return RedirectResponse("/sign-in", status_code=303)


@page("health.html")
async def health_page(request: Request, who: Principal) -> Response:
    report = await who.client.health.report()
    waiting = await who.client.health.waiting_longer_than(hours=WAITING_HOURS)
    return _page(
        request,
        who,
        "health.html",
        report=report,
        reasons=STUCK_REASONS,
        waiting=waiting,
        waiting_hours=WAITING_HOURS,
    )


@page("health.html")
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
    return RedirectResponse("/", status_code=303)


@page("runs.html")
async def runs_page(request: Request, who: Principal) -> Response:
    op = ops.list_runs(
        request.query_params.get("flow") or None,
        request.query_params.get("status") or None,
        100,
        None,
        org_id=who.org_id,
    )
    mine = await who.client.store.perform(op)
    return _page(request, who, "runs.html", runs=mine, query=request.query_params)


@page("run.html")
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
        return RedirectResponse(f"/runs/{run_id}", status_code=303)
    run = await who.client.get_run(run_id)
    svg = run_svg(graph["compiled"], graph["nodes"])
    letters = await who.client.dead_letters.list(run_id=run_id)
    return _page(request, who, "run.html", run=run, svg=svg, letters=letters)


@page("documents.html")
async def documents_page(request: Request, who: Principal) -> Response:
    docs = await who.client.documents.list(
        entity_type=request.query_params.get("entity_type") or None,
        state=request.query_params.get("state") or None,
        limit=100,
    )
    return _page(request, who, "documents.html", documents=docs, query=request.query_params)


@page("document.html")
async def document_page(request: Request, who: Principal) -> Response:
    document_id = request.path_params["document_id"]
    if request.method == "POST":
        form = await request.form()
        documents = who.client.documents
        act = {"pause": documents.pause, "resume": documents.resume, "restart": documents.restart}
        chosen = act.get(str(form.get("action")))
        if chosen is None:
            raise ValueError("unknown action")
        who.require_admin(f"{form.get('action')} a document's workflow")
        await chosen(document_id, actor=who.actor, reason=str(form.get("reason") or "") or None)
        return RedirectResponse(f"/documents/{document_id}", status_code=303)
    doc = await who.client.documents.get(document_id)
    history = await who.client.documents.history(doc.id)
    return _page(request, who, "document.html", doc=doc, history=history)


@page("inbox.html")
async def inbox_page(request: Request, who: Principal) -> Response:
    requests = await who.client.approvals.inbox(who.actor)
    shown = []
    for item in requests:
        snapshot = await who.client.approvals.snapshot(item.id)
        diff = await who.client.approvals.diff(item.id)
        shown.append({"request": item, "snapshot": snapshot, "diff": diff})
    rows = await who.client.store.execute(
        Call("approvals_closed_for", {"org_id": who.org_id, "user_id": who.actor}, json_rows)
    )
    closed = [approval_request(row) for row in rows]
    return _page(request, who, "inbox.html", items=shown, closed=closed)


@page("inbox.html")
async def decide(request: Request, who: Principal) -> Response:
    form = await request.form()
    await who.client.approvals.decide(
        request.path_params["request_id"],
        str(form.get("decision")),
        actor=who.actor,
        entity_version=int(str(form.get("version"))),
        comment=str(form.get("comment") or "") or None,
    )
    return RedirectResponse("/inbox", status_code=303)


@page("dead_letters.html")
async def dead_letters_page(request: Request, who: Principal) -> Response:
    if request.method == "POST":
        form = await request.form()
        ids = [int(str(v)) for v in form.getlist("id")]
        if form.get("action") == "drop":
            who.require_admin("drop dead letters")
            await who.client.dead_letters.drop(ids, actor=who.actor)
        else:
            await who.client.dead_letters.retry(ids, actor=who.actor)
        return RedirectResponse("/dead-letters", status_code=303)
    letters = await who.client.dead_letters.list()
    return _page(request, who, "dead_letters.html", letters=letters)


@page("notifications.html")
async def notifications_page(request: Request, who: Principal) -> Response:
    """The signed-in user's in-app notifications; mark one, or all, read."""
    if request.method == "POST":
        form = await request.form()
        ids = [int(str(v)) for v in form.getlist("id")] if form.get("action") == "read" else None
        await who.client.notifications.mark_read(who.actor, ids)
        return RedirectResponse("/notifications", status_code=303)
    notes = await who.client.notifications.list(who.actor)
    return _page(request, who, "notifications.html", notifications=notes)


@page("definitions.html")
async def definitions_page(request: Request, who: Principal) -> Response:
    from charter.api.definitions_view import overview

    return _page(request, who, "definitions.html", entries=await overview(who))


def dashboard_routes() -> list[Route | Mount]:
    return [
        Route("/", health_page, methods=["GET"]),
        Route("/sign-in", sign_in, methods=["GET", "POST"]),
        Route("/sign-out", sign_out, methods=["POST"]),
        Route("/stuck/{run_id}", stuck_action, methods=["POST"]),
        Route("/runs", runs_page, methods=["GET"]),
        Route("/runs/{run_id}", run_page, methods=["GET", "POST"]),
        Route("/documents", documents_page, methods=["GET"]),
        Route("/documents/{document_id}", document_page, methods=["GET", "POST"]),
        Route("/inbox", inbox_page, methods=["GET"]),
        Route("/inbox/{request_id}/decision", decide, methods=["POST"]),
        Route("/dead-letters", dead_letters_page, methods=["GET", "POST"]),
        Route("/notifications", notifications_page, methods=["GET", "POST"]),
        Route("/definitions", definitions_page, methods=["GET"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
