"""Settings read from ``CHARTER_…`` environment variables, each with its default.

This module is the only one that reads the process environment (a test fails on an
``os.environ`` elsewhere in ``src/charter``). Every option of the ``charter`` command has
a variable (the CLI shows it in ``--help``, through :func:`env_raw`); the settings below
are read where no option exists, e.g. by ``Client()`` in an app, or give the default of a
field a caller may set instead (``WorkerSettings.smtp_url``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from charter.errors import ConfigurationError


def env_raw(name: str) -> str | None:
    """The variable as set (None when unset): the CLI's options take their defaults from it."""
    return os.environ.get(name)


def env_text(name: str) -> str:
    """The variable without surrounding blanks; empty when unset."""
    return os.environ.get(name, "").strip()


def environment() -> Mapping[str, str]:
    """The whole environment, for rules that weigh several variables together
    (:func:`charter.db.mode.detect_mode`)."""
    return dict(os.environ)


def env_int(name: str, default: int, *, minimum: int = 1) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ConfigurationError(
            f"{name}={raw!r} is not a whole number of {minimum} or more; fix it or unset it "
            f"for the default of {default}."
        )
    return value


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= minimum:  # also refuses NaN
        raise ConfigurationError(
            f"{name}={raw!r} is not a number of {minimum:g} or more; fix it or unset it for "
            f"the default of {default:g}."
        )
    return value


def client_pool_size() -> int:
    """Connections a Client or AsyncClient keeps (``CHARTER_POOL_SIZE``, default 4)."""
    return env_int("CHARTER_POOL_SIZE", 4)


def reconnect_seconds() -> float:
    """How long a client keeps retrying a call that is safe to repeat while PostgreSQL is
    unreachable, e.g. during a restart (``CHARTER_RECONNECT_SECONDS``, default 15)."""
    return env_float("CHARTER_RECONNECT_SECONDS", 15.0)


def retention_days() -> int:
    """How long finished work is kept: receipts, delivered outbox rows and old partitions
    (``CHARTER_RETENTION_DAYS``, default 90)."""
    return env_int("CHARTER_RETENTION_DAYS", 90)


def maintenance_interval() -> float:
    """Seconds between a worker's runs of retention (``CHARTER_MAINTENANCE_INTERVAL``,
    default 3600: hourly; 0 turns it off for this worker)."""
    return env_float("CHARTER_MAINTENANCE_INTERVAL", 3600.0)


def webhook_timeout() -> float:
    """Seconds a worker waits for a webhook's receiver to answer before the attempt counts
    as failed and is retried (``CHARTER_WEBHOOK_TIMEOUT``, default 10)."""
    return env_float("CHARTER_WEBHOOK_TIMEOUT", 10.0, minimum=0.1)


def max_body_bytes() -> int:
    """The largest HTTP request body ``charter serve`` reads (``CHARTER_MAX_BODY_BYTES``,
    default 1 MiB); a larger one is answered 413 ``REQUEST_TOO_LARGE`` unread."""
    return env_int("CHARTER_MAX_BODY_BYTES", 1024 * 1024)


def max_document_bytes() -> int:
    """The largest document data a client sends, as JSON (``CHARTER_MAX_DOCUMENT_BYTES``,
    default 1 MiB): larger is refused before it is sent with ``DOCUMENT_TOO_LARGE``. The
    database enforces its own limit for every caller (``charter.max_document_bytes``, a
    contract's ``maxDocumentBytes``); raise both together."""
    return env_int("CHARTER_MAX_DOCUMENT_BYTES", 1024 * 1024)


def database_url() -> str | None:
    """The database charter uses instead of its embedded server (``CHARTER_DATABASE_URL``)."""
    return os.environ.get("CHARTER_DATABASE_URL") or None


def connect_timeout_text() -> str:
    """``CHARTER_CONNECT_TIMEOUT`` as written; :func:`charter.db.connection.connect_timeout`
    checks it (its message explains libpq's minimum)."""
    return os.environ.get("CHARTER_CONNECT_TIMEOUT", "")


def libpq_default(name: str) -> str | None:
    """A libpq variable (``PGHOST``, ``PGPORT``, ``PGHOSTADDR``) psycopg also honours; read
    to name the address a failed connection tried."""
    return os.environ.get(name) or None


def data_dir() -> str | None:
    """Where the embedded PostgreSQL keeps its data (``CHARTER_DATA_DIR``)."""
    return os.environ.get("CHARTER_DATA_DIR") or None


def embedded_port_text() -> str:
    """``CHARTER_EMBEDDED_PORT`` as written (checked by ``charter.db.embedded``)."""
    return os.environ.get("CHARTER_EMBEDDED_PORT", "")


def worker_orgs() -> tuple[str, ...]:
    """The orgs ``charter worker`` serves when ``--org`` is not given
    (``CHARTER_WORKER_ORGS``, comma-separated; all when unset)."""
    return tuple(
        org for org in (o.strip() for o in env_text("CHARTER_WORKER_ORGS").split(",")) if org
    )


def smtp_url() -> str | None:
    """Where a worker sends email (``CHARTER_SMTP_URL``); without it, it sends none."""
    return env_text("CHARTER_SMTP_URL") or None


def sms_url() -> str | None:
    """Where a worker sends SMS (``CHARTER_SMS_URL``); without it, it sends none."""
    return env_text("CHARTER_SMS_URL") or None


def sms_provider() -> str:
    """The SMS provider's class (``CHARTER_SMS_PROVIDER``: ``package.module:Class``, default
    ``twilio``)."""
    return env_text("CHARTER_SMS_PROVIDER") or "twilio"


def webhook_allow() -> str:
    """The networks webhooks may reach although private (``CHARTER_WEBHOOK_ALLOW``,
    comma-separated CIDRs; none by default)."""
    return env_text("CHARTER_WEBHOOK_ALLOW")


def session_secret() -> str | None:
    """The key that signs the dashboard's session cookie (``CHARTER_SESSION_SECRET``; a
    random one per process when unset)."""
    return os.environ.get("CHARTER_SESSION_SECRET") or None


def secure_cookies() -> bool:
    """Whether the dashboard's cookies are marked Secure (``CHARTER_SECURE_COOKIES`` set to
    1, true, yes or on)."""
    return env_text("CHARTER_SECURE_COOKIES").lower() in ("1", "true", "yes", "on")


def terminal_columns() -> int | None:
    """``$COLUMNS`` when it is a positive whole number: the width the CLI's tables take."""
    raw = env_text("COLUMNS")
    return int(raw) if raw.isdigit() and int(raw) > 0 else None
