"""``client.events``, ``client.rules``, ``client.schedules`` and ``client.test_clock``, sync and
async: the calls
around documents' workflow instances (:mod:`charter.instances`) for the client's org."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import psycopg

from charter import approvals
from charter import instances as ops
from charter.approvals import ApprovalRequest
from charter.instances import Rule, Schedule, SentEvent
from charter.store import AsyncStore, Store

Connection = psycopg.Connection[Any]
AsyncConnection = psycopg.AsyncConnection[Any]


class Events:
    """External events, keyed (``payment:ORD-7``, ``delivery:pod:SHIP-1``), that resume the
    ``wait_event`` nodes of documents' workflow instances and the ``@flow.wait_event`` steps
    of flow runs waiting on the key."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def send(
        self,
        key: str,
        payload: Any = None,
        event_id: str | None = None,
        *,
        document_id: str | None = None,
        connection: Connection | None = None,
    ) -> SentEvent:
        """Resume the instances and flow steps waiting on ``key`` with ``payload``; with none
        waiting the event is kept (7 days) for the first wait on its key. Sending the same
        ``event_id`` again changes nothing (status ``duplicate``).

        ``document_id`` names the document the event is for: only that document's waits take
        it (now or kept), never another's on the same key — an amendment's, say, when the
        event was for the original. Without it, a kept event is not taken by an amendment
        made after it was sent."""
        op = ops.send_event(self._org, key, payload, event_id, document_id)
        return self._store.perform(op, connection)


class AsyncEvents:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def send(
        self,
        key: str,
        payload: Any = None,
        event_id: str | None = None,
        *,
        document_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> SentEvent:
        op = ops.send_event(self._org, key, payload, event_id, document_id)
        return await self._store.perform(op, connection)


class Rules:
    """The org's rule store: named, versioned expressions that ``rule`` nodes evaluate."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def put(
        self,
        rule_id: str,
        expression: str,
        description: str | None = None,
        *,
        connection: Connection | None = None,
    ) -> Rule:
        """Store a new version of the rule (unchanged when it equals the latest). A rule
        decides a rule node's true or false edge, so its expression must be able to be true
        or false (else EXPR_TYPE_MISMATCH)."""
        op = ops.put_rule(self._org, rule_id, expression, description)
        return self._store.perform(op, connection)

    def get(
        self, rule_id: str, version: int | None = None, *, connection: Connection | None = None
    ) -> Rule:
        return self._store.perform(ops.get_rule(self._org, rule_id, version), connection)


class AsyncRules:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def put(
        self,
        rule_id: str,
        expression: str,
        description: str | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Rule:
        op = ops.put_rule(self._org, rule_id, expression, description)
        return await self._store.perform(op, connection)

    async def get(
        self,
        rule_id: str,
        version: int | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Rule:
        return await self._store.perform(ops.get_rule(self._org, rule_id, version), connection)


class TestClock:
    """The org's notion of now for timers, timeouts, escalations and schedules, moved forward
    in tests and demos (development mode only): a 72-hour timeout is testable in a second.
    Each org has its own clock: moving this one moves no other org's time."""

    __test__ = False  # not a pytest test class

    def __init__(self, store: Store, development: bool, org_id: str) -> None:
        self._store, self._development, self._org = store, development, org_id

    def advance(self, by: timedelta | float) -> datetime:
        """Move the org's now forward by ``by`` (a timedelta or seconds); returns it."""
        return self._store.perform(ops.advance_clock(self._org, by, self._development))

    def reset(self) -> datetime:
        return self._store.perform(ops.reset_clock(self._org, self._development))


class AsyncTestClock:
    __test__ = False

    def __init__(self, store: AsyncStore, development: bool, org_id: str) -> None:
        self._store, self._development, self._org = store, development, org_id

    async def advance(self, by: timedelta | float) -> datetime:
        return await self._store.perform(ops.advance_clock(self._org, by, self._development))

    async def reset(self) -> datetime:
        return await self._store.perform(ops.reset_clock(self._org, self._development))


class Schedules:
    """Cron schedules of the org: each tick starts a flow run, creates a document, or passes
    a gate for every document that can pass it; exactly once per tick across all workers."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def put(
        self,
        name: str,
        cron: str,
        *,
        flow: Any = None,
        input: Any = None,
        entity_type: str | None = None,
        action: str | None = None,
        missed: str = "latest",
        timezone: str = "UTC",
        connection: Connection | None = None,
    ) -> Schedule:
        """Create or replace schedule ``name``: ``flow=`` (a Flow or slug) with ``input=``,
        or ``entity_type=`` with ``action="create"`` (``input`` = the document's fields) or a
        gate. ``missed``: latest | all | skip (ticks missed while no worker ran)."""
        op = ops.put_schedule(
            self._org, name, cron, flow=flow, input=input, entity_type=entity_type,
            action=action, missed=missed, timezone=timezone,
        )  # fmt: skip
        return self._store.perform(op, connection)

    def list(self, *, connection: Connection | None = None) -> list[Schedule]:
        return self._store.perform(ops.list_schedules(self._org), connection)

    def delete(self, name: str, *, connection: Connection | None = None) -> bool:
        return self._store.perform(ops.delete_schedule(self._org, name), connection)


class AsyncSchedules:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def put(
        self,
        name: str,
        cron: str,
        *,
        flow: Any = None,
        input: Any = None,
        entity_type: str | None = None,
        action: str | None = None,
        missed: str = "latest",
        timezone: str = "UTC",
        connection: AsyncConnection | None = None,
    ) -> Schedule:
        op = ops.put_schedule(
            self._org, name, cron, flow=flow, input=input, entity_type=entity_type,
            action=action, missed=missed, timezone=timezone,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def list(self, *, connection: AsyncConnection | None = None) -> list[Schedule]:
        return await self._store.perform(ops.list_schedules(self._org), connection)

    async def delete(self, name: str, *, connection: AsyncConnection | None = None) -> bool:
        return await self._store.perform(ops.delete_schedule(self._org, name), connection)


class Approvals:
    """Approvals bound to a document version: the inbox, deciding, what was approved."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def inbox(self, user: str, *, connection: Connection | None = None) -> list[ApprovalRequest]:
        """The requests waiting for ``user``'s decision, oldest first."""
        return self._store.perform(approvals.inbox(self._org, user), connection)

    def get(self, request_id: str, *, connection: Connection | None = None) -> ApprovalRequest:
        return self._store.perform(approvals.get(self._org, request_id), connection)

    def decide(
        self,
        request_id: str,
        decision: str,
        *,
        actor: str,
        entity_version: int,
        comment: str | None = None,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """Record ``actor``'s decision (approved | rejected | abstained) on the version the
        request is pinned to (``entity_version`` must be it)."""
        op = approvals.decide(
            self._org, request_id, decision, actor=actor, entity_version=entity_version,
            comment=comment,
        )  # fmt: skip
        return self._store.perform(op, connection)

    def snapshot(self, request_id: str, *, connection: Connection | None = None) -> dict[str, Any]:
        """The document as it was at the pinned version: what the approver must be shown."""
        return self._store.perform(approvals.snapshot(self._org, request_id), connection)

    def diff(self, request_id: str, *, connection: Connection | None = None) -> dict[str, Any]:
        """The field changes between the last approved version and the pinned one."""
        return self._store.perform(approvals.diff(self._org, request_id), connection)

    def history(
        self, document_id: str, *, connection: Connection | None = None
    ) -> list[ApprovalRequest]:
        return self._store.perform(approvals.history(self._org, document_id), connection)

    def delegate(
        self,
        user: str,
        *,
        to: str,
        ends_at: datetime,
        starts_at: datetime | None = None,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """Requests made for ``user`` between ``starts_at`` (default now) and ``ends_at`` go to
        ``to`` instead, recorded on each request as delegated."""
        op = approvals.delegate(self._org, user, to, starts_at, ends_at)
        return self._store.perform(op, connection)

    def define_chain(
        self,
        chain_id: str,
        stages: list[dict[str, Any]],
        *,
        allow_same_approver: bool = False,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """A new version of the org's approval chain (stages run in order). Whoever decided a
        stage is left out of the later stages' approvers unless ``allow_same_approver``."""
        op = approvals.define_chain(self._org, chain_id, stages, allow_same_approver)
        return self._store.perform(op, connection)


class AsyncApprovals:
    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def inbox(
        self, user: str, *, connection: AsyncConnection | None = None
    ) -> list[ApprovalRequest]:
        return await self._store.perform(approvals.inbox(self._org, user), connection)

    async def get(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> ApprovalRequest:
        return await self._store.perform(approvals.get(self._org, request_id), connection)

    async def decide(
        self,
        request_id: str,
        decision: str,
        *,
        actor: str,
        entity_version: int,
        comment: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        op = approvals.decide(
            self._org, request_id, decision, actor=actor, entity_version=entity_version,
            comment=comment,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def snapshot(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        return await self._store.perform(approvals.snapshot(self._org, request_id), connection)

    async def diff(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        return await self._store.perform(approvals.diff(self._org, request_id), connection)

    async def history(
        self, document_id: str, *, connection: AsyncConnection | None = None
    ) -> list[ApprovalRequest]:
        return await self._store.perform(approvals.history(self._org, document_id), connection)

    async def delegate(
        self,
        user: str,
        *,
        to: str,
        ends_at: datetime,
        starts_at: datetime | None = None,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        op = approvals.delegate(self._org, user, to, starts_at, ends_at)
        return await self._store.perform(op, connection)

    async def define_chain(
        self,
        chain_id: str,
        stages: list[dict[str, Any]],
        *,
        allow_same_approver: bool = False,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        op = approvals.define_chain(self._org, chain_id, stages, allow_same_approver)
        return await self._store.perform(op, connection)
