"""The client and the registry on a real database, fed hostile arguments: every refusal is
a CharterError with a code, never a driver error, a UnicodeEncodeError or a TypeError, and
writes nothing (every table hashes the same before and after)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import AsyncClient, Client, Flow
from charter.errors import ArgumentError, CharterError, RunInputError, RunNotFoundError
from tests.fuzz.ledger import answered
from tests.fuzz.strategies import (
    NUL_TEXT,
    SURROGATE_TEXT,
    charter_error_or_result,
    hostile_argument,
    hostile_text,
    hostile_value,
    settings_for,
    wrong_type,
)


def _unstorable(value: Any) -> bool:
    """A string PostgreSQL cannot take as text: U+0000 or a lone surrogate."""
    return isinstance(value, str) and (
        "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    )


def _echo() -> Flow:
    flow = Flow("fuzz_echo")
    flow.step(slug="say")(lambda run: run)
    return flow


class Item(pydantic.BaseModel):
    name: str
    qty: int


def _typed() -> Flow:
    flow = Flow("fuzz_typed")

    @flow.step
    def check(run: Item) -> int:
        return run.qty

    return flow


@pytest.fixture
def client(db_url):
    """A client with both flows deployed (deploying is not what a refused start may write)."""
    with Client(db_url) as chosen:
        chosen.start(_echo(), "deployed", run_id="fuzz-deployed-echo")
        chosen.start(_typed(), {"name": "n", "qty": 1}, run_id="fuzz-deployed-typed")
        yield chosen


flows = st.one_of(st.sampled_from(["echo", "fuzz_echo", "fuzz_typed"]), hostile_argument)


@settings_for(60)
@given(
    flow=st.one_of(st.sampled_from(["flow_object", "typed_object"]), flows),
    value=hostile_value,
    run_id=st.one_of(st.none(), hostile_argument),
    version_id=st.one_of(st.none(), hostile_argument),
)
def test_start_refuses_with_a_code(client, db_url, flow, value, run_id, version_id):
    chosen = _echo() if flow == "flow_object" else _typed() if flow == "typed_object" else flow
    result = answered(
        "client", db_url, lambda: client.start(chosen, value, run_id=run_id, version_id=version_id)
    )
    if _unstorable(run_id) or _unstorable(version_id) or not isinstance(chosen, str | Flow):
        assert isinstance(result, CharterError), result


@settings_for(40)
@given(
    inputs=st.one_of(st.lists(hostile_value, max_size=3), hostile_argument),
    run_ids=st.one_of(st.none(), st.lists(hostile_argument, max_size=3), hostile_argument),
)
def test_start_many_refuses_with_a_code(client, db_url, inputs, run_ids):
    result = answered("client", db_url, lambda: client.start_many(_echo(), inputs, run_ids))
    if isinstance(run_ids, list) and any(_unstorable(r) for r in run_ids):
        assert isinstance(result, CharterError), result


@settings_for(60)
@given(run_id=hostile_argument, action=st.sampled_from(["get_run", "cancel", "retry", "wait"]))
def test_run_calls_refuse_bad_run_ids_with_a_code(client, db_url, run_id, action):
    def call() -> Any:
        if action == "wait":
            return client.wait(run_id, timeout=0)
        return getattr(client, action)(run_id)

    result = answered("client", db_url, call)
    assert isinstance(result, CharterError), result  # no such run, whatever the id


@settings_for(60)
@given(
    flow=st.one_of(st.none(), flows),
    status=st.one_of(st.none(), st.sampled_from(["running", "failed"]), hostile_argument),
    limit=st.one_of(st.just(5), wrong_type, st.integers()),
    after=st.one_of(st.none(), hostile_argument),
)
def test_list_runs_refuses_with_a_code(client, db_url, flow, status, limit, after):
    result = answered(
        "client",
        db_url,
        lambda: client.list_runs(flow=flow, status=status, limit=limit, after=after),
    )
    if any(_unstorable(v) for v in (flow, after)):
        assert isinstance(result, ArgumentError), result


@settings_for(40)
@given(
    timeout=st.one_of(
        st.floats(allow_nan=True, allow_infinity=False),
        st.integers(min_value=-(2**70), max_value=0),
        st.sampled_from([math.nan, -1, -math.inf, True, "1", None, b"1", [1], 1e-300]),
    ),
    many=st.booleans(),
)
def test_wait_refuses_bad_timeouts_with_a_code(client, db_url, timeout, many):
    run_id = client.start(_echo(), "pending", run_id="fuzz-pending")  # no worker: it waits
    timeout_value = timeout if not isinstance(timeout, float) else min(timeout, 0.01)

    def call() -> Any:
        if many:
            return client.wait_many([run_id], timeout=timeout_value)
        return client.wait(run_id, timeout=timeout_value)

    result = answered("client", db_url, call)
    assert isinstance(result, CharterError), result  # refused, or timed out


@settings_for(30)
@given(run_ids=st.one_of(hostile_argument, st.lists(hostile_argument, max_size=3)))
def test_wait_many_refuses_bad_run_id_lists_with_a_code(client, db_url, run_ids):
    result = answered("client", db_url, lambda: client.wait_many(run_ids, timeout=0))
    assert isinstance(result, CharterError) or result == [] == run_ids, result


def test_wait_refuses_a_nan_or_negative_timeout_before_waiting(client):
    with pytest.raises(ArgumentError, match="timeout"):
        client.wait("no-such-run", timeout=math.nan)
    with pytest.raises(ArgumentError, match="timeout"):
        client.wait("no-such-run", timeout=-1)
    with pytest.raises(RunNotFoundError):
        client.wait("no-such-run", timeout=math.inf)


def test_the_classic_cases_of_the_issue(client):
    with pytest.raises(RunInputError, match="lone surrogate"):
        client.start(_echo(), {"name": "caf\udce9"})
    with pytest.raises(ArgumentError, match=r"U\+0000"):
        client.start("fuzz\x00echo", 1)
    with pytest.raises(ArgumentError, match=r"U\+0000"):
        client.get_run("run\x00id")
    with pytest.raises(ArgumentError, match="version_id"):
        client.start("fuzz_echo", 1, version_id="v\x00")
    with pytest.raises(ArgumentError, match="run_ids"):
        client.start_many(_echo(), [1, 2], run_ids=5)
    with pytest.raises(ArgumentError, match="status"):
        client.list_runs(status=["running"])


@settings_for(30)
@given(
    include_stopped=st.one_of(st.booleans(), wrong_type),
    dead_after=st.one_of(st.none(), st.integers(), wrong_type),
)
def test_workers_and_queue_refuse_with_a_code(client, db_url, include_stopped, dead_after):
    answered(
        "client",
        db_url,
        lambda: client.workers(include_stopped=include_stopped, dead_after_seconds=dead_after),
    )
    charter_error_or_result(client.queue)  # no argument: not a bad input


@settings_for(40)
@given(
    text=st.one_of(NUL_TEXT, SURROGATE_TEXT, wrong_type),
    which=st.sampled_from(["wf_id", "description", "owner_id", "on_existing"]),
)
def test_registry_ensure_workflow_refuses_with_a_code(client, db_url, text, which):
    arguments: dict[str, Any] = {"wf_id": "wf_fuzz", "description": "fuzz"}
    arguments[which] = text
    answered("client", db_url, lambda: client.registry.ensure_workflow(**arguments))


@settings_for(40)
@given(dsl=hostile_value)
def test_registry_versions_refuse_bad_definitions_with_a_code(client, db_url, dsl):
    answered(
        "client",
        db_url,
        lambda: client.registry.create_workflow_version("wf_fuzz", dsl, "fuzz", "init"),
    )


@settings_for(60)
@given(
    value=st.one_of(NUL_TEXT, SURROGATE_TEXT, wrong_type),
    which=st.sampled_from(
        [
            "workflow_id",
            "commit_message",
            "operation",
            "version_id",
            "generation_id",
            "parent_version_ids",
            "owner_id",
            "on_existing",
        ]
    ),
)
def test_registry_version_arguments_refuse_with_a_code(client, db_url, value, which):
    arguments: dict[str, Any] = {
        "workflow_id": "wf_fuzz",
        "dsl": {"prompt": "p"},
        "commit_message": "m",
        "operation": "init",
    }
    arguments[which] = [value] if which == "parent_version_ids" and value is not None else value
    answered("client", db_url, lambda: client.registry.create_workflow_version(**arguments))


@settings_for(60)
@given(
    value=st.one_of(NUL_TEXT, SURROGATE_TEXT, wrong_type),
    which=st.sampled_from(
        ["invocation_id", "version_id", "status", "end_time", "usd_cost", "lineage"]
    ),
)
def test_registry_invocations_and_lineage_refuse_with_a_code(client, db_url, value, which):
    def call() -> Any:
        if which == "lineage":
            return client.registry.lineage(value)
        if which in ("invocation_id", "version_id"):
            ids = {"invocation_id": "inv-1", "version_id": "v-1", which: value}
            return client.registry.create_invocation(ids["invocation_id"], ids["version_id"])
        return client.registry.update_invocation("inv-1", **{which: value})

    answered("client", db_url, call)


@settings_for(30)
@given(text=hostile_text)
def test_registry_lineage_of_plain_bad_ids_is_a_code(client, db_url, text):
    """Ids PostgreSQL can store are looked up and not found: a coded error."""
    if _unstorable(text):
        return
    result = answered("client", db_url, lambda: client.registry.lineage(text))
    assert isinstance(result, CharterError), result


def test_the_async_client_refuses_the_same_way(db_url):
    async def calls() -> list[Any]:
        async with AsyncClient(db_url) as client:
            results = []
            for call in (
                lambda: client.start("fuzz\x00echo", 1),
                lambda: client.start(_echo(), {"a": "\udcff"}),
                lambda: client.start(_echo(), 1, run_id="r", version_id=["v"]),
                lambda: client.start_many(_echo(), [1], run_ids="r"),
                lambda: client.get_run("\ud800"),
                lambda: client.wait("no-such-run", timeout=math.nan),
                lambda: client.wait_many(["a", b"b"], timeout=0),
                lambda: client.list_runs(status={"running"}, after="\x00"),
                lambda: client.cancel(None),
                lambda: client.retry("x" * 201),
                lambda: client.workers(include_stopped="yes"),
            ):
                try:
                    await call()
                except CharterError as exc:
                    results.append(exc)
            return results

    errors = asyncio.run(calls())
    assert len(errors) == 11 and all(isinstance(e, ArgumentError | RunInputError) for e in errors)
