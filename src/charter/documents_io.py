"""Reading contracts and org definitions from JSON or YAML files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from charter.errors import ConfigurationError


def read_document(path: str, what: str) -> Any:
    """The JSON or YAML document at ``path`` (by extension; otherwise JSON, then YAML)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot read the {what} file {path}: {exc.strerror}. Check the path."
        ) from None
    if file.suffix.lower() in (".yaml", ".yml"):
        return _yaml(text, path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if file.suffix.lower() == ".json":
            raise ConfigurationError(
                f"The {what} file {path} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}."
            ) from None
        return _yaml(text, path, what)


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
