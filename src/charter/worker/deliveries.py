"""The side-effects outbox delivered inside ``charter worker`` (WF-10, seed 003).

One loop claims due rows (SKIP LOCKED, with a lease) of the channels this worker can reach —
webhooks and in-app notifications always, email with ``CHARTER_SMTP_URL``, SMS with
``CHARTER_SMS_URL`` — and answers each once with ``finish_side_effect``:

* an *effect* (a workflow's ``webhook_out`` or ``notification``, or the app's webhook) is
  sent; charter retries it with backoff or dead-letters it;
* a *task* (seed 003: ``db_function``, or a channel task with handlers) is run once by
  :mod:`charter.worker.queue_tasks`; its supervisor decides what happens next.

The settings come from the worker's :class:`~charter.worker.runner.WorkerSettings`
(``smtp_url``, ``sms_url``, ``sms_provider``, ``webhook_allow``), whose defaults are those
variables. A notification on a channel that no running worker serving its org can send
(email when no worker has an SMTP URL) is a dead letter at once, ``CHANNEL_NOT_CONFIGURED``: each
worker records what it can send when it registers (:func:`channel_types`), and one that
lacks a channel looks now and then for notifications nobody can send.

A worker that dies holding a row loses nothing: the lease runs out and another worker sends
it again with the same idempotency key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from charter import tracing
from charter.backoff import Backoff
from charter.db.store import AsyncStore, Call, first_value, json_rows
from charter.vocabulary import NotificationChannel, SideEffectChannel, SideEffectKind
from charter.worker.channels import Outcome, delivered, refused
from charter.worker.channels.destinations import DestinationPolicy, allowed_networks
from charter.worker.channels.email import ENV as SMTP_ENV
from charter.worker.channels.email import EmailSender, SmtpSettings
from charter.worker.channels.sms import ENV as SMS_ENV
from charter.worker.channels.sms import SmsProvider, sms_provider_for
from charter.worker.channels.webhook import WebhookSender
from charter.worker.completion import RETRYABLE_DB_ERRORS
from charter.worker.metrics import METRICS
from charter.worker.queue_tasks import TaskRunner

if TYPE_CHECKING:
    from charter.worker.runner import WorkerSettings

log = logging.getLogger("charter.worker")

NOT_CONFIGURED = "CHANNEL_NOT_CONFIGURED"
# Notifications by the setting that makes a worker able to send them.
_SENT_WITH = {
    f"{SideEffectChannel.NOTIFICATION}:{NotificationChannel.EMAIL}": SMTP_ENV,
    f"{SideEffectChannel.NOTIFICATION}:{NotificationChannel.SMS}": SMS_ENV,
}
_UNSENDABLE_EVERY_S = 1.0  # how often a worker that lacks a channel looks for what nobody sends


def channel_types(settings: WorkerSettings, documents: bool = True) -> list[str]:
    """What a worker with these settings can send, as ``claim_side_effects`` names it:
    nothing without the documents engine (it delivers no side effects)."""
    if not documents:
        return []
    return sorted(_claimable(email=bool(settings.smtp_url), sms=bool(settings.sms_url)))


def _claimable(*, email: bool, sms: bool) -> list[str]:
    """Side-effect channels and ``notification:<channel>`` a worker claims."""
    types: list[str] = [SideEffectChannel.WEBHOOK, SideEffectChannel.DB_FUNCTION]
    types.append(_notification(NotificationChannel.IN_APP))
    if email:
        types += [SideEffectChannel.EMAIL, _notification(NotificationChannel.EMAIL)]
    if sms:
        types += [SideEffectChannel.SMS, _notification(NotificationChannel.SMS)]
    return [str(kind) for kind in types]


def _notification(channel: NotificationChannel) -> str:
    return f"{SideEffectChannel.NOTIFICATION}:{channel}"


@dataclass
class Channels:
    """The senders this worker has; a channel without one is left to other workers."""

    webhook: WebhookSender = field(default_factory=WebhookSender)
    email: EmailSender | None = None
    sms: SmsProvider | None = None

    @classmethod
    def from_settings(cls, settings: WorkerSettings) -> Channels:
        """The senders ``settings`` configure: email with an SMTP URL, SMS with an SMS URL,
        webhooks to the private networks ``webhook_allow`` opts in."""
        smtp = SmtpSettings.from_url(settings.smtp_url) if settings.smtp_url else None
        return cls(
            webhook=WebhookSender(
                policy=DestinationPolicy(allowed_networks(settings.webhook_allow))
            ),
            email=EmailSender(smtp) if smtp else None,
            sms=sms_provider_for(settings.sms_url, settings.sms_provider),
        )

    def claimable(self) -> list[str]:
        """What claim_side_effects may hand this worker (notifications by channel)."""
        return _claimable(email=self.email is not None, sms=self.sms is not None)

    def missing(self) -> list[str]:
        """The notification channels this worker cannot send."""
        have = self.claimable()
        return [name for name in _SENT_WITH if name not in have]

    async def close(self) -> None:
        await self.webhook.close()
        if self.sms is not None:
            await self.sms.close()


@dataclass
class SideEffectDelivery:
    store: AsyncStore
    worker_id: str
    channels: Channels
    lease_seconds: int = 30
    batch_size: int = 20
    delivered: int = 0
    dead_lettered: int = 0
    tasks_run: int = 0
    _tasks: TaskRunner | None = field(default=None, repr=False)
    _inflight: dict[int, str] = field(default_factory=dict, repr=False)  # id -> org
    unsendable_sweeps: int = 0  # how often it looked for what no worker can send
    _unsendable_at: float = field(default=-1e9, repr=False)  # when it last looked

    def __post_init__(self) -> None:
        self._tasks = TaskRunner(self.store, self.worker_id, self.channels)

    async def run(self, stopping: asyncio.Event, wake: asyncio.Event, poll_interval: float) -> None:
        keeping = asyncio.create_task(self._keep_leases(stopping), name="charter-outbox-leases")
        try:
            await self._deliver(stopping, wake, poll_interval)
        finally:
            keeping.cancel()
            await asyncio.gather(keeping, return_exceptions=True)

    async def _deliver(
        self, stopping: asyncio.Event, wake: asyncio.Event, poll_interval: float
    ) -> None:
        backoff = Backoff()
        while not stopping.is_set():
            wake.clear()  # before looking, so a wake-up during the claim is not lost
            try:
                sent = await self.step()
            except RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("delivering side effects", exc, stopping)
                continue
            except Exception:  # never stop delivering silently
                log.exception("side-effect delivery failed; trying again")
                await backoff.sleep("delivering side effects", RuntimeError("outbox"), stopping)
                continue
            backoff.reset()
            if not sent:
                # The engine's wake-up (NOTIFY charter_events) also means new effects may wait.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), poll_interval)

    async def step(self) -> int:
        """Claim due rows and answer them; returns how many were claimed."""
        rows = await self.store.execute(
            Call(
                "claim_side_effects",
                {
                    "worker_id": self.worker_id,
                    "effect_types": self.channels.claimable(),
                    "limit": self.batch_size,
                    "lease_seconds": self.lease_seconds,
                },
                json_rows,
            )
        )
        if rows:
            await asyncio.gather(*(self._answer(row) for row in rows))
        return len(rows) + await self._unsendable()

    async def _unsendable(self) -> int:
        """Notifications on a channel this worker lacks and no running worker has: each a
        dead letter now, CHANNEL_NOT_CONFIGURED. Returns how many."""
        missing = self.channels.missing()
        if not missing or time.monotonic() - self._unsendable_at < _UNSENDABLE_EVERY_S:
            return 0
        self._unsendable_at = time.monotonic()
        rows = await self.store.execute(
            Call(
                "claim_unsendable_side_effects",
                {
                    "worker_id": self.worker_id,
                    "effect_types": missing,
                    "limit": self.batch_size,
                    "lease_seconds": self.lease_seconds,
                },
                json_rows,
            )
        )
        self.unsendable_sweeps += 1
        for row in rows:
            channel = _channel(row)
            setting = _SENT_WITH.get(f"notification:{channel}", "the channel's setting")
            outcome = refused(
                f"{NOT_CONFIGURED}: no running worker can send {channel} notifications; set "
                f"{setting} in a worker's environment, then re-drive this dead letter",
                retry=False,
                code=NOT_CONFIGURED,
            )
            result = await self._finish(row, outcome)
            self._count(row, result, outcome)
            METRICS.deliveries.labels(channel, result).inc()
        return len(rows)

    async def close(self) -> None:
        await self.channels.close()

    async def _keep_leases(self, stopping: asyncio.Event) -> None:
        """Renews the leases of the rows being sent, so a slow receiver (or a notification to
        many recipients) never lets another worker send them again."""
        interval = max(self.lease_seconds / 3, 0.5)
        while not stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), interval)
            if not self._inflight:
                continue
            held = dict(sorted(self._inflight.items()))
            try:
                await self.store.execute(
                    Call(
                        "extend_side_effect_leases",
                        {"worker_id": self.worker_id, "ids": list(held),
                         "org_ids": list(held.values()), "lease_seconds": self.lease_seconds},
                        first_value,
                    )
                )  # fmt: skip
            except Exception:  # the next round tries again; a lost lease is only a resend
                log.exception("renewing side-effect leases failed")

    async def _answer(self, row: dict[str, Any]) -> None:
        self._inflight[row["id"]] = row["orgId"]
        started = time.monotonic()
        channel = _channel(row)
        attributes = {
            "charter.channel": channel,
            "charter.effect": row["id"],
            "charter.attempt": row["attempt"],
            "charter.run": row.get("runId") or "",
        }
        try:
            with tracing.span("charter.side_effect", row.get("traceId"), attributes) as span:
                result = await self._answer_row(row)
                if span is not None:
                    span.set_attribute("charter.result", result)
        finally:
            self._inflight.pop(row["id"], None)
        METRICS.delivery_seconds.labels(channel).observe(time.monotonic() - started)
        METRICS.deliveries.labels(channel, result).inc()

    async def _answer_row(self, row: dict[str, Any]) -> str:
        if row["kind"] == SideEffectKind.TASK:
            assert self._tasks is not None
            outcome = await self._tasks.run(row)
            self.tasks_run += 1
        elif (
            row["effectType"] == SideEffectChannel.NOTIFICATION
            and row["request"].get("channel") == NotificationChannel.IN_APP
        ):
            result = await self.store.execute(
                Call(
                    "deliver_in_app",
                    {"effect_id": row["id"], "worker_id": self.worker_id, "org_id": row["orgId"]},
                    first_value,
                )
            )
            self._count(row, result, None)
            return str(result)
        else:
            outcome = await self._send(row)
        result = await self._finish(row, outcome)
        self._count(row, result, outcome)
        return result

    async def _finish(self, row: dict[str, Any], outcome: Outcome) -> str:
        result = await self.store.execute(
            Call(
                "finish_side_effect",
                {
                    "effect_id": row["id"],
                    "worker_id": self.worker_id,
                    "outcome": Jsonb(outcome),
                    "org_id": row["orgId"],
                    "created_at": row["createdAt"],
                },
                first_value,
                retry_safe=True,  # fenced by the worker id: a resend finds it answered
            )
        )
        return str(result)

    async def _send(self, row: dict[str, Any]) -> Outcome:
        """An effect sent; whatever goes wrong in charter's own code is this row's final
        answer (with what happened), never a row left processing."""
        try:
            if row["effectType"] == SideEffectChannel.NOTIFICATION:
                return await self._notify(row)
            return await self.channels.webhook.send(
                row["request"],
                key=row["idempotencyKey"],
                secret=row["secret"],
                effect_id=row["id"],
                attempt=row["attempt"],
            )
        except Exception as exc:
            log.exception("side effect %s could not be sent", row["id"])
            return refused(f"{type(exc).__name__}: {exc}", retry=False)

    async def _notify(self, row: dict[str, Any]) -> Outcome:
        """An email or SMS notification: one message per recipient; those reached on an
        earlier attempt are skipped, and the outcome lists everyone reached so far."""
        request = row["request"]
        channel = request.get("channel", NotificationChannel.EMAIL)
        done: list[str] = list(row.get("progress") or [])
        addresses = [r.get("address") for r in request.get("recipients") or []]
        targets = [a for a in addresses if a]
        if not targets:
            return refused(
                f"no {channel} recipient for notification to {request.get('to')!r}: the "
                "directory has nobody with that id or role and an address for the channel",
                retry=False,
            )
        for index, address in enumerate(targets):
            if address in done:
                continue
            key = f"{row['idempotencyKey']}.{index}"
            if channel == NotificationChannel.SMS:
                assert self.channels.sms is not None
                outcome = await self.channels.sms.send(address, request.get("body") or "", key=key)
            else:
                assert self.channels.email is not None
                outcome = await self.channels.email.send(
                    address, request.get("subject") or "", request.get("body") or "", key=key
                )
            if not outcome["ok"]:
                outcome["response"] = {**(outcome.get("response") or {}), "delivered": done}
                return outcome
            done.append(address)
        return delivered({"channel": channel, "delivered": done})

    def _count(self, row: dict[str, Any], result: str, outcome: Outcome | None) -> None:
        if result == "delivered":
            self.delivered += 1
        elif result in ("retry", "dead_letter"):
            self.dead_lettered += result == "dead_letter"
            log.warning(
                "%s %s (attempt %d): %s; %s",
                row["effectType"],
                row["id"],
                row["attempt"],
                (outcome or {}).get("error", "not delivered"),
                "retried later" if result == "retry" else "dead-lettered",
                extra={"worker": self.worker_id, "run_id": row.get("runId")},
            )
        elif result in ("held", "cancelled"):
            log.info(
                "%s %s (attempt %d) not delivered; %s",
                row["effectType"],
                row["id"],
                row["attempt"],
                "held until its instance is resumed"
                if result == "held"
                else "not tried again: its instance was cancelled",
                extra={"worker": self.worker_id, "run_id": row.get("runId")},
            )


def _channel(row: dict[str, Any]) -> str:
    if row["effectType"] == SideEffectChannel.NOTIFICATION:
        return str(row["request"].get("channel") or NotificationChannel.EMAIL)
    return str(row["effectType"])
