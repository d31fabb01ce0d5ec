"""The Python client: start runs, wait for them, inspect, cancel and retry.

>>> client = Client()                                  # doctest: +SKIP
>>> run_id = client.start(flow, {"url": "https://example.com"})
>>> client.wait(run_id, timeout=30).output

``AsyncClient`` has the same methods, awaitable; ``Client`` is thread-safe. Both talk to
``CHARTER_DATABASE_URL``, or the embedded default, or ``database_url=``; they migrate the
schema on first use unless ``migrate=False``. Every method that changes or reads data takes
``connection=``: your own psycopg connection, used as it is, inside your transaction (a run
started in a transaction that rolls back never existed). Each method is one operation of
:mod:`charter.ops` performed by the client's :class:`~charter.db.store.Store`.

``AsyncClient`` is written here; ``client.py`` (``Client``) is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charter.client.approvals_async import AsyncApprovals
from charter.client.dead_letters_async import AsyncDeadLetters
from charter.client.definitions_async import AsyncDefinitions
from charter.client.directory_async import AsyncDirectory
from charter.client.documents_async import AsyncDocuments
from charter.client.events_async import AsyncEvents
from charter.client.health_async import AsyncHealth
from charter.client.notifications_async import AsyncNotifications
from charter.client.registry_async import AsyncRegistry
from charter.client.rules_async import AsyncRules
from charter.client.schedules_async import AsyncSchedules
from charter.client.side_effects_async import AsyncSideEffects
from charter.client.tasks_async import AsyncTasks
from charter.client.test_clock_async import AsyncTestClock
from charter.db import connection as db
from charter.db.mode import detect_mode
from charter.db.store import AsyncConnection, AsyncStore, StoreOptions
from charter.dsl.flow import Flow
from charter.errors import ArgumentError
from charter.ops import runs as runs_ops
from charter.ops import workers as workers_ops
from charter.ops.arguments import text_argument
from charter.ops.run_model import Run
from charter.ops.workers import QueueEntry, WorkerInfo


def _options(migrate: bool, pool_size: Any) -> StoreOptions:
    options = StoreOptions(migrate=bool(migrate))
    if pool_size is not None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ArgumentError(
                f"pool_size must be a whole number of 1 or more, not {pool_size!r:.40}."
            )
        options.pool_size = pool_size
    return options


def _org(org_id: Any) -> str:
    return text_argument(org_id, "org_id")


class AsyncClient:
    """The client of one database, acting for one org. Close it (or use ``async with``) to
    release its connections."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        migrate: bool = True,
        org_id: str = "default",
        pool_size: int | None = None,
    ) -> None:
        target = db.resolve(database_url, source="database_url")
        assert target is not None
        self.store = AsyncStore(target, _options(migrate, pool_size))
        self._state = runs_ops.ClientState(_org(org_id))

    @property
    def target(self) -> db.DatabaseTarget:
        return self.store.target

    async def __aenter__(self) -> AsyncClient:
        return self

    def for_org(self, org_id: str, *, platform: bool = False) -> AsyncClient:
        """The same client (its connections) acting for another org: for a server that
        serves many orgs. Closing the original closes both. Acting for an org, it may not
        publish contracts (they are the platform's) unless ``platform=True``."""
        view = object.__new__(AsyncClient)
        view.store = self.store
        view._state = runs_ops.ClientState(_org(org_id), may_publish_contracts=bool(platform))
        return view

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.store.close()

    @property
    def registry(self) -> AsyncRegistry:
        """The definition registry: workflows, versions, invocations (seed 001)."""
        return AsyncRegistry(self.store)

    @property
    def documents(self) -> AsyncDocuments:
        """Business documents of this client's org (seed 002): every change via mutate()."""
        return AsyncDocuments(self.store, self._state.org_id)

    @property
    def directory(self) -> AsyncDirectory:
        """The org's directory: users, roles, managers; org data for expressions."""
        return AsyncDirectory(self.store, self._state.org_id)

    @property
    def definitions(self) -> AsyncDefinitions:
        """Published contracts and the org's definitions of their workflows."""
        return AsyncDefinitions(
            self.store, self._state.org_id, may_publish=self._state.may_publish_contracts
        )

    @property
    def events(self) -> AsyncEvents:
        """External events for the org's waiting workflow instances and flow steps
        (``wait_event``)."""
        return AsyncEvents(self.store, self._state.org_id)

    @property
    def rules(self) -> AsyncRules:
        """The org's rule store, read by ``rule`` nodes."""
        return AsyncRules(self.store, self._state.org_id)

    @property
    def approvals(self) -> AsyncApprovals:
        """Approvals bound to a document version: inbox, decide, snapshot, diff, chains."""
        return AsyncApprovals(self.store, self._state.org_id)

    @property
    def side_effects(self) -> AsyncSideEffects:
        """The side-effects outbox: the app's webhooks, one effect, the signing secret."""
        return AsyncSideEffects(self.store, self._state.org_id)

    @property
    def notifications(self) -> AsyncNotifications:
        """In-app notifications per user: list, mark read."""
        return AsyncNotifications(self.store, self._state.org_id)

    @property
    def dead_letters(self) -> AsyncDeadLetters:
        """Side effects out of attempts: list, retry (same idempotency key), drop."""
        return AsyncDeadLetters(self.store, self._state.org_id)

    @property
    def health(self) -> AsyncHealth:
        """Workflow health: figures, the stuck detector, nudge / rebuild / force-fail."""
        return AsyncHealth(self.store, self._state.org_id)

    @property
    def tasks(self) -> AsyncTasks:
        """Seed 003's queue: enqueue tasks, send an email through its supervisor."""
        return AsyncTasks(self.store, self._state.org_id)

    @property
    def schedules(self) -> AsyncSchedules:
        """Cron schedules: flow runs, documents created, gates passed, once per tick."""
        return AsyncSchedules(self.store, self._state.org_id)

    @property
    def test_clock(self) -> AsyncTestClock:
        """charter's clock, moved forward in development mode (tests, demos)."""
        return AsyncTestClock(
            self.store, detect_mode(self.target) == "development", self._state.org_id
        )

    async def start(
        self,
        flow: Flow | str,
        input: Any = None,
        *,
        run_id: str | None = None,
        version_id: str | None = None,
        priority: int | None = None,
        connection: AsyncConnection | None = None,
    ) -> str:
        """Start a run of ``flow`` (a Flow or its slug); returns the run id. With ``run_id``
        it is idempotent: the same id and input return the same run. ``version_id`` runs
        a given runnable version instead of the current one. ``priority`` (0-1000) puts its
        tasks ahead of lower ones: a task of priority N is claimed as if it had been ready N
        minutes earlier (so nothing starves); without it the steps' default applies."""
        op = runs_ops.start(self._state, flow, input, run_id, version_id, priority)
        return await self.store.perform(op, connection)

    async def start_many(
        self,
        flow: Flow | str,
        inputs: Sequence[Any],
        run_ids: Sequence[str] | None = None,
        *,
        version_id: str | None = None,
        priority: int | None = None,
        connection: AsyncConnection | None = None,
    ) -> list[str]:
        """Start one run per input in one round trip; idempotent per run id as ``start``."""
        op = runs_ops.start_many(self._state, flow, inputs, run_ids, version_id, priority)
        return await self.store.perform(op, connection)

    async def get_run(self, run_id: str, *, connection: AsyncConnection | None = None) -> Run:
        return await self.store.perform(runs_ops.get_run(run_id, self._state.org_id), connection)

    async def wait(self, run_id: str, timeout: float = 30) -> Run:
        """Block until the run completes, fails or is cancelled; RunWaitTimeoutError after
        ``timeout`` seconds (the run itself goes on)."""
        return (
            await self.store.perform(runs_ops.wait_many([run_id], self._state.org_id, timeout))
        )[0]

    async def wait_many(self, run_ids: Sequence[str], timeout: float = 30) -> list[Run]:
        """Block until every run is finished; the runs in the order given."""
        return await self.store.perform(runs_ops.wait_many(run_ids, self._state.org_id, timeout))

    async def cancel(
        self,
        run_id: str,
        *,
        actor: str | None = None,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> str:
        """Cancel a run. For a document's workflow instance: its pending approvals close, its
        waits and undelivered side effects are dropped, the document stays in its state, and
        its audit trail names ``actor`` (the database role when None) and ``reason``."""
        op = runs_ops.cancel(run_id, self._state.org_id, actor, reason)
        return await self.store.perform(op, connection)

    async def retry(
        self, run_id: str, *, actor: str | None = None, connection: AsyncConnection | None = None
    ) -> str:
        """Resume a failed run from its failed steps. A document's workflow instance resumes
        from the node that failed, its evidence naming ``actor`` (the database role when
        None); one failed by a dead letter (``DELIVERY_FAILED``) re-drives that same effect,
        under its idempotency key, and never sends a second one."""
        op = runs_ops.retry(run_id, self._state.org_id, actor)
        return await self.store.perform(op, connection)

    async def list_runs(
        self,
        *,
        flow: Flow | str | None = None,
        status: str | None = None,
        limit: int = 100,
        after: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> list[Run]:
        """This org's runs, newest first; pass the last run's id as ``after`` for the next
        page."""
        op = runs_ops.list_runs(flow, status, limit, after, org_id=self._state.org_id)
        return await self.store.perform(op, connection)

    async def workers(
        self,
        *,
        include_stopped: bool = False,
        dead_after_seconds: int | None = None,
        connection: AsyncConnection | None = None,
    ) -> list[WorkerInfo]:
        """The workers, newest first: live ones, and dead ones (heartbeat lapsed, no clean
        stop) for ``dead_after_seconds`` after their last heartbeat (default 900);
        ``include_stopped`` lists every worker charter knows."""
        op = workers_ops.list_workers(include_stopped, dead_after_seconds)
        return await self.store.perform(op, connection)

    async def queue(self, *, connection: AsyncConnection | None = None) -> list[QueueEntry]:
        return await self.store.perform(workers_ops.queue(), connection)


__all__ = ["AsyncClient"]
