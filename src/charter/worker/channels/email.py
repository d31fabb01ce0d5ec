"""Email over SMTP with aiosmtplib, configured by ``WorkerSettings.smtp_url``
(``CHARTER_SMTP_URL`` by default)::

    smtp://[user[:password]@]host[:port][?from=ADDRESS&starttls=auto|require|off&timeout=SECONDS]
    smtps://…   (TLS from the first byte, port 465 by default)

One message per recipient. Its ``Message-ID`` comes from the effect's idempotency key, so a
resend after a crash carries the same id (mail systems drop duplicates by it) and is
recognisable. SMTP 4xx, refused connections and timeouts are retried; 5xx are final.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

import aiosmtplib

from charter.errors import ConfigurationError
from charter.worker.channels import Outcome, delivered, refused

ENV = "CHARTER_SMTP_URL"


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    sender: str
    username: str | None = None
    password: str | None = None
    use_tls: bool = False
    starttls: Literal["auto", "require", "off"] = "auto"
    timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str) -> SmtpSettings:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ConfigurationError(
                f"{ENV}={url!r} is not an SMTP URL; use smtp://user:password@host:587?"
                "from=noreply@example.com (or smtps:// for TLS from the start)."
            )
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        starttls = query.get("starttls", "auto")
        if starttls not in ("auto", "require", "off"):
            raise ConfigurationError(f"{ENV}: starttls={starttls!r} is not auto, require or off.")
        try:
            timeout = float(query.get("timeout", "30"))
            port = parts.port or (465 if parts.scheme == "smtps" else 25)
        except ValueError as exc:
            raise ConfigurationError(f"{ENV}={url!r}: {exc}; fix the port or timeout.") from None
        return cls(
            host=parts.hostname,
            port=port,
            sender=query.get("from", "charter@localhost"),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            use_tls=parts.scheme == "smtps",
            starttls=starttls,  # type: ignore[arg-type]  # checked above
            timeout=timeout,
        )


class EmailSender:
    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    async def send(self, to: str, subject: str, body: str, *, key: str) -> Outcome:
        """Sends one message to one address; the outcome says whether to try again."""
        s = self.settings
        message = EmailMessage()
        message["From"] = s.sender
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = formatdate(localtime=False)
        message["Message-ID"] = f"<{key}@charter>"
        message["X-Charter-Idempotency-Key"] = key
        message.set_content(body)
        try:
            _, status = await aiosmtplib.send(
                message,
                hostname=s.host,
                port=s.port,
                username=s.username,
                password=s.password,
                use_tls=s.use_tls,
                start_tls={"auto": None, "require": True, "off": False}[s.starttls],
                timeout=s.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [r.code for r in exc.recipients]
            return refused(
                f"SMTP refused {to}: " + "; ".join(f"{r.code} {r.message}" for r in exc.recipients),
                retry=all(400 <= code < 500 for code in codes),
            )
        except aiosmtplib.SMTPResponseException as exc:
            return refused(
                f"SMTP {exc.code} from {s.host}:{s.port}: {exc.message}",
                retry=400 <= exc.code < 500 or exc.code < 0,
            )
        except (aiosmtplib.SMTPException, OSError) as exc:  # refused, reset, timed out, TLS
            return refused(f"{type(exc).__name__}: {exc} ({s.host}:{s.port})", retry=True)
        return delivered({"to": to, "messageId": message["Message-ID"], "smtp": status})
