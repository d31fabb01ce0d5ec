"""``client.side_effects``, ``client.notifications``, ``client.dead_letters``,
``client.tasks`` and ``client.health``, sync and async, for the client's org
(:mod:`charter.side_effects`, :mod:`charter.health`)."""

from __future__ import annotations

import builtins
from datetime import datetime, timedelta
from typing import Any

import psycopg

from charter import health
from charter import side_effects as ops
from charter.health import HealthReport, StuckInstance, WaitingInstance
from charter.side_effects import EmailSend, Notification, QueuedWebhook, SideEffect
from charter.store import AsyncStore, Store

Connection = psycopg.Connection[Any]
AsyncConnection = psycopg.AsyncConnection[Any]


class SideEffects:
    """The side-effects outbox: webhooks from the app, and what receivers need to trust
    charter (the signing secret)."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def webhook(
        self,
        url: str,
        body: Any = None,
        *,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        max_attempts: int = 8,
        connection: Connection | None = None,
    ) -> QueuedWebhook:
        """Queue a webhook: delivered by the worker like a workflow's (signed, keyed, retried,
        dead-lettered). Pass ``connection=`` to queue it in your own transaction (it goes
        out only if that commits); the same ``idempotency_key`` twice is one webhook."""
        op = ops.enqueue_webhook(
            self._org,
            url,
            body,
            method=method,
            headers=headers,
            idempotency_key=idempotency_key,
            max_attempts=max_attempts,
        )
        return self._store.perform(op, connection)

    def get(self, effect_id: int, *, connection: Connection | None = None) -> SideEffect | None:
        """One effect or task: status, attempts, last error, request and response."""
        return self._store.perform(ops.get_side_effect(self._org, effect_id), connection)

    def webhook_secret(self, *, connection: Connection | None = None) -> str:
        """The org's key for the ``X-Charter-Signature`` header: HMAC-SHA256 of the request
        body, hex, prefixed ``sha256=`` (made on first use; keep it with the receiver)."""
        return self._store.perform(ops.webhook_secret(self._org), connection)


class AsyncSideEffects:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def webhook(
        self,
        url: str,
        body: Any = None,
        *,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        max_attempts: int = 8,
        connection: AsyncConnection | None = None,
    ) -> QueuedWebhook:
        op = ops.enqueue_webhook(
            self._org,
            url,
            body,
            method=method,
            headers=headers,
            idempotency_key=idempotency_key,
            max_attempts=max_attempts,
        )
        return await self._store.perform(op, connection)

    async def get(
        self, effect_id: int, *, connection: AsyncConnection | None = None
    ) -> SideEffect | None:
        return await self._store.perform(ops.get_side_effect(self._org, effect_id), connection)

    async def webhook_secret(self, *, connection: AsyncConnection | None = None) -> str:
        return await self._store.perform(ops.webhook_secret(self._org), connection)


class Notifications:
    """In-app notifications (``notification`` nodes on channel ``in_app``), per user."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def list(
        self, user: str, *, unread_only: bool = False, limit: int = 100
    ) -> builtins.list[Notification]:
        """The user's notifications, newest first."""
        return self._store.perform(ops.list_notifications(self._org, user, unread_only, limit))

    def mark_read(self, user: str, ids: Any = None) -> builtins.list[int]:
        """Mark the user's notifications ``ids`` (all of them when None) read; returns the ids
        that were unread. An id that is not the user's is refused and nothing is marked."""
        return self._store.perform(ops.mark_notifications_read(self._org, user, ids))


class AsyncNotifications:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def list(
        self, user: str, *, unread_only: bool = False, limit: int = 100
    ) -> builtins.list[Notification]:
        op = ops.list_notifications(self._org, user, unread_only, limit)
        return await self._store.perform(op)

    async def mark_read(self, user: str, ids: Any = None) -> builtins.list[int]:
        return await self._store.perform(ops.mark_notifications_read(self._org, user, ids))


class DeadLetters:
    """Side effects out of attempts (or refused for good): look, re-drive, drop."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def list(self, *, limit: int = 100, run_id: str | None = None) -> builtins.list[SideEffect]:
        """Newest first (``run_id``: that run's only); each with ``.id``, ``.channel``,
        ``.target``, ``.last_error``, ``.attempts``, ``.run_id``."""
        return self._store.perform(ops.list_dead_letters(self._org, limit, run_id))

    def retry(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        """Send them again, with their idempotency keys and a fresh set of attempts. An id
        that is not a dead letter of the org is refused and nothing changes. A workflow's
        effect whose instance failed because of it (``DELIVERY_FAILED``) resumes that
        instance at its node: the node completes once the effect is delivered, and the
        instance goes on; ``actor`` is named in the instance's evidence and audit."""
        return self._store.perform(ops.retry_dead_letters(self._org, ids, actor))

    def drop(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        """Give up on them for good (kept as cancelled, with who dropped them)."""
        return self._store.perform(ops.drop_dead_letters(self._org, ids, actor))


class AsyncDeadLetters:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def list(
        self, *, limit: int = 100, run_id: str | None = None
    ) -> builtins.list[SideEffect]:
        return await self._store.perform(ops.list_dead_letters(self._org, limit, run_id))

    async def retry(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        return await self._store.perform(ops.retry_dead_letters(self._org, ids, actor))

    async def drop(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        return await self._store.perform(ops.drop_dead_letters(self._org, ids, actor))


class Tasks:
    """Seed 003's queue: enqueue a task (usually a supervisor's kickoff), or start the
    built-in email process and read its facts."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def enqueue(
        self,
        task_type: str,
        payload: dict[str, Any],
        *,
        at: datetime | None = None,
        connection: Connection | None = None,
    ) -> int:
        """A task (``db_function``, ``email``, ``sms``, ``webhook``) due ``at`` (now)."""
        op = ops.enqueue_task(self._org, task_type, payload, at)
        return self._store.perform(op, connection)

    def send_email(
        self,
        to: str,
        subject: str,
        body: str,
        *,
        max_attempts: int = 2,
        at: datetime | None = None,
        recheck_after: timedelta = timedelta(seconds=5),
        connection: Connection | None = None,
    ) -> int:
        """Seed 003's email example: the message, its send task and the supervisor's kickoff;
        returns the send's id (``email_status``)."""
        op = ops.send_email(
            self._org, to, subject, body,
            max_attempts=max_attempts, at=at, recheck_after=recheck_after,
        )  # fmt: skip
        return self._store.perform(op, connection)

    def email_status(self, send_id: int) -> EmailSend | None:
        return self._store.perform(ops.send_email_status(self._org, send_id))


class AsyncTasks:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def enqueue(
        self,
        task_type: str,
        payload: dict[str, Any],
        *,
        at: datetime | None = None,
        connection: AsyncConnection | None = None,
    ) -> int:
        op = ops.enqueue_task(self._org, task_type, payload, at)
        return await self._store.perform(op, connection)

    async def send_email(
        self,
        to: str,
        subject: str,
        body: str,
        *,
        max_attempts: int = 2,
        at: datetime | None = None,
        recheck_after: timedelta = timedelta(seconds=5),
        connection: AsyncConnection | None = None,
    ) -> int:
        op = ops.send_email(
            self._org, to, subject, body,
            max_attempts=max_attempts, at=at, recheck_after=recheck_after,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def email_status(self, send_id: int) -> EmailSend | None:
        return await self._store.perform(ops.send_email_status(self._org, send_id))


class Health:
    """Workflow health of the client's org: figures, the stuck detector, its ways out."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def report(self, *, stuck_minutes: int = 10) -> HealthReport:
        """Workers, queues, outboxes, dead letters, p95 step latency (waits left out) and p95 of
        waits by kind, stuck instances."""
        return self._store.perform(health.health_report(self._org, stuck_minutes))

    def stuck(self, *, minutes: int = 10) -> builtins.list[StuckInstance]:
        """What should be moving and is not, each with why (``reason``): a task or node not
        run, an event not applied, a timer or timeout not fired, a delivery past its retry
        time (each ``minutes`` overdue), an approval nobody may decide, an instance with
        nothing pending that is not at an end. Waiting for a person is not stuck."""
        return self._store.perform(health.stuck_instances(self._org, minutes))

    def waiting_longer_than(
        self, *, hours: float = 0, stuck_minutes: int = 10
    ) -> dict[str, builtins.list[WaitingInstance]]:
        """Instances waiting (not stuck) for ``hours`` or more, by what they wait for:
        ``approval`` and ``transition`` (a person), ``event``, ``timer``, ``delivery``,
        ``task``, ``retry``, ``operator`` (paused)."""
        return self._store.perform(health.waiting_longer_than(self._org, hours, stuck_minutes))

    def nudge(self, run_id: str, *, actor: str | None = None) -> bool:
        """Have the engine run the instance again (re-enqueue its advance)."""
        return self._store.perform(health.nudge_instance(self._org, run_id, actor))

    def rebuild(self, run_id: str) -> bool:
        """Rebuild the instance's projection from its evidence."""
        return self._store.perform(health.rebuild_instance(self._org, run_id))

    def force_fail(self, run_id: str, reason: str, *, actor: str | None = None) -> bool:
        """Fail it (``STUCK_FORCE_FAILED``); ``client.retry(run_id)`` takes it up again."""
        return self._store.perform(health.force_fail_instance(self._org, run_id, reason, actor))


class AsyncHealth:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def report(self, *, stuck_minutes: int = 10) -> HealthReport:
        return await self._store.perform(health.health_report(self._org, stuck_minutes))

    async def stuck(self, *, minutes: int = 10) -> builtins.list[StuckInstance]:
        return await self._store.perform(health.stuck_instances(self._org, minutes))

    async def waiting_longer_than(
        self, *, hours: float = 0, stuck_minutes: int = 10
    ) -> dict[str, builtins.list[WaitingInstance]]:
        op = health.waiting_longer_than(self._org, hours, stuck_minutes)
        return await self._store.perform(op)

    async def nudge(self, run_id: str, *, actor: str | None = None) -> bool:
        return await self._store.perform(health.nudge_instance(self._org, run_id, actor))

    async def rebuild(self, run_id: str) -> bool:
        return await self._store.perform(health.rebuild_instance(self._org, run_id))

    async def force_fail(self, run_id: str, reason: str, *, actor: str | None = None) -> bool:
        op = health.force_fail_instance(self._org, run_id, reason, actor)
        return await self._store.perform(op)
