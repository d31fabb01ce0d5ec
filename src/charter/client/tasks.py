# Generated from tasks_async.py by tools/async_to_sync.py; do not edit.
# Edit tasks_async.py and run: python tools/async_to_sync.py
"""The tasks face of the client."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from charter.client.tasks_async import AsyncTasks as AsyncTasks
from charter.db.store import Connection, Store
from charter.ops import side_effects as side_effects_ops
from charter.ops.side_effects import EmailSend


class Tasks:
    """Seed 003's queue: enqueue a task (usually a supervisor's kickoff), or start the
    built-in email process and read its facts."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

    def enqueue(
        self,
        task_type: str,
        payload: dict[str, Any],
        *,
        at: datetime | None = None,
        connection: Connection | None = None,
    ) -> int:
        """A task (``db_function``, ``email``, ``sms``, ``webhook``) due ``at`` (now)."""
        op = side_effects_ops.enqueue_task(self._org, task_type, payload, at)
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
        op = side_effects_ops.send_email(
            self._org,
            to,
            subject,
            body,
            max_attempts=max_attempts,
            at=at,
            recheck_after=recheck_after,
        )
        return self._store.perform(op, connection)

    def email_status(self, send_id: int) -> EmailSend | None:
        return self._store.perform(side_effects_ops.send_email_status(self._org, send_id))
