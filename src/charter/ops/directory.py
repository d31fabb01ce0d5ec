"""Directory operations: the org's users, their roles, and the org's settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from charter.db.store import Call, Operation, first_json, first_value
from charter.errors import ArgumentError
from charter.ops.arguments import clean_text, text_argument
from charter.payloads import json_text, shown


@dataclass(frozen=True)
class DirectoryUser:
    id: str
    roles: list[str]
    manager: str | None
    email: str | None
    phone: str | None


def put_user(
    org_id: str,
    user_id: str,
    roles: Sequence[str],
    manager: str | None,
    email: str | None,
    phone: str | None,
) -> Operation[DirectoryUser]:
    if isinstance(roles, str | bytes) or not isinstance(roles, Sequence):
        raise ArgumentError(f"roles must be a list of role names, not {shown(roles, 80)}.")
    if not all(isinstance(r, str) for r in roles):
        raise ArgumentError(f"roles must be a list of role names, not {shown(roles, 80)}.")
    params = {
        "org_id": org_id,
        "user_id": text_argument(user_id, "user id"),
        "roles": [text_argument(r, "role") for r in roles],
        "manager": None if manager is None else text_argument(manager, "manager"),
        "email": None if email is None else clean_text(email, "email"),
        "phone": None if phone is None else clean_text(phone, "phone"),
    }
    return _user((yield Call("put_user", params, first_json)))


def get_user(org_id: str, user_id: str) -> Operation[DirectoryUser]:
    params = {"org_id": org_id, "user_id": text_argument(user_id, "user id")}
    return _user((yield Call("get_user", params, first_json)))


def remove_user(org_id: str, user_id: str) -> Operation[bool]:
    params = {"org_id": org_id, "user_id": text_argument(user_id, "user id")}
    return bool((yield Call("remove_user", params, first_value)))


def users_with_role(org_id: str, role: str) -> Operation[list[str]]:
    params = {"org_id": org_id, "role": text_argument(role, "role")}
    return list((yield Call("users_with_role", params, first_value)))


def put_org(org_id: str, data: Any) -> Operation[dict[str, Any]]:
    if not isinstance(data, dict):
        raise ArgumentError(f"Org data is a dict, not {type(data).__name__}.")
    params = {"org_id": org_id, "data": json_text(data, "The org data")}
    return dict((yield Call("put_org", params, first_json)))


def get_org(org_id: str) -> Operation[dict[str, Any]]:
    return dict((yield Call("get_org", {"org_id": org_id}, first_json)))


def _user(data: dict[str, Any]) -> DirectoryUser:
    return DirectoryUser(
        id=data["id"],
        roles=list(data["roles"]),
        manager=data.get("manager"),
        email=data.get("email"),
        phone=data.get("phone"),
    )
