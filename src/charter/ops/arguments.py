"""Argument checks shared by the operations: text, cleaned text, whole numbers, ids."""

from __future__ import annotations

from typing import Any

from charter.errors import (
    ArgumentError,
    RunInputError,
)
from charter.payloads import json_text


def text_argument(value: Any, name: str) -> str:
    """A run id, slug or cursor as PostgreSQL can take it, or ArgumentError saying why not."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string, not {type(value).__name__}.")
    if not 1 <= len(value) <= 200:
        raise ArgumentError(f"{name} must be 1 to 200 characters long, not {len(value)}.")
    return clean_text(value, name)


def clean_text(value: Any, name: str) -> str:
    """Any text PostgreSQL can store (no U+0000, no lone surrogates), or ArgumentError;
    rules about length and emptiness are left to the callee."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string, not {type(value).__name__}.")
    if "\x00" in value:
        raise ArgumentError(
            f"{name} {value!r} contains U+0000, which PostgreSQL cannot store; remove it."
        )
    if not value.isascii():  # a lone surrogate is the one thing left that JSON refuses
        try:
            json_text(value, name)
        except RunInputError as exc:
            raise ArgumentError(exc.message) from None
    return value


def whole_number(value: Any, name: str) -> int:
    """A whole number as the call takes it, or ArgumentError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{name} must be a whole number, not {type(value).__name__}.")
    return value


def effect_ids(ids: Any, what: str) -> list[int]:
    if isinstance(ids, int) and not isinstance(ids, bool):
        return [ids]
    if isinstance(ids, str | type) or not hasattr(ids, "__iter__"):
        raise ArgumentError(f"{what} takes side-effect ids (whole numbers), not {ids!r:.40}.")
    out = []
    for value in ids:
        try:
            out.append(int(value))
        except (TypeError, ValueError, OverflowError):
            raise ArgumentError(f"{what}: {value!r:.40} is not a side-effect id.") from None
    return out
