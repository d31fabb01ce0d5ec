"""Errors raised inside SQL functions, mapped back to charter's Python errors.

charter's SQL raises with SQLSTATE class ``CH`` (``RAISE EXCEPTION USING ERRCODE =
'CH001'``); each error class declares the SQLSTATE it stands for (``charter.errors``), so
Python matches codes, never message text. A role missing a privilege (SQLSTATE 42501) is
:class:`~charter.errors.PermissionDeniedError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from charter.errors import CharterError, PermissionDeniedError, SchemaNotCurrentError, for_sqlstate

_INSUFFICIENT_PRIVILEGE = "42501"
# No schema charter, or a function this charter calls that the schema lacks: not migrated.
_MISSING_SCHEMA_OBJECT = ("3F000", "42883", "42P01")


def translate(exc: psycopg.Error) -> CharterError | None:
    """The charter error for a database error raised by charter's SQL, else None."""
    sqlstate = exc.sqlstate or ""
    message = exc.diag.message_primary or str(exc)
    if sqlstate == _INSUFFICIENT_PRIVILEGE:
        return PermissionDeniedError(
            f"The database role may not do this ({message}). charter's roles: charter_app "
            "starts and inspects runs, charter_worker runs tasks; migrating, deploying and "
            "deleting need the schema's owner (e.g. `charter migrate`, `charter deploy "
            "MODULE`, `charter flows delete SLUG` with the owner's CHARTER_DATABASE_URL)."
        )
    if sqlstate in _MISSING_SCHEMA_OBJECT and "charter" in message:
        return SchemaNotCurrentError(
            f"Schema charter is missing or older than this charter ({message}). Run "
            "`charter migrate` as the schema's owner, then try again."
        )
    error_class = for_sqlstate(sqlstate)
    if error_class is None:
        return None
    if exc.diag.message_hint:
        message = f"{message}. {exc.diag.message_hint}"
    return error_class(message)


@contextmanager
def charter_errors() -> Iterator[None]:
    """Re-raise errors from charter's SQL as their ``CharterError`` subclass."""
    try:
        yield
    except psycopg.Error as exc:
        translated = translate(exc)
        if translated is None:
            raise
        raise translated from None
