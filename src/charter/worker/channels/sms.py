"""SMS through a provider's HTTP API, configured by ``WorkerSettings.sms_url`` and
``sms_provider`` (by default ``CHARTER_SMS_URL`` and ``CHARTER_SMS_PROVIDER``: ``twilio``, or
``package.module:Class`` for your own).

The built-in provider speaks Twilio's Messages API shape::

    CHARTER_SMS_URL=https://ACCOUNT_SID:AUTH_TOKEN@api.twilio.com?from=%2B15550001111

POST ``/2010-04-01/Accounts/{sid}/Messages.json`` with ``To``, ``From``, ``Body`` as a form,
basic auth, and the effect's key in ``I-Twilio-Idempotency-Token``. Another provider is a
subclass of :class:`SmsProvider` with ``from_url`` and ``send``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from charter.errors import ConfigurationError
from charter.worker.channels import EVIDENCE_LIMIT, Outcome, delivered, refused
from charter.worker.channels.webhook import retry_after

ENV = "CHARTER_SMS_URL"
PROVIDER_ENV = "CHARTER_SMS_PROVIDER"


class SmsProvider(ABC):
    """One SMS API. ``send`` returns an outcome (see :mod:`charter.worker.channels`)."""

    @classmethod
    @abstractmethod
    def from_url(cls, url: str) -> SmsProvider: ...

    @abstractmethod
    async def send(self, to: str, body: str, *, key: str) -> Outcome: ...

    async def close(self) -> None:  # noqa: B027  # optional for providers with no resources
        pass


class TwilioSms(SmsProvider):
    def __init__(self, base_url: str, account_sid: str, auth_token: str, sender: str,
                 timeout: float = 10.0) -> None:  # fmt: skip
        self.base_url = base_url.rstrip("/")
        self.account_sid, self.sender = account_sid, sender
        self._client = httpx.AsyncClient(auth=(account_sid, auth_token), timeout=timeout)

    @classmethod
    def from_url(cls, url: str) -> TwilioSms:
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.scheme not in ("http", "https") or not parts.hostname or not parts.username:
            raise ConfigurationError(
                f"{ENV} is not a Twilio-style URL; use https://ACCOUNT_SID:AUTH_TOKEN@"
                "api.twilio.com?from=%2B15550001111."
            )
        if not query.get("from"):
            raise ConfigurationError(f"{ENV} needs ?from= the sending number, e.g. %2B15550001111.")
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        return cls(
            f"{parts.scheme}://{host}{parts.path}",
            unquote(parts.username),
            unquote(parts.password or ""),
            query["from"],
            float(query.get("timeout", "10")),
        )

    async def send(self, to: str, body: str, *, key: str) -> Outcome:
        url = f"{self.base_url}/2010-04-01/Accounts/{self.account_sid}/Messages.json"
        try:
            response = await self._client.post(
                url,
                data={"To": to, "From": self.sender, "Body": body},
                headers={"I-Twilio-Idempotency-Token": key},
            )
        except httpx.HTTPError as exc:
            return refused(f"{type(exc).__name__}: {exc} ({self.base_url})", retry=True)
        evidence: dict[str, Any] = {"status": response.status_code, "to": to}
        try:
            answer = response.json()
        except ValueError:
            evidence["body"] = response.text[:EVIDENCE_LIMIT]
        else:
            evidence.update({k: answer.get(k) for k in ("sid", "status", "code", "message")
                             if isinstance(answer, dict) and k in answer})  # fmt: skip
        if response.is_success:
            return delivered(evidence)
        return refused(
            f"SMS provider answered HTTP {response.status_code} for {to}"
            + (f": {evidence['message']}" if evidence.get("message") else ""),
            retry=response.status_code >= 500 or response.status_code == 429,
            retry_after=retry_after(response.headers.get("retry-after")),
            response=evidence,
        )

    async def close(self) -> None:
        await self._client.aclose()


def sms_provider_for(url: str | None, name: str = "twilio") -> SmsProvider | None:
    """The provider ``name`` (``twilio`` or ``package.module:Class``) sending through
    ``url``; None without a URL."""
    if not url:
        return None
    if name == "twilio":
        return TwilioSms.from_url(url)
    module_name, _, class_name = name.partition(":")
    try:
        provider = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(
            f"{PROVIDER_ENV}={name!r}: {exc}; name a subclass of charter.worker.channels."
            "sms.SmsProvider as package.module:Class, or unset it for twilio."
        ) from None
    if not (isinstance(provider, type) and issubclass(provider, SmsProvider)):
        raise ConfigurationError(f"{PROVIDER_ENV}={name!r} is not an SmsProvider subclass.")
    return provider.from_url(url)
