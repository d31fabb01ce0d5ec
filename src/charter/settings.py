"""Settings read from ``CHARTER_…`` environment variables, each with its default.

Every option of the ``charter`` command has a variable (the CLI shows it in ``--help``);
the settings below are read where no option exists, e.g. by ``Client()`` in an app.
"""

from __future__ import annotations

import os

from charter.errors import ConfigurationError


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
