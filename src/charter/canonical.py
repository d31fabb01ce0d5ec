"""Canonical JSON and hashing (seed 002 § Canonical JSON Hashing).

Logically equal JSON must hash equally on every machine and in every language, so the
serialisation is fixed exactly:

* object keys sorted recursively by UTF-16 code units (the order JavaScript's default sort
  gives, so a JavaScript implementation produces the same bytes);
* no whitespace; ``None`` kept as ``null``; non-ASCII written as UTF-8, not ``\\u`` escapes;
* numbers as ECMAScript ``Number.prototype.toString`` writes them (``1.0`` is ``1``);
* only JSON-stable values: anything else is a :class:`CanonicalJsonError` naming its path.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from charter.errors import CanonicalJsonError
from charter.payloads import shown

# Integers beyond this lose precision in IEEE 754 doubles (JavaScript, many JSON parsers).
MAX_SAFE_INTEGER = 2**53 - 1
# Arrays and objects nested deeper than this are refused (charter's own documents nest a
# few levels; payloads at most 100), before Python's recursion limit is reached.
MAX_DEPTH = 200

_HINTS: dict[str, str] = {
    "datetime": "convert it to an ISO 8601 string first, e.g. value.isoformat()",
    "date": "convert it to an ISO 8601 string first, e.g. value.isoformat()",
    "time": "convert it to an ISO 8601 string first, e.g. value.isoformat()",
    "Decimal": "store money as integer minor units (cents) or as a string",
    "set": "convert it to a sorted list first",
    "frozenset": "convert it to a sorted list first",
    "bytes": "encode it first, e.g. base64 into a string",
    "UUID": "convert it to a string first, e.g. str(value)",
}


def canonical_json(value: Any) -> str:
    """Serialise ``value`` canonically.

    >>> canonical_json({"b": 1, "a": [True, None, 1.0]})
    '{"a":[true,null,1],"b":1}'
    """
    parts: list[str] = []
    _Writer(parts).write(value, "$")
    return "".join(parts)


def canonical_hash(value: Any) -> str:
    """The hex SHA-256 of :func:`canonical_json` encoded as UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


class _Writer:
    """Writes one value; remembers the arrays and objects it is inside, to refuse a value
    that contains itself and one nested beyond :data:`MAX_DEPTH`."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.open: set[int] = set()

    def write(self, value: Any, path: str) -> None:
        out = self.out
        if value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        elif isinstance(value, str):
            out.append(_string(value, path))
        elif isinstance(value, int):
            if abs(value) > MAX_SAFE_INTEGER:
                # str() of an int of thousands of digits raises ValueError: name its size.
                digits = str(value) if value.bit_length() < 256 else f"of {value.bit_length()} bits"
                raise CanonicalJsonError(
                    f"{path}: the integer {digits} is outside ±(2**53 - 1) and would lose "
                    "precision in other JSON readers; store it as a string instead"
                )
            out.append(str(int(value)))
        elif isinstance(value, float):
            out.append(_number(value, path))
        elif isinstance(value, Mapping) or (
            isinstance(value, Sequence) and not isinstance(value, bytes | bytearray)
        ):
            self._container(value, path)
        else:
            type_name = type(value).__name__
            hint = _HINTS.get(
                type_name, "convert it to a str, int, float, bool, None, list or dict"
            )
            raise CanonicalJsonError(f"{path}: a value of type {type_name} is not JSON; {hint}")

    def _container(self, value: Mapping[Any, Any] | Sequence[Any], path: str) -> None:
        if id(value) in self.open:
            raise CanonicalJsonError(
                f"{path}: the value contains itself (a reference cycle), which JSON cannot "
                "represent; copy the inner value instead of referring back to its container"
            )
        if len(self.open) >= MAX_DEPTH:
            raise CanonicalJsonError(
                f"{path[:80]}…: arrays and objects nest more than {MAX_DEPTH} levels deep; "
                "flatten the value"
            )
        self.open.add(id(value))
        if isinstance(value, Mapping):
            self._object(value, path)
        else:
            self.out.append("[")
            for index, item in enumerate(value):
                if index:
                    self.out.append(",")
                self.write(item, f"{path}[{index}]")
            self.out.append("]")
        self.open.discard(id(value))

    def _object(self, value: Mapping[Any, Any], path: str) -> None:
        for key in value:
            if not isinstance(key, str):
                raise CanonicalJsonError(
                    f"{path}: the key {shown(key)} is a {type(key).__name__}; JSON object keys "
                    "must be strings, so convert it with str() first"
                )
        out = self.out
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_key)):
            if index:
                out.append(",")
            out.append(_string(key, path))
            out.append(":")
            self.write(value[key], f"{path}.{key}")
        out.append("}")


def _string(value: str, path: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalJsonError(
            f"{path}: the string contains a lone surrogate at index {exc.start}, which is "
            "not valid Unicode; decode the source text properly"
        ) from None
    return json.dumps(value, ensure_ascii=False)


def _number(value: float, path: str) -> str:
    if not math.isfinite(value):
        raise CanonicalJsonError(
            f"{path}: {value} is not a JSON number; replace it with null or a string"
        )
    if value == 0:
        return "0"  # also -0.0, as JavaScript writes it
    # repr() gives the shortest digits that round-trip, like ECMAScript; only the layout
    # (where the decimal point goes, when to use an exponent) differs.
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    point = len(int_part) + (int(exp_text) if exp_text else 0)  # decimal point position
    if not int_part.strip("0"):
        # 0.000123 -> digits "123", point shifted left by the leading zeros of frac_part
        point = -(len(frac_part) - len(frac_part.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        exp_sign = "+" if exponent >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{head}e{exp_sign}{abs(exponent)}"
    return sign + text
