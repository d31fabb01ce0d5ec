"""Reading contracts and org definitions from JSON or YAML files.

A document is refused, with the file and the place, when it is not something charter can
compile, print and store: not UTF-8, larger than :data:`MAX_BYTES`, not valid JSON or YAML,
empty, nested more than :data:`MAX_DEPTH` levels, expanding to more than :data:`MAX_VALUES`
values through YAML aliases (the "billion laughs"), containing itself through an alias,
holding values JSON does not have (dates, binary, sets, NaN, keys that are not strings), or
strings with U+0000 or lone surrogates (which PostgreSQL cannot store).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import yaml

from charter.errors import ConfigurationError
from charter.payloads import MAX_DEPTH, shown

MAX_BYTES = 10 * 1024 * 1024
"""The largest document file read: contracts and org definitions are a few kilobytes."""
MAX_VALUES = 100_000
"""The most values (counting every use of a YAML alias) a document may hold."""


def read_document(path: str, what: str) -> Any:
    """The JSON or YAML document at ``path`` (by extension; otherwise JSON, then YAML)."""
    file = Path(path)
    text = _read_text(file, path, what)
    if file.suffix.lower() in (".yaml", ".yml"):
        document = _yaml(text, path, what)
    else:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            if file.suffix.lower() == ".json":
                raise ConfigurationError(
                    f"The {what} file {path} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                    f"column {exc.colno}."
                ) from None
            document = _yaml(text, path, what)
        except RecursionError:
            raise _too_deep(path, what) from None
        except ValueError:  # the only other failure: an integer of more than 4,300 digits
            raise _too_many_digits(path, what) from None
    _check_document(document, path, what)
    return document


def _read_text(file: Path, path: str, what: str) -> str:
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot read the {what} file {path}: {exc.strerror or exc}. Check the path."
        ) from None
    except ValueError:  # U+0000 in the path, or a character the file system cannot encode
        raise ConfigurationError(
            f"Cannot read the {what} file {path!r}: the path contains U+0000 or characters "
            "the file system cannot take. Check the path."
        ) from None
    if len(data) > MAX_BYTES:
        raise ConfigurationError(
            f"The {what} file {path} is larger than {MAX_BYTES // (1024 * 1024)} MB; contracts "
            "and org definitions are a few kilobytes. Check that it is the right file."
        )
    try:
        return data.decode("utf-8-sig")  # a byte order mark, as some editors write, is fine
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"The {what} file {path} is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
            f"offset {exc.start} cannot be decoded. Save it as UTF-8."
        ) from None


def _yaml(text: str, path: str, what: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigurationError(
            f"The {what} file {path} is not valid YAML{where}: "
            f"{getattr(exc, 'problem', None) or exc}."
        ) from None
    except RecursionError:
        raise _too_deep(path, what) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a date like 2024-13-45, …
        if "integer string conversion" in str(exc):
            raise _too_many_digits(path, what) from None
        raise ConfigurationError(f"The {what} file {path} is not usable YAML: {exc}.") from None


def _too_many_digits(path: str, what: str) -> ConfigurationError:
    return ConfigurationError(
        f"The {what} file {path} holds a number of more than {sys.get_int_max_str_digits()} "
        "digits, which Python does not read; write it as a string."
    )


def _too_deep(path: str, what: str) -> ConfigurationError:
    return ConfigurationError(
        f"The {what} file {path} nests arrays and objects too deeply to read; charter accepts "
        f"at most {MAX_DEPTH} levels. Flatten it."
    )


def _check_document(document: Any, path: str, what: str) -> None:
    """Walks the document once, without recursion: every refusal names the place."""

    def refuse(where: str, problem: str) -> ConfigurationError:
        return ConfigurationError(f"The {what} file {path}: {where}: {problem}.")

    if document is None:
        raise ConfigurationError(
            f"The {what} file {path} is empty (or holds only null); it must hold an object."
        )
    count = 0
    inside: set[int] = set()  # the arrays and objects on the current path
    stack: list[tuple[Any, str, int, bool]] = [(document, "$", 0, False)]
    while stack:
        value, where, depth, leaving = stack.pop()
        if leaving:
            inside.discard(id(value))
            continue
        count += 1
        if count > MAX_VALUES:
            raise ConfigurationError(
                f"The {what} file {path} holds more than {MAX_VALUES:,} values (YAML aliases "
                "count each time they are used, so a few lines can expand to billions). "
                "Write the document out without aliases that multiply."
            )
        if isinstance(value, dict | list):
            if id(value) in inside:
                raise refuse(where, "an alias refers to the object it is inside, so it never ends")
            if depth >= MAX_DEPTH:
                raise refuse(where, f"nests more than {MAX_DEPTH} levels deep; flatten it")
            inside.add(id(value))
            stack.append((value, where, depth, True))
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise refuse(
                            where,
                            f"the key {shown(key)} is not a string; quote it (JSON keys "
                            "are strings)",
                        )
                    _check_string(key, f"{where}.{shown(key, 40)}", refuse)
                    stack.append((item, f"{where}.{key[:40]}", depth + 1, False))
            else:
                for index, item in enumerate(value):
                    stack.append((item, f"{where}[{index}]", depth + 1, False))
        elif isinstance(value, str):
            _check_string(value, where, refuse)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise refuse(where, f"{value} is not a JSON number; use a number or a string")
        elif value is not None and not isinstance(value, bool | int):
            raise refuse(
                where,
                f"a {type(value).__name__} is not a JSON value (YAML reads unquoted dates, "
                "!!binary and !!set as such); quote it to make it a string",
            )


def _check_string(text: str, where: str, refuse: Any) -> None:
    if "\x00" in text:
        raise refuse(where, "the text contains U+0000, which cannot be stored; remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise refuse(
            where,
            f"the text contains a lone surrogate (U+{ord(text[exc.start]):04X}, e.g. from an "
            'escape like "\\ud800"), which is not valid Unicode; write the character itself',
        ) from None
