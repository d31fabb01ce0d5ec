"""What a worker does before it takes any task: make the database hold exactly its flows."""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from charter.db.mode import Mode
from charter.db.store import perform
from charter.dsl.flow import Flow
from charter.errors import FlowNotFoundError, FlowShapeMismatchError, PermissionDeniedError
from charter.ops.flows import CompileResult, check_call, deploy_flow, ensure_flow_compiled

log = logging.getLogger("charter.worker")


def prepare_flows(
    conn: psycopg.Connection[Any],
    flows: list[Flow],
    *,
    mode: Mode,
    deploy: bool = False,
    spec: str | None = None,
) -> list[CompileResult]:
    """Compile, verify, recompile (development) or deploy (``deploy=True``) every flow.

    Raises FlowShapeMismatchError listing every difference of every flow that differs in
    production; the other flows are still checked first, so one run shows all problems.
    """
    results = []
    for flow in flows:
        result = deploy_flow(conn, flow) if deploy else ensure_flow_compiled(conn, flow, mode)
        results.append(result)
        if result.status == "mismatch":
            continue
        version = f" version {result.version}" if result.version else ""
        log.info("flow '%s' %s (%s mode)%s", flow.slug, result.status, mode, version)
        for difference in result.differences:
            log.info("  %s", difference)
    mismatched = [r for r in results if r.status == "mismatch"]
    if mismatched:
        raise _mismatch_error(mismatched, spec)
    return results


def _mismatch_error(results: list[CompileResult], spec: str | None) -> FlowShapeMismatchError:
    lines = []
    for result in results:
        lines.append(f"Flow '{result.flow_slug}':")
        lines.extend(f"  - {d}" for d in result.differences)
    names = ", ".join(f"'{r.flow_slug}'" for r in results)
    target = spec or "MODULE"
    return FlowShapeMismatchError(
        f"The database holds {names} with a different shape than the code, and this is a "
        "production database, so charter will not overwrite it.\n"
        + "\n".join(lines)
        + f"\nTo publish the code as a new version (new runs use it; runs already started "
        f"finish on theirs), run `charter deploy {target}` or start the worker with --deploy. "
        "If the code is wrong, change it back.",
        flow_slug=results[0].flow_slug,
        differences=[d for r in results for d in r.differences],
    )


def check_published(
    conn: psycopg.Connection[Any], flows: list[Flow], *, deploy: bool, spec: str
) -> None:
    """For a role that may not publish flows (charter_worker): every flow must already be in
    the database with the code's shape; otherwise the error names the owner's command."""
    fix = f"Run `charter deploy {spec}` as the schema's owner, then start the worker again."
    if deploy:
        raise PermissionDeniedError(
            f"--deploy publishes flows, which this database role may not do. {fix}"
        )
    missing, mismatched = [], []
    for flow in flows:
        result = perform(conn, check_call(flow))
        if result.status == "missing":
            missing.append(flow.slug)
        elif result.status == "mismatch":
            mismatched.append(result)
    if missing:
        names = ", ".join(f"'{slug}'" for slug in missing)
        raise FlowNotFoundError(f"Flows {names} are not published in this database. {fix}")
    if mismatched:
        raise _mismatch_error(mismatched, spec)
    for flow in flows:
        log.info("flow '%s' verified (published by the owner)", flow.slug)
