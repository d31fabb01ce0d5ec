"""Putting flows into the database: ensure compiled (worker start-up) and deploy."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from charter.compiler.flows import compile_flow, extract_flow_shape
from charter.db.mode import Mode
from charter.db.store import Call, Operation, first_json, perform
from charter.dsl.flow import Flow
from charter.ops.arguments import text_argument


@dataclass(frozen=True)
class CompileResult:
    flow_slug: str
    status: str  # compiled | verified | recompiled | mismatch | deployed
    version_id: str | None
    differences: list[str] = field(default_factory=list)
    version: int | None = None


def check_call(flow: Flow) -> Call[CompileResult]:
    """The database's flow against the code's shape, changing nothing (any role)."""
    params = {"slug": flow.slug, "shape": Jsonb(extract_flow_shape(flow))}
    return Call("check_flow", params, _parser(flow.slug))


def ensure_call(flow: Flow, mode: Mode) -> Call[CompileResult]:
    """Make the database hold exactly this flow; see charter.ensure_flow_compiled."""
    params = {
        "slug": flow.slug,
        "shape": Jsonb(extract_flow_shape(flow)),
        "mode": mode,
        "compiled": Jsonb(compile_flow(flow)),
    }
    return Call("ensure_flow_compiled", params, _parser(flow.slug), what=f"compiling {flow.slug!r}")


def deploy_call(flow: Flow) -> Call[CompileResult]:
    """Publish the flow as a new version if its shape changed (deletes nothing)."""
    params = {
        "slug": flow.slug,
        "shape": Jsonb(extract_flow_shape(flow)),
        "compiled": Jsonb(compile_flow(flow)),
    }
    return Call("deploy_flow", params, _parser(flow.slug), what=f"deploying {flow.slug!r}")


def ensure_flow_compiled(conn: psycopg.Connection[Any], flow: Flow, mode: Mode) -> CompileResult:
    """Make sure the database has exactly this flow; the result may be ``mismatch`` (the
    worker turns that into an error)."""
    return perform(conn, ensure_call(flow, mode))


def deploy_flow(conn: psycopg.Connection[Any], flow: Flow) -> CompileResult:
    """Publish the flow as a new version if its shape changed (deletes nothing)."""
    return perform(conn, deploy_call(flow))


def flow_sql(flow: Flow) -> str:
    """SQL that publishes this flow, for teams that keep flows in migration files."""
    shape = json.dumps(extract_flow_shape(flow), separators=(",", ":"), ensure_ascii=False)
    compiled = compile_flow(flow)
    compiled_text = json.dumps(compiled, separators=(",", ":"), ensure_ascii=False)
    return (
        f"-- Flow '{flow.slug}' (compiled hash {compiled['hash']}), from `charter compile`.\n"
        "-- Creates the flow, or publishes it as a new version if its shape changed; running\n"
        "-- it again changes nothing.\n"
        f"SELECT charter.deploy_flow(\n    {_literal(flow.slug)},\n"
        f"    {_literal(shape)}::jsonb,\n    {_literal(compiled_text)}::jsonb\n);\n"
    )


def _literal(text: str) -> str:
    # standard_conforming_strings is on in every supported PostgreSQL: only ' needs doubling.
    return "'" + text.replace("'", "''") + "'"


def _parser(slug: str) -> Callable[[list[tuple[Any, ...]]], CompileResult]:
    def parse(rows: list[tuple[Any, ...]]) -> CompileResult:
        data = first_json(rows)
        return CompileResult(
            flow_slug=slug,
            status=data["status"],
            version_id=data.get("versionId"),
            differences=list(data.get("differences") or []),
            version=data.get("version"),
        )

    return parse


def flow_summary(slug: str) -> Operation[dict[str, Any] | None]:
    summary: dict[str, Any] | None = yield Call(
        "flow_summary", {"slug": text_argument(slug, "flow")}, first_json
    )
    return summary


def delete_flow(slug: str) -> Operation[dict[str, Any]]:
    call = Call(
        "delete_flow_and_data",
        {"slug": text_argument(slug, "flow")},
        first_json,
        retry_safe=False,
        what=f"deleting flow {slug!r}",
    )
    return dict((yield call))
