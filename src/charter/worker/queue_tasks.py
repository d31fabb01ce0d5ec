"""Seed 003's tasks, run once each by the worker (its "worker lifecycle"):

* ``db_function`` — ``charter.run_function(payload.db_function, payload)``; a validation
  failure or an error is appended to ``charter.task_errors``;
* ``email`` / ``sms`` / ``webhook`` — the ``before_handler`` builds what to send; the worker
  sends it; then ``success_handler`` with ``{original_payload, worker_payload}`` or
  (after appending the error) ``error_handler`` with ``{original_payload, error}``.

The worker never enqueues and never retries: the handlers record facts and the supervisor
decides. Every function is called through the SECURITY INVOKER runner, so the worker's role
needs EXECUTE on each (seed 003 grants).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from charter.store import AsyncStore, Call, first_value
from charter.worker.channels import Outcome, refused

if TYPE_CHECKING:
    from charter.worker.deliveries import Channels

log = logging.getLogger("charter.worker")


class TaskRunner:
    def __init__(self, store: AsyncStore, worker_id: str, channels: Channels) -> None:
        self.store, self.worker_id, self.channels = store, worker_id, channels

    async def run(self, task: dict[str, Any]) -> Outcome:
        """Runs a claimed task; the outcome is what the task row keeps as its result."""
        payload: dict[str, Any] = task["request"]
        if task["effectType"] == "db_function":
            result = await self.call(payload.get("db_function", ""), payload)
            if not result.get("success"):
                await self._error(task, "db_function", result)
            return {"ok": bool(result.get("success")), "result": result, **_error_of(result)}
        before = await self.call(payload.get("before_handler", ""), payload)
        if not before.get("success"):
            await self._error(task, "before_handler", before)
            return {"ok": False, "result": before, **_error_of(before)}
        outcome = await self._send(task, before.get("payload") or {})
        if outcome["ok"]:
            handler, stage = payload.get("success_handler"), "success_handler"
            argument = {"original_payload": payload, "worker_payload": outcome.get("response")}
        else:
            await self._error(task, "send", {"error": outcome["error"]})
            handler, stage = payload.get("error_handler"), "error_handler"
            argument = {"original_payload": payload, "error": outcome["error"]}
        if handler:
            result = await self.call(handler, argument)
            if not result.get("success"):
                await self._error(task, stage, result)
        return outcome

    async def call(self, function: str, payload: dict[str, Any]) -> dict[str, Any]:
        # Not retry_safe: the function may have done its work before the connection dropped.
        call = Call(
            "run_function", {"name": function, "payload": Jsonb(payload)}, first_value, False
        )
        result = await self.store.execute(call)
        if isinstance(result, dict):
            return dict(result)
        return {"success": False, "error": f"{function} returned {result!r}"}

    async def _send(self, task: dict[str, Any], message: dict[str, Any]) -> Outcome:
        key = str(message.get("idempotency_key") or task["idempotencyKey"])
        channel = task["effectType"]
        if channel == "webhook":
            return await self.channels.webhook.send(
                message, key=key, secret=task["secret"], effect_id=task["id"],
                attempt=task["attempt"],
            )  # fmt: skip
        to = message.get("to")
        if not isinstance(to, str) or not to:
            return refused(f"the before handler gave no 'to' for the {channel} task", retry=False)
        if channel == "sms":
            assert self.channels.sms is not None  # claimed only when configured
            return await self.channels.sms.send(to, str(message.get("body", "")), key=key)
        assert self.channels.email is not None
        return await self.channels.email.send(
            to, str(message.get("subject", "")), str(message.get("body", "")), key=key
        )

    async def _error(self, task: dict[str, Any], stage: str, result: dict[str, Any]) -> None:
        error = result.get("error") or result.get("validation_failure_message") or "failed"
        kind = "validation" if result.get("validation_failure_message") else "error"
        log.warning("task %s (%s) %s: %s", task["id"], task["effectType"], stage, error,
                    extra={"worker": self.worker_id})  # fmt: skip
        await self.store.execute(
            Call(
                "record_task_error",
                {
                    "task_id": task["id"],
                    "worker_id": self.worker_id,
                    "stage": stage,
                    "error": str(error),
                    "context": Jsonb({"kind": kind, "payload": task["request"]}),
                },
                lambda rows: None,
            )
        )


def _error_of(result: dict[str, Any]) -> dict[str, Any]:
    error = result.get("error") or result.get("validation_failure_message")
    return {"error": str(error)} if error else {}
