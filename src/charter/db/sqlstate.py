"""Errors raised inside SQL functions, mapped back to charter's Python errors.

charter's SQL raises with SQLSTATE class ``CH`` (``RAISE EXCEPTION USING ERRCODE =
'CH001'``); each error class declares the SQLSTATE it stands for (``charter.errors``), so
Python matches codes, never message text. A role missing a privilege (SQLSTATE 42501) is
:class:`~charter.errors.PermissionDeniedError`.

A whole number beyond PostgreSQL's ``integer`` is sent as ``bigint`` (beyond ``bigint``, as
``numeric``), so a function that takes an ``integer`` is not found (42883) and a ``bigint``
column overflows (22003). Neither means the schema is old: both are the caller's
:class:`~charter.errors.ArgumentError`, naming the parameter that is out of range. So is any
data exception of a value the caller sent that PostgreSQL cannot read as the parameter's
type (an empty string for a number, say; ``_UNREADABLE_INPUT``): the parameter is named
when its value can be told apart. A parameter psycopg cannot send at all (a type it has no
dumper for, a list that contains itself, a lone surrogate) is one too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.adapt import Transformer

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
# Data exceptions of a value PostgreSQL could not read as its type: invalid text for the
# type, a date or time it cannot read, an invalid parameter value, text it cannot store.
_UNREADABLE_INPUT = ("22P02", "22007", "22008", "22023", "22021", "22P05", "22001")
_PARAMETER = re.compile(r"parameter \$\d+ = '(.*)'", re.DOTALL)
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


def _named(exc: psycopg.Error, params: Mapping[str, Any] | None) -> str:
    """'NAME ' for the parameter whose value PostgreSQL reported (its context says
    ``parameter $N = 'VALUE'``), when exactly one has that value; else 'A value '."""
    found = _PARAMETER.search(exc.diag.context or "")
    if found is not None and params:
        value = found.group(1).replace("''", "'")
        names = [name for name, sent in params.items() if isinstance(sent, str | int | float)
                 and not isinstance(sent, bool) and str(sent) == value]  # fmt: skip
        if len(names) == 1:
            return f"{names[0]} ({value!r}) "
    return "A value "


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
    if not sqlstate and isinstance(exc, psycopg.ProgrammingError | psycopg.DataError):
        return _unsendable(params)  # raised while adapting a parameter, before sending
    if sqlstate in (_UNDEFINED_FUNCTION, _NUMERIC_VALUE_OUT_OF_RANGE):
        named = out_of_range(params or {}, INT4)
        if named is not None:
            return named
    if sqlstate == _NUMERIC_VALUE_OUT_OF_RANGE:
        return ArgumentError(
            f"A number is out of PostgreSQL's range ({message}). Pass a smaller number."
        )
    if sqlstate in _UNREADABLE_INPUT and for_sqlstate(sqlstate) is None:
        return ArgumentError(
            f"{_named(exc, params)}is not what the call takes ({message}). Pass a value of "
            "the documented type."
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
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        # Met while sending a parameter: a lone surrogate, JSON of a type json cannot write,
        # a value nested past Python's recursion limit. Anything else is no argument's fault.
        unsendable = _unsendable(params)
        if unsendable is None:
            raise
        raise unsendable from None


def _unsendable(params: Mapping[str, Any] | None) -> ArgumentError | None:
    """ArgumentError naming the first parameter psycopg cannot send as it is (a type it has
    no dumper for, a list that contains itself, a lone surrogate), else None."""
    transformer = Transformer()
    for name, value in (params or {}).items():
        try:
            transformer.as_literal(value)
        except (psycopg.Error, UnicodeEncodeError, ValueError, TypeError, RecursionError) as exc:
            return ArgumentError(
                f"{name} cannot be sent to PostgreSQL ({type(value).__name__}: {exc}). Pass a "
                "value of the documented type."
            )
    return None
