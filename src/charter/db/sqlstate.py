"""Errors raised inside SQL functions, mapped back to charter's Python errors.

charter's SQL raises with SQLSTATE class ``CH`` (``RAISE EXCEPTION USING ERRCODE =
'CH001'``), one code per error class, so Python matches codes, never message text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from charter import errors
from charter.errors import (
    CharterError,
    ConfigurationError,
    FlowNotFoundError,
    FlowShapeInvalidError,
    ReadinessOverflowError,
    RunIdConflictError,
    RunInputError,
    RunNotFoundError,
    RunStateError,
    WorkflowVersionImmutableError,
)

SQLSTATE_ERRORS: dict[str, type[CharterError]] = {
    "CH001": FlowShapeInvalidError,
    "CH002": WorkflowVersionImmutableError,
    "CH003": FlowNotFoundError,
    "CH004": ConfigurationError,
    "CH005": RunNotFoundError,
    "CH006": RunIdConflictError,
    "CH007": RunStateError,
    "CH008": RunInputError,
    "CH009": ReadinessOverflowError,
    "CH010": errors.WorkflowExistsError,
    "CH011": errors.WorkflowNotFoundError,
    "CH012": errors.VersionExistsError,
    "CH013": errors.VersionIdTakenError,
    "CH014": errors.VersionNotFoundError,
    "CH015": errors.ParentVersionNotFoundError,
    "CH016": errors.InvocationIdRequiredError,
    "CH017": errors.InvocationExistsError,
    "CH018": errors.InvocationIdTakenError,
    "CH019": errors.WorkflowMismatchError,
    "CH020": errors.RegistryInputError,
    "CH021": errors.ExpressionError,
}


def translate(exc: psycopg.Error) -> CharterError | None:
    """The charter error for a database error raised by charter's SQL, else None."""
    error_class = SQLSTATE_ERRORS.get(exc.sqlstate or "")
    if error_class is None:
        return None
    message = exc.diag.message_primary or str(exc)
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
