"""The Python client: start runs, wait for them, inspect, cancel and retry.

>>> client = Client()                                  # doctest: +SKIP
>>> run_id = client.start(flow, {"url": "https://example.com"})
>>> client.wait(run_id, timeout=30).output

``AsyncClient`` has the same methods, awaitable. Both talk to ``CHARTER_DATABASE_URL``, or
the embedded default, or ``database_url=``; they migrate the schema on first use unless
``migrate=False``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from charter.canonical import canonical_hash
from charter.compiler.flows import extract_flow_shape
from charter.db import connection
from charter.db.migrate import migrate as migrate_schema
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.dsl.flow import Flow
from charter.engine.flows import ensure_flow_compiled
from charter.engine.mode import Mode
from charter.engine.runs import Run, run_from_json
from charter.errors import FlowShapeMismatchError, RunNotFoundError, RunWaitTimeoutError
from charter.payloads import json_text
from charter.registry import AsyncRegistry, Registry

_POLL_S = 0.5
# A client compiles a missing flow and verifies an unchanged one, but never recreates a
# changed one (which deletes its runs): that stays the worker's job, in development only.
CLIENT_MODE: Mode = "production"


class _Base:
    def __init__(self, database_url: str | None, *, migrate: bool, org_id: str) -> None:
        target = connection.resolve(database_url, source="database_url")
        assert target is not None
        self.target = target
        self.org_id = org_id
        self._migrate = migrate
        # Shapes already checked against the database, by flow slug and shape hash: a flow
        # object changed after its first start is checked again.
        self._verified: set[tuple[str, str]] = set()

    def _start_params(
        self, flow: str, input: Any, run_id: str | None, version_id: str | None = None
    ) -> dict[str, Any]:
        return {
            "flow": flow,
            "input": json_text(input, "The run input"),
            "run_id": run_id,
            "org_id": self.org_id,
            "version_id": version_id,
        }

    @staticmethod
    def _run(row: tuple[Any, ...] | None, run_id: str) -> Run:
        if row is None or row[0] is None:
            raise RunNotFoundError(f"Run {run_id!r} does not exist. Check the run id.")
        return run_from_json(row[0])

    @staticmethod
    def _mismatch(flow: Flow, differences: list[str]) -> FlowShapeMismatchError:
        listed = "\n".join(f"  - {d}" for d in differences)
        return FlowShapeMismatchError(
            f"Flow '{flow.slug}' in the database has a different shape than the code:\n{listed}\n"
            "Publish the code as a new version first (charter deploy MODULE, or a worker "
            "started with --deploy), or start the run by slug to use the published version.",
            flow_slug=flow.slug,
            differences=differences,
        )


class Client(_Base):
    """Synchronous client. Thread-safe; close it (or use ``with``) to release connections."""

    def __init__(
        self, database_url: str | None = None, *, migrate: bool = True, org_id: str = "default"
    ) -> None:
        super().__init__(database_url, migrate=migrate, org_id=org_id)
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    @property
    def registry(self) -> Registry:
        """The definition registry: workflows, versions, invocations (seed 001)."""
        return Registry(self)

    def start(
        self,
        flow: Flow | str,
        input: Any = None,
        *,
        run_id: str | None = None,
        version_id: str | None = None,
    ) -> str:
        """Start a run of ``flow`` (a Flow or its slug); returns the run id. With ``run_id``
        it is idempotent: the same id and input return the same run. ``version_id`` runs
        a given runnable version instead of the current one."""
        slug = self._ensure(flow) if version_id is None else _slug(flow)
        with self._conn() as conn, charter_errors():
            row = conn.execute(
                query("start_run"), self._start_params(slug, input, run_id, version_id)
            ).fetchone()
        assert row is not None
        return str(row[0]["runId"])

    def get_run(self, run_id: str) -> Run:
        with self._conn() as conn:
            return self._run(conn.execute(query("get_run"), {"run_id": run_id}).fetchone(), run_id)

    def wait(self, run_id: str, timeout: float = 30) -> Run:
        """Block until the run completes, fails or is cancelled; RunWaitTimeoutError after
        ``timeout`` seconds (the run itself goes on)."""
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.target.url, autocommit=True) as listener:
            listener.execute("LISTEN charter_runs")
            while True:
                run = self.get_run(run_id)
                if run.done:
                    return run
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timeout(run, timeout)
                for note in listener.notifies(timeout=min(left, _POLL_S), stop_after=1):
                    del note  # any notice is a reason to look again

    def cancel(self, run_id: str) -> str:
        with self._conn() as conn, charter_errors():
            row = conn.execute(query("cancel_run"), {"run_id": run_id}).fetchone()
        return str(row[0]) if row else ""

    def retry(self, run_id: str) -> str:
        with self._conn() as conn, charter_errors():
            row = conn.execute(query("retry_run"), {"run_id": run_id}).fetchone()
        return str(row[0]) if row else ""

    def list_runs(
        self, *, flow: Flow | str | None = None, status: str | None = None, limit: int = 100
    ) -> list[Run]:
        slug = flow.slug if isinstance(flow, Flow) else flow
        with self._conn() as conn:
            rows = conn.execute(
                query("list_runs"), {"flow": slug, "status": status, "limit": limit}
            ).fetchall()
        return [run_from_json(row[0]) for row in rows]

    def _ensure(self, flow: Flow | str) -> str:
        if isinstance(flow, str):
            return flow
        key = _shape_key(flow)
        if key not in self._verified:
            with self._conn() as conn:
                result = ensure_flow_compiled(conn, flow, CLIENT_MODE)
            if result.status == "mismatch":
                raise self._mismatch(flow, result.differences)
            self._verified.add(key)
        return flow.slug

    def _conn(self) -> Any:
        with self._lock:
            if self._pool is None:
                if self._migrate:
                    with connection.connect(self.target) as conn:
                        migrate_schema(conn)
                else:
                    connection.connect(self.target).close()  # clear errors, before the pool
                self._pool = ConnectionPool(
                    self.target.url, min_size=1, max_size=4, kwargs={"autocommit": True}, open=True
                )
        return self._pool.connection()


class AsyncClient(_Base):
    """The asyncio twin of :class:`Client`: the same methods, awaitable."""

    def __init__(
        self, database_url: str | None = None, *, migrate: bool = True, org_id: str = "default"
    ) -> None:
        super().__init__(database_url, migrate=migrate, org_id=org_id)
        self._pool: AsyncConnectionPool | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def registry(self) -> AsyncRegistry:
        """The definition registry: workflows, versions, invocations (seed 001)."""
        return AsyncRegistry(self)

    async def start(
        self,
        flow: Flow | str,
        input: Any = None,
        *,
        run_id: str | None = None,
        version_id: str | None = None,
    ) -> str:
        slug = await self._ensure(flow) if version_id is None else _slug(flow)
        pool = await self._ready()
        async with pool.connection() as conn:
            with charter_errors():
                cur = await conn.execute(
                    query("start_run"), self._start_params(slug, input, run_id, version_id)
                )
            row = await cur.fetchone()
        assert row is not None
        return str(row[0]["runId"])

    async def get_run(self, run_id: str) -> Run:
        pool = await self._ready()
        async with pool.connection() as conn:
            cur = await conn.execute(query("get_run"), {"run_id": run_id})
            return self._run(await cur.fetchone(), run_id)

    async def wait(self, run_id: str, timeout: float = 30) -> Run:
        deadline = time.monotonic() + timeout
        async with await psycopg.AsyncConnection.connect(
            self.target.url, autocommit=True
        ) as listener:
            await listener.execute("LISTEN charter_runs")
            while True:
                run = await self.get_run(run_id)
                if run.done:
                    return run
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timeout(run, timeout)
                async for note in listener.notifies(timeout=min(left, _POLL_S), stop_after=1):
                    del note

    async def cancel(self, run_id: str) -> str:
        return await self._scalar("cancel_run", {"run_id": run_id})

    async def retry(self, run_id: str) -> str:
        return await self._scalar("retry_run", {"run_id": run_id})

    async def list_runs(
        self, *, flow: Flow | str | None = None, status: str | None = None, limit: int = 100
    ) -> list[Run]:
        slug = flow.slug if isinstance(flow, Flow) else flow
        pool = await self._ready()
        async with pool.connection() as conn:
            cur = await conn.execute(
                query("list_runs"), {"flow": slug, "status": status, "limit": limit}
            )
            return [run_from_json(row[0]) for row in await cur.fetchall()]

    async def _scalar(self, name: str, params: dict[str, Any]) -> str:
        pool = await self._ready()
        async with pool.connection() as conn:
            with charter_errors():
                cur = await conn.execute(query(name), params)
            row = await cur.fetchone()
        return str(row[0]) if row else ""

    async def _ensure(self, flow: Flow | str) -> str:
        if isinstance(flow, str):
            return flow
        key = _shape_key(flow)
        if key not in self._verified:
            # Compiling is a short, rare step; the sync path keeps it written once.
            result = await asyncio.to_thread(self._ensure_sync, flow)
            if result.status == "mismatch":
                raise self._mismatch(flow, result.differences)
            self._verified.add(key)
        return flow.slug

    def _ensure_sync(self, flow: Flow) -> Any:
        with connection.connect(self.target) as conn:
            if self._migrate:
                migrate_schema(conn)
            return ensure_flow_compiled(conn, flow, CLIENT_MODE)

    async def _ready(self) -> AsyncConnectionPool:
        async with self._lock:
            if self._pool is None:
                await asyncio.to_thread(self._prepare)
                self._pool = AsyncConnectionPool(
                    self.target.url, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
                )
                await self._pool.open()
        return self._pool

    def _prepare(self) -> None:
        with connection.connect(self.target) as conn:
            if self._migrate:
                migrate_schema(conn)


def _slug(flow: Flow | str) -> str:
    return flow if isinstance(flow, str) else flow.slug


def _shape_key(flow: Flow) -> tuple[str, str]:
    return flow.slug, canonical_hash(extract_flow_shape(flow))


def _timeout(run: Run, timeout: float) -> RunWaitTimeoutError:
    pending = [s.slug for s in run.steps if s.status not in ("completed",)]
    return RunWaitTimeoutError(
        f"Run {run.id} is still {run.status} after {timeout:g}s (steps not completed: "
        f"{', '.join(pending) or 'none'}). Is a worker running for flow '{run.flow}'? "
        "The run goes on; wait again or check `charter status`."
    )


__all__ = ["AsyncClient", "Client"]
