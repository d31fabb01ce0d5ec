"""What every dashboard page shares: the templates, the session (signing in takes an API
key; the browser then holds only a random session id in a signed, HTTP-only cookie, the key
stays in the server's memory, so a restart signs everyone out), the CSRF token every form
carries, and links built from route names, so the dashboard works under any prefix it is
mounted at."""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import pass_context
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from charter.api.auth import Principal, principal_from_key
from charter.api.dashboard.words import acted_by, failure_line, wait_words, when
from charter.api.http_errors import Unauthenticated, error_of
from charter.ops.run_model import waiting_text

ASSETS = Path(__file__).parent.parent  # templates/ and static/
templates = Jinja2Templates(directory=str(ASSETS / "templates"))
# JSON as people read it (autoescaping keeps it safe in the page).
templates.env.filters["waiting"] = waiting_text
templates.env.filters["wait_words"] = wait_words
templates.env.filters["acted_by"] = acted_by
templates.env.filters["failure_line"] = failure_line
templates.env.filters["when"] = when
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


def path_for(request: Request, name: str, /, **params: Any) -> str:
    """The path of the dashboard's route ``name``, under the prefix the app is served at
    (a Starlette ``Mount``, or a proxy's ``root_path``). A path, not a URL: behind a proxy
    the scheme and host the server sees are not the browser's."""
    # An id with "/" or "?" is escaped; a static file's path keeps its folders.
    safe = "/" if name == "static" else ""
    escaped = {k: quote(str(v), safe=safe) for k, v in params.items()}
    path = request.app.router.url_path_for(name, **escaped)
    return str(request.scope.get("root_path", "")).rstrip("/") + str(path)


@pass_context
def _url_for(context: Any, name: str, /, **params: Any) -> str:
    return path_for(context["request"], name, **params)


templates.env.globals["url_for"] = _url_for


def redirect(request: Request, name: str, /, **params: Any) -> RedirectResponse:
    return RedirectResponse(path_for(request, name, **params), status_code=303)


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


async def signed_in(request: Request) -> Principal | None:
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


async def checked_form(request: Request) -> dict[str, Any]:
    form = dict(await request.form())
    sent = str(form.get("csrf", ""))
    if not sent or not secrets.compare_digest(sent, str(request.session.get("csrf", ""))):
        raise PermissionError("the form's CSRF token does not match this session")
    return form


def render(
    request: Request, who: Principal | None, name: str, status: int = 200, **context: Any
) -> Response:
    unread = getattr(request.state, "unread", None)  # the bell's count, when signed in
    return templates.TemplateResponse(
        request,
        name,
        {"who": who, "csrf": _csrf(request), "unread": unread, **context},
        status_code=status,
    )


View = Callable[[Request, Principal], Awaitable[Response]]


def page(view: View) -> Callable[[Request], Awaitable[Response]]:
    """A page that needs a signed-in principal. A refusal is shown on the error page with
    the status and code the JSON API answers it with (:func:`http_errors.error_of`)."""

    async def run(request: Request) -> Response:
        who = await signed_in(request)
        if who is None:
            back = quote(request.url.path, safe="/")
            return RedirectResponse(f"{path_for(request, 'sign_in')}?next={back}", 303)
        try:
            if request.method == "GET":
                request.state.unread = await _unread(who)
            if request.method == "POST":
                await checked_form(request)
            return await view(request, who)
        except Exception as exc:
            answer = error_of(exc)
            if answer is not None:
                status, code, message = answer
                return render(request, who, "error.html", status, message=f"[{code}] {message}")
            if isinstance(exc, PermissionError):  # the CSRF token
                return render(request, who, "error.html", 403, message=str(exc))
            if isinstance(exc, ValueError):  # a form value that is no number: hand-made
                message = "the form's values are not what this page sends; reload it"
                return render(request, who, "error.html", 400, message=message)
            raise

    run.__name__ = view.__name__
    return run


BELL_MOST = 99  # the bell counts this many unread notifications, then shows "99+"


async def _unread(who: Principal) -> str:
    """The signed-in principal's unread in-app notifications, as the bell shows them."""
    found = await who.client.notifications.list(who.actor, unread_only=True, limit=BELL_MOST + 1)
    return f"{BELL_MOST}+" if len(found) > BELL_MOST else str(len(found))


async def sign_in(request: Request) -> Response:
    home = path_for(request, "health")
    if request.method == "GET":
        return render(request, None, "sign_in.html", next=request.query_params.get("next", home))
    try:
        form = await checked_form(request)
    except PermissionError as exc:
        return render(request, None, "sign_in.html", 403, error=str(exc), next=home)
    key = str(form.get("key", "")).strip()
    try:
        await principal_from_key(request.app.state.client, key)
    except Unauthenticated as exc:
        return render(
            request, None, "sign_in.html", 401, error=exc.message, next=form.get("next", home)
        )
    # A new session on every sign-in: no sid or CSRF token chosen before it survives.
    request.app.state.sessions.close(request.session.get("sid"))
    request.session.clear()
    request.session["sid"] = request.app.state.sessions.open(key)
    target = str(form.get("next") or home)
    # Only a path of this site: never another origin ("//host", "/\\host").
    local = target.startswith("/") and not target.startswith(("//", "/\\"))
    return RedirectResponse(target if local else home, status_code=303)


async def sign_out(request: Request) -> Response:
    try:
        await checked_form(request)
    except PermissionError:
        return redirect(request, "health")
    request.app.state.sessions.close(request.session.get("sid"))
    request.session.clear()
    return redirect(request, "sign_in")
