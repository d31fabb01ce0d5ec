"""Who is asking: every request carries an API key (``Authorization: Bearer chk_…``) and
acts as that key's actor in that key's org. No anonymous reads or writes.

A page of the dashboard (the workflow builder) calls the API from the browser with the
signed-in session instead: its session cookie together with the header ``X-CSRF-Token``
holding the session's CSRF token (the page has it). The cookie alone is never enough: a
request another site makes the browser send cannot set that header, so the API takes no
cross-site requests."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from starlette.requests import Request

from charter.api.http_errors import Unauthenticated
from charter.client.client import AsyncClient
from charter.errors import PermissionDeniedError
from charter.ops.api_keys import authenticate_api_key


@dataclass(frozen=True)
class Principal:
    key_id: str
    org_id: str
    actor: str
    client: AsyncClient  # the server's client, acting for this org (publishing contracts
    # only for a platform key: they are the platform's, not an org's)
    admin: bool = False  # a service account, or a user with the directory role admin
    platform: bool = False  # a platform key: may publish contracts too

    def require_admin(self, what: str) -> None:
        """Administration (definitions, cancelling runs, force-failing, dropping dead
        letters) needs a service account's key or a directory admin's."""
        if not self.admin:
            raise PermissionDeniedError(
                f"The key of {self.actor!r} may not {what}: that needs a service account's key "
                "(charter keys create ORG service:NAME) or a user with the directory role admin."
            )


async def principal_from_key(client: AsyncClient, key: str) -> Principal:
    found = await client.store.perform(authenticate_api_key(key))
    if found is None:
        raise Unauthenticated(
            "this API key is unknown or revoked; make one with charter keys create"
        )
    return Principal(
        found.id,
        found.org_id,
        found.actor,
        client.for_org(found.org_id, platform=found.platform),
        admin=found.admin,
        platform=found.platform,
    )


CSRF_HEADER = "x-csrf-token"


async def principal(request: Request) -> Principal:
    """The request's principal, from its bearer key, else from the dashboard session of a
    request that also sends the session's CSRF token in ``X-CSRF-Token`` (a cookie alone
    never signs a request in: no CSRF into the API)."""
    client: AsyncClient = request.app.state.client
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() == "bearer" and key.strip():
        return await principal_from_key(client, key.strip())
    session_key = _session_key(request)
    if session_key is not None:
        return await principal_from_key(client, session_key)
    raise Unauthenticated("send an API key: Authorization: Bearer chk_… (charter keys create)")


def _session_key(request: Request) -> str | None:
    """The signed-in session's API key, if the request carries the session's CSRF token."""
    sent = request.headers.get(CSRF_HEADER, "")
    if not sent or "session" not in request.scope:
        return None
    expected = str(request.session.get("csrf", ""))
    if not expected or not secrets.compare_digest(sent.encode(), expected.encode()):
        return None
    key: str | None = request.app.state.sessions.key(request.session.get("sid"))
    return key
