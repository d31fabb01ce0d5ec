"""Seed 003's tasks, run once each by the worker (its "worker lifecycle"):

* ``db_function`` — ``charter.run_function(payload.db_function, payload)``;
* ``email`` / ``sms`` / ``webhook`` — the ``before_handler`` builds what to send; the worker
  sends it; then ``success_handler`` with ``{original_payload, worker_payload}``, or, when
  nothing was sent (the before handler refused, or the send failed), ``error_handler``
  with ``{original_payload, error}`` — so the supervisor always sees the attempt end.

Validation failures and errors are appended to ``charter.task_errors``. The worker never
enqueues. It runs a task once, except that a function's operational ``error`` (not a
validation failure) is tried again a few times by the queue, as seed 003 asks of errors.
Every function is called through the SECURITY INVOKER runner, scoped to the task's org,
so the worker's role needs EXECUTE on each (seed 003 grants).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from charter.db.store import AsyncStore, Call, first_value
from charter.vocabulary import SideEffectChannel
from charter.worker.channels import Outcome, refused

if TYPE_CHECKING:
    from charter.worker.deliveries import Channels

log = logging.getLogger("charter.worker")


class TaskRunner:
    def __init__(self, store: AsyncStore, worker_id: str, channels: Channels) -> None:
        self.store, self.worker_id, self.channels = store, worker_id, channels

    async def run(self, task: dict[str, Any]) -> Outcome:
        """Runs a claimed task; the outcome is what the task row keeps as its result
        (``retry`` when a function failed with an operational error)."""
        payload: dict[str, Any] = task["request"]
        if task["effectType"] == SideEffectChannel.DB_FUNCTION:
            result = await self.call(task, payload.get("db_function", ""), payload)
            if not result.get("success"):
                await self._error(task, "db_function", result)
            return _outcome(result)
        before = await self.call(task, payload.get("before_handler", ""), payload)
        if before.get("success"):
            outcome = await self._send(task, before.get("payload") or {})
            if not outcome["ok"]:
                await self._error(task, "send", {"error": outcome["error"]})
        else:
            await self._error(task, "before_handler", before)
            outcome = _outcome(before)
        if outcome["ok"]:
            handler, stage = payload.get("success_handler"), "success_handler"
            argument = {"original_payload": payload, "worker_payload": outcome.get("response")}
        else:
            handler, stage = payload.get("error_handler"), "error_handler"
            argument = {"original_payload": payload, "error": outcome.get("error", "failed")}
        if handler:
            result = await self.call(task, handler, argument)
            if not result.get("success"):
                await self._error(task, stage, result)
                if result.get("error"):  # the fact was not recorded: try the task again
                    return {**outcome, "ok": False, "retry": True, "error": result["error"]}
        # The send's own failure is the supervisor's to retry (it has the failure fact).
        return {**outcome, "retry": False} if not outcome["ok"] else outcome

    async def call(
        self, task: dict[str, Any], function: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        # Not retry_safe: the function may have done its work before the connection dropped.
        params = {"name": function, "payload": Jsonb(payload), "org_id": task["orgId"]}
        result = await self.store.execute(Call("run_function", params, first_value, False))
        if isinstance(result, dict):
            return dict(result)
        return {"success": False, "error": f"{function} returned {result!r}"}

    async def _send(self, task: dict[str, Any], message: dict[str, Any]) -> Outcome:
        try:
            return await self._send_message(task, message)
        except Exception as exc:  # e.g. a line break in a subject: final, with the reason
            log.exception("task %s could not be sent", task["id"])
            return refused(f"{type(exc).__name__}: {exc}", retry=False)

    async def _send_message(self, task: dict[str, Any], message: dict[str, Any]) -> Outcome:
        key = str(message.get("idempotency_key") or task["idempotencyKey"])
        channel = task["effectType"]
        if channel == SideEffectChannel.WEBHOOK:
            return await self.channels.webhook.send(
                message, key=key, secret=task["secret"], effect_id=task["id"],
                attempt=task["attempt"],
            )  # fmt: skip
        to = message.get("to")
        if not isinstance(to, str) or not to:
            return refused(f"the before handler gave no 'to' for the {channel} task", retry=False)
        if channel == SideEffectChannel.SMS:
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
                    "org_id": task["orgId"],
                    "worker_id": self.worker_id,
                    "stage": stage,
                    "error": str(error),
                    "context": Jsonb({"kind": kind, "payload": task["request"]}),
                },
                lambda rows: None,
            )
        )


def _outcome(result: dict[str, Any]) -> Outcome:
    """A function's envelope as the task's outcome: an operational error is retried, a
    validation failure is not."""
    if result.get("success"):
        return {"ok": True, "result": result}
    if result.get("validation_failure_message"):
        return {"ok": False, "retry": False, "result": result,
                "error": str(result["validation_failure_message"])}  # fmt: skip
    return {"ok": False, "retry": True, "result": result,
            "error": str(result.get("error") or "failed")}  # fmt: skip
