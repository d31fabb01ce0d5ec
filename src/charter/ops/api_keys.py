"""API key operations: create, list, revoke and authenticate keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from charter.db.store import Call, Operation, first_json, first_value, json_rows
from charter.ops.arguments import text_argument
from charter.ops.run_model import timestamp


@dataclass(frozen=True)
class ApiKey:
    id: str
    org_id: str
    actor: str
    label: str | None
    created_at: datetime | None = None
    created_by: str | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    key: str | None = None  # the secret: only when the key was just made
    admin: bool = False  # may administer over HTTP (a service account, or a directory admin)
    platform: bool = False  # may also publish contracts (charter keys create --platform)


def _api_key(data: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=data["id"],
        org_id=data["orgId"],
        actor=data["actor"],
        label=data.get("label"),
        created_at=timestamp(data.get("createdAt")),
        created_by=data.get("createdBy"),
        last_used_at=timestamp(data.get("lastUsedAt")),
        revoked_at=timestamp(data.get("revokedAt")),
        key=data.get("key"),
        admin=bool(data.get("admin")),
        platform=bool(data.get("platform")),
    )


def create_api_key(
    org_id: str, actor: str, label: str | None, created_by: str | None, platform: bool = False
) -> Operation[ApiKey]:
    params = {
        "org_id": text_argument(org_id, "org"),
        "actor": text_argument(actor, "actor"),
        "label": label,
        "created_by": created_by,
        "platform": bool(platform),
    }
    return _api_key((yield Call("create_api_key", params, first_json, retry_safe=False)))


def list_api_keys(org_id: str | None) -> Operation[list[ApiKey]]:
    rows = yield Call("list_api_keys", {"org_id": org_id}, json_rows)
    return [_api_key(row) for row in rows]


def revoke_api_key(key_id: str) -> Operation[bool]:
    return bool(
        (yield Call("revoke_api_key", {"id": text_argument(key_id, "key id")}, first_value))
    )


def authenticate_api_key(key: str) -> Operation[ApiKey | None]:
    data = yield Call("authenticate_api_key", {"key": key}, first_json)
    return _api_key(data) if data else None
