"""Putting flows into the database: ensure compiled (worker start-up) and deploy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from charter.compiler.flows import compile_flow, extract_flow_shape
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.dsl.flow import Flow
from charter.engine.mode import Mode


@dataclass(frozen=True)
class CompileResult:
    flow_slug: str
    status: str  # compiled | verified | recompiled | mismatch | deployed
    version_id: str | None
    differences: list[str] = field(default_factory=list)
    version: int | None = None


def ensure_flow_compiled(conn: psycopg.Connection[Any], flow: Flow, mode: Mode) -> CompileResult:
    """Make sure the database has exactly this flow; see charter.ensure_flow_compiled.

    Returns the result, status ``mismatch`` included (the worker turns that into an error).
    """
    params = {
        "slug": flow.slug,
        "shape": Jsonb(extract_flow_shape(flow)),
        "mode": mode,
        "compiled": Jsonb(compile_flow(flow)),
    }
    with charter_errors():
        row = conn.execute(query("ensure_flow_compiled"), params).fetchone()
    return _result(flow.slug, row)


def deploy_flow(conn: psycopg.Connection[Any], flow: Flow) -> CompileResult:
    """Publish the flow as a new version if its shape changed (deletes nothing)."""
    params = {
        "slug": flow.slug,
        "shape": Jsonb(extract_flow_shape(flow)),
        "compiled": Jsonb(compile_flow(flow)),
    }
    with charter_errors():
        row = conn.execute(query("deploy_flow"), params).fetchone()
    return _result(flow.slug, row)


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


def _result(slug: str, row: tuple[Any, ...] | None) -> CompileResult:
    assert row is not None
    data = row[0]
    return CompileResult(
        flow_slug=slug,
        status=data["status"],
        version_id=data.get("versionId"),
        differences=list(data.get("differences") or []),
        version=data.get("version"),
    )
