"""Errors raised inside SQL functions, mapped back to charter's Python errors.

charter's SQL raises with SQLSTATE class ``CH`` (``RAISE EXCEPTION USING ERRCODE =
'CH001'``); each error class declares the SQLSTATE it stands for (``charter.errors``), so
Python matches codes, never message text. A role missing a privilege (SQLSTATE 42501) is
:class:`~charter.errors.PermissionDeniedError`.

A whole number beyond PostgreSQL's ``integer`` is sent as ``bigint`` (beyond ``bigint``, as
``numeric``), so a function that takes an ``integer`` is not found (42883) and a ``bigint``
column overflows (22003). Neither means the schema is old: both are the caller's
:class:`~charter.errors.ArgumentError`, naming the parameter that is out of range.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg

from charter.errors import (
    ArgumentError,
    CharterError,
    PermissionDeniedError,
    SchemaNotCurrentError,
    for_sqlstate,
)

_INSUFFICIENT_PRIVILEGE = "42501"
# No schema charter, or a function this charter calls that the schema lacks: not migrated.
_MISSING_SCHEMA_OBJECT = ("3F000", "42883", "42P01")
_UNDEFINED_FUNCTION = "42883"
_NUMERIC_VALUE_OUT_OF_RANGE = "22003"
INT4 = (-(2**31), 2**31 - 1)
INT8 = (-(2**63), 2**63 - 1)


def out_of_range(params: Mapping[str, Any], bounds: tuple[int, int]) -> ArgumentError | None:
    """ArgumentError for the first whole number among ``params`` (or in a list of them)
    outside ``bounds``, naming it, else None."""
    low, high = bounds
    for name, value in params.items():
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, int) and not isinstance(item, bool) and not low <= item <= high:
                kind = "integer" if bounds == INT4 else "bigint"
                return ArgumentError(
                    f"{name} is out of range: {_digits(item)} is not between {low} and {high} "
                    f"(PostgreSQL's {kind}). Pass a smaller number."
                )
    return None


def _digits(value: int) -> str:
    # A number of thousands of digits has no str() (Python's int_max_str_digits).
    if abs(value) < 10**40:
        return str(value)
    return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"


def translate(exc: psycopg.Error, params: Mapping[str, Any] | None = None) -> CharterError | None:
    """The charter error for a database error raised by charter's SQL (given the call's
    ``params``, to name one out of range), else None."""
    sqlstate = exc.sqlstate or ""
    message = exc.diag.message_primary or str(exc)
    if sqlstate in (_UNDEFINED_FUNCTION, _NUMERIC_VALUE_OUT_OF_RANGE):
        named = out_of_range(params or {}, INT4)
        if named is not None:
            return named
    if sqlstate == _NUMERIC_VALUE_OUT_OF_RANGE:
        return ArgumentError(
            f"A number is out of PostgreSQL's range ({message}). Pass a smaller number."
        )
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
def charter_errors(params: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Re-raise errors from charter's SQL as their ``CharterError`` subclass. A whole number
    among ``params`` that no PostgreSQL type holds is refused before it is sent."""
    if params:
        beyond = out_of_range(params, INT8)
        if beyond is not None:
            raise beyond
    try:
        yield
    except psycopg.Error as exc:
        translated = translate(exc, params)
        if translated is None:
            raise
        raise translated from None
