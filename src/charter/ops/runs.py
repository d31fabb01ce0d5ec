"""Run operations: start, wait, cancel, retry and list runs.

Each operation is a generator of requests (:mod:`charter.db.store`): it yields a
:class:`~charter.db.store.Call` and receives its result, so it is written once and run by
both the sync and the async store.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from charter.canonical import canonical_hash
from charter.compiler.flows import extract_flow_shape
from charter.db.store import Call, Listen, Operation, first_json, first_value, json_rows
from charter.dsl.flow import Flow
from charter.errors import (
    ArgumentError,
    DatabaseUnreachableError,
    FlowNotFoundError,
    FlowShapeMismatchError,
    PermissionDeniedError,
    RunNotFoundError,
    RunWaitTimeoutError,
)
from charter.ops.arguments import clean_text, text_argument
from charter.ops.flows import check_call, ensure_call
from charter.ops.run_ids import new_run_ids
from charter.ops.run_inputs import run_input_json, run_inputs_json
from charter.ops.run_model import Run, run_from_json
from charter.payloads import shown
from charter.vocabulary import RunStatus

_POLL_S = 1.0  # a missed notice costs at most this long


@dataclass
class ClientState:
    """What a client remembers between calls: its org, whether it may publish contracts
    (a client acting for an org, ``for_org``, may not: contracts are the platform's) and the
    flows it already checked."""

    org_id: str = "default"
    verified: set[tuple[str, str]] = field(default_factory=set)
    may_publish_contracts: bool = True


def start(
    state: ClientState,
    flow: Flow | str,
    input: Any,
    run_id: str | None,
    version_id: str | None,
    priority: int | None = None,
) -> Operation[str]:
    if run_id is not None:
        text_argument(run_id, "run_id")
    _optional_text(version_id, "version_id")
    _check_priority(priority)
    org_id = text_argument(state.org_id, "org_id")
    slug = yield from _ensure(state, flow, version_id)
    # A generated id is chosen here, not in SQL, so that resending after a lost connection
    # finds the run it may already have started instead of starting a second one.
    chosen = run_id if run_id is not None else str(uuid.uuid4())
    params = {
        "flow": slug,
        "input": run_input_json(flow, input),
        "run_id": text_argument(chosen, "run_id"),
        "org_id": org_id,
        "version_id": version_id,
        "priority": priority,
    }
    started = yield Call("start_run", params, first_json, what=f"starting a run of '{slug}'")
    return str(started["runId"])


def start_many(
    state: ClientState,
    flow: Flow | str,
    inputs: Sequence[Any],
    run_ids: Sequence[str] | None,
    version_id: str | None,
    priority: int | None = None,
) -> Operation[list[str]]:
    if not _is_list(inputs):
        raise ArgumentError(
            f"start_many takes a list of inputs, one per run, not {type(inputs).__name__}."
        )
    if run_ids is not None:
        if not _is_list(run_ids):
            raise ArgumentError(
                f"start_many takes run_ids as a list of strings, one per input (or None), "
                f"not {type(run_ids).__name__}."
            )
        if len(run_ids) != len(inputs):
            raise ArgumentError(
                f"start_many got {len(inputs)} inputs but {len(run_ids)} run ids; give one run "
                "id per input, or none."
            )
        for rid in run_ids:
            text_argument(rid, "run_id")
    _optional_text(version_id, "version_id")
    _check_priority(priority)
    org_id = text_argument(state.org_id, "org_id")
    slug = yield from _ensure(state, flow, version_id)
    ids = list(run_ids) if run_ids is not None else new_run_ids(len(inputs))
    params = {
        "flow": slug,
        "inputs": run_inputs_json(flow, inputs),
        "run_ids": ids,
        "org_id": org_id,
        "version_id": version_id,
        "priority": priority,
    }
    started = yield Call(
        "start_runs", params, first_value, what=f"starting {len(ids)} runs of '{slug}'"
    )
    return list(started)


def get_run(run_id: str, org_id: str | None) -> Operation[Run]:
    [run] = yield from get_runs([run_id], org_id)
    return run


def get_runs(run_ids: Sequence[str], org_id: str | None) -> Operation[list[Run]]:
    """The runs of org ``org_id`` (another org's run does not exist for it); None, for an
    operator, finds a run whatever its org."""
    ids = _run_ids(run_ids)
    found = yield Call("get_runs", {"run_ids": ids, "org_id": org_id}, first_json)
    return [run_from_json(_found(rid, data, org_id)) for rid, data in zip(ids, found, strict=True)]


def _finished_runs(run_ids: list[str], org_id: str | None) -> Operation[dict[str, Run]]:
    """Those of the runs that are finished, whole; a running one is only checked to exist."""
    found = yield Call("get_finished_runs", {"run_ids": run_ids, "org_id": org_id}, first_json)
    finished = {}
    for rid, data in zip(run_ids, found, strict=True):
        if _found(rid, data, org_id)["status"] != RunStatus.RUNNING:
            finished[rid] = run_from_json(data)
    return finished


def _found(run_id: str, data: Any, org_id: str | None) -> Any:
    if data is None:
        where = "" if org_id is None else f" in org {org_id!r}"
        raise RunNotFoundError(f"Run {run_id!r} does not exist{where}. Check the run id.")
    return data


def wait_many(run_ids: Sequence[str], org_id: str | None, timeout: float) -> Operation[list[Run]]:
    """Wait until every run is completed, failed or cancelled; RunWaitTimeoutError after
    ``timeout`` seconds (the runs go on). Rides through a database that is briefly gone."""
    run_ids = _run_ids(run_ids)
    timeout = _timeout(timeout)
    deadline = time.monotonic() + timeout
    done: dict[str, Run] = {}
    unreachable: DatabaseUnreachableError | None = None
    while True:
        seen = yield Listen()  # before reading, so a notice during the read is not lost
        pending = list(dict.fromkeys(rid for rid in run_ids if rid not in done))
        try:
            done.update((yield from _finished_runs(pending, org_id)))
            unreachable = None
        except DatabaseUnreachableError as exc:
            unreachable = exc  # keep trying until the deadline
        if len(done) == len(set(run_ids)):
            return [done[rid] for rid in run_ids]
        left = deadline - time.monotonic()
        if left <= 0:
            # The unfinished runs whole, for what the error says; one that finished since
            # the last read is returned after all.
            latest: dict[str, Run] = {}
            if unreachable is None:
                with contextlib.suppress(DatabaseUnreachableError):
                    pending = list(dict.fromkeys(rid for rid in run_ids if rid not in done))
                    latest = {run.id: run for run in (yield from get_runs(pending, org_id))}
                    done.update((rid, run) for rid, run in latest.items() if run.done)
            if len(done) == len(set(run_ids)):
                return [done[rid] for rid in run_ids]
            runs = [latest.get(rid) for rid in run_ids if rid not in done]
            raise _wait_timeout(runs, timeout, unreachable)
        yield Listen(seen, min(left, _POLL_S))


def cancel(
    run_id: str, org_id: str | None, actor: str | None = None, reason: str | None = None
) -> Operation[str]:
    """Cancel a run. A document's workflow instance records ``actor`` (the database role
    when None) and ``reason`` in the document's audit trail."""
    params = {
        "run_id": text_argument(run_id, "run_id"),
        "org_id": org_id,
        "actor": None if actor is None else text_argument(actor, "actor"),
        "reason": None if reason is None else reason_argument(reason),
    }
    # Cancelling a cancelled run is a no-op, so resending is safe.
    call = Call("cancel_run", params, first_value, what=f"cancelling run {run_id!r}")
    return str((yield call))


def reason_argument(value: Any) -> str:
    """Why someone acted, as the audit trail keeps it: a string of at most 2000 characters."""
    if not isinstance(value, str) or len(value) > 2000:
        raise ArgumentError("reason must be a string of at most 2000 characters.")
    return clean_text(value, "reason")


def retry(run_id: str, org_id: str | None, actor: str | None = None) -> Operation[str]:
    """Retry a failed run. A document's workflow instance records ``actor`` (the database
    role when None) in its evidence."""
    params = {
        "run_id": text_argument(run_id, "run_id"),
        "org_id": org_id,
        "actor": None if actor is None else text_argument(actor, "actor"),
    }
    call = Call(
        "retry_run",
        params,
        first_value,
        retry_safe=False,  # a second retry of a resumed run is refused as not failed
        what=f"retrying run {run_id!r}",
    )
    return str((yield call))


def list_runs(
    flow: Flow | str | None,
    status: str | None,
    limit: int,
    after: str | None,
    org_id: str | None = None,
) -> Operation[list[Run]]:
    if status is not None and (not isinstance(status, str) or status not in set(RunStatus)):
        raise ArgumentError(
            f"status={shown(status)} is not a run status; use one of "
            f"{', '.join(s.value for s in RunStatus)}."
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ArgumentError(
            f"limit={shown(limit)} must be a whole number from 1 to 10000; page with after=."
        )
    slug = flow.slug if isinstance(flow, Flow) else flow
    params = {
        "flow": None if slug is None else text_argument(slug, "flow"),
        "status": status,
        "limit": limit,
        "after": None if after is None else text_argument(after, "after"),
        "org_id": org_id,
    }
    rows = yield Call("list_runs", params, json_rows)
    return [run_from_json(data) for data in rows]


def _ensure(state: ClientState, flow: Flow | str, version_id: str | None) -> Operation[str]:
    """The flow's slug, once the database is known to hold this flow's shape: a missing flow
    is compiled (when the role may), a changed one refused. A slug is taken as it is."""
    if isinstance(flow, str):
        return text_argument(flow, "flow")
    if not isinstance(flow, Flow):
        raise ArgumentError(f"flow must be a Flow or a flow slug, not {type(flow).__name__}.")
    if version_id is not None:
        return flow.slug
    shape = extract_flow_shape(flow)
    key = (flow.slug, canonical_hash(shape))
    if key in state.verified:
        return flow.slug
    result = yield check_call(flow)
    if result.status == "missing":
        try:
            # A client compiles a missing flow but never publishes a changed shape.
            result = yield ensure_call(flow, "production")
        except PermissionDeniedError:
            raise FlowNotFoundError(
                f"Flow '{flow.slug}' is not in the database, and this database role may not "
                "publish flows. Publish it as the schema's owner (`charter deploy MODULE`) "
                "first."
            ) from None
    if result.status == "mismatch":
        raise _mismatch(flow, result.differences)
    if result.status == "verified":  # one just compiled might yet be rolled back
        state.verified.add(key)
    return flow.slug


def _optional_text(value: Any, name: str) -> str | None:
    return None if value is None else text_argument(value, name)


def _is_list(value: Any) -> bool:
    """A list or tuple of things, not a string (which is a sequence of characters)."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _run_ids(run_ids: Any) -> list[str]:
    if not _is_list(run_ids):
        raise ArgumentError(
            f"run_ids must be a list of run ids (strings), not {type(run_ids).__name__}; for "
            "one run, pass [run_id]."
        )
    return [text_argument(rid, "run_id") for rid in run_ids]


def _timeout(value: Any) -> float:
    """Seconds to wait: a number, 0 or more (inf waits for good)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(
            f"timeout must be a number of seconds, not {type(value).__name__} ({shown(value)})."
        )
    try:
        seconds = float(value)
    except OverflowError:  # an int beyond any float
        seconds = math.inf
    if math.isnan(seconds) or seconds < 0:
        raise ArgumentError(
            f"timeout={shown(value)} is not a number of seconds; give 0 or more (0 looks once)."
        )
    return seconds


def _mismatch(flow: Flow, differences: list[str]) -> FlowShapeMismatchError:
    listed = "\n".join(f"  - {d}" for d in differences)
    return FlowShapeMismatchError(
        f"Flow '{flow.slug}' in the database has a different shape than the code:\n{listed}\n"
        "Publish the code as a new version first (charter deploy MODULE, or a worker "
        "started with --deploy), or start the run by slug to use the published version.",
        flow_slug=flow.slug,
        differences=differences,
    )


def _wait_timeout(
    runs: list[Run | None], timeout: float, unreachable: DatabaseUnreachableError | None
) -> RunWaitTimeoutError:
    known = [run for run in runs if run is not None]
    if len(runs) == 1 and known:
        run = known[0]
        pending = [s.slug for s in run.steps if s.status != "completed"]
        message = (
            f"Run {run.id} is still {run.status} after {timeout:g}s (steps not completed: "
            f"{', '.join(pending) or 'none'}). "
        )
        if run.serving_workers == 0:
            message += f"No live worker runs the code of {run.flow} v{run.version}. "
        else:
            message += f"Is a worker running for flow '{run.flow}'? "
    else:
        message = f"{len(runs)} runs are not finished after {timeout:g}s. "
    if unreachable is not None:
        message += f"The database was unreachable at the end ({unreachable.message}) "
    return RunWaitTimeoutError(message + "The runs go on; wait again or check `charter status`.")


def _check_priority(priority: object) -> None:
    if priority is None:
        return
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 1000:
        raise ArgumentError(
            f"priority={priority!r} is not valid; use a whole number from 0 to 1000 (higher "
            "runs first: a task of priority N is claimed as if it had been ready N minutes "
            "earlier), or leave it out for the step's default."
        )
