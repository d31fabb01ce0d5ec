"""JSON payloads at the door: what charter accepts as run inputs and step outputs.

A payload is stored as PostgreSQL ``jsonb`` and decoded again by every worker that claims a
task, so anything PostgreSQL or Python's JSON decoder would choke on is refused when it is
written, with the reason, rather than poisoning the workers later:

* values that are not JSON (sets, bytes, objects, NaN and infinities);
* U+0000 and lone surrogates (``"\\ud800"``, or a filename decoded with ``surrogateescape``),
  which PostgreSQL cannot store;
* values nested more than :data:`MAX_DEPTH` levels deep in arrays and objects (SQL checks
  the same limit when a run starts and when a task completes).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from charter.errors import RunInputError

MAX_DEPTH = 100
"""How deep values may sit in inputs and outputs: ``[["a"]]`` has "a" at level 2."""
# json.dumps writes U+0000 as \u0000; a backslash written before "u0000" is \\u0000, which
# is fine: an escape is one preceded by an even number of backslashes.
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def json_array_text(values: Sequence[Any], what: str) -> str:
    """``values`` as one JSON array text, for a batch: one ``json.dumps`` for all of them
    (ten thousand small values cost a tenth of one call each). The values' depth is left to
    the SQL that takes the array, which checks the same limit (``_check_payload``). When the
    array cannot be written as it is, each value is written on its own with
    :func:`json_text`'s checks, and the first at fault is named: "{what} at index 3 …"."""
    try:
        text = json.dumps(list(values), allow_nan=False, separators=(",", ":"), ensure_ascii=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        pass
    else:
        if not ("\\u0000" in text and _NUL_ESCAPE.search(text)):
            return text
    texts = [json_text(value, f"{what} at index {index}") for index, value in enumerate(values)]
    return "[" + ",".join(texts) + "]"


def json_text(value: Any, what: str) -> str:
    """``value`` as JSON text PostgreSQL's jsonb accepts, or RunInputError naming the problem."""
    depth = nesting_depth(value, MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise RunInputError(
            f"{what} nests arrays and objects more than {MAX_DEPTH} levels deep (or contains "
            f"itself); charter accepts at most {MAX_DEPTH}. Flatten it, or store the document "
            "elsewhere and pass a reference."
        )
    try:
        text = json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        hint = "convert it to dicts, lists, strings, numbers, booleans and None"
        if isinstance(value, float) and math.isnan(value):
            hint = "replace NaN with null"
        elif "Out of range float" in str(exc):
            hint = "replace NaN and infinities with null (or a string)"
        raise RunInputError(f"{what} is not JSON ({exc}); {hint}.") from None
    if "\\u0000" in text and _NUL_ESCAPE.search(text):
        raise RunInputError(
            f"{what} contains the character U+0000, which PostgreSQL cannot store in JSON; "
            "remove it or encode the data (e.g. base64)."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        snippet = text[max(exc.start - 20, 0) : exc.start].encode("utf-8", "replace").decode()
        raise RunInputError(
            f"{what} contains a lone surrogate (U+{ord(text[exc.start]):04X}) after "
            f"{snippet!r}, which is not valid Unicode and cannot be stored; it usually comes "
            "from bytes decoded with errors='surrogateescape' (file names) or from JSON "
            'like "\\ud800". Decode the bytes properly or encode them (e.g. base64).'
        ) from None
    return text


def nesting_depth(value: Any, limit: int) -> int:
    """The deepest level of any value inside ``value`` (the value itself is level 0, the
    items of a list or object level 1, …: jsonpath's ``.**`` levels, so SQL's check of the
    same limit agrees), counting no further than ``limit + 1``.

    Iterative, so a value nested far beyond Python's recursion limit is measured safely.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((child, level + 1) for child in item)
    return deepest


def loads(text: str | bytes, what: str) -> Any:
    """Decode stored JSON text; a payload too deep for Python's decoder is RunInputError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise RunInputError(
            f"{what} nests arrays and objects too deeply for Python to decode (charter "
            f"accepts at most {MAX_DEPTH} levels); it was written without charter's checks. "
            "Start the run again with a flatter input."
        ) from None


def shown(value: Any, limit: int = 80) -> str:
    """A caller's value in an error message: its repr, shortened to ``limit`` characters.
    Never raises (an int of thousands of digits has no repr; an object's may fail)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
