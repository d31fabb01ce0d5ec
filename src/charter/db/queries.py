"""The named queries of ``sql/queries.sql``: SQL stays in .sql files, Python asks by name."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@cache
def _all() -> dict[str, str]:
    text = resources.files("charter.db").joinpath("sql/queries.sql").read_text("utf-8")
    parts = _NAME.split(text)
    # parts = [preamble, name1, body1, name2, body2, ...]
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def query(name: str) -> str:
    """The SQL of the query called ``name`` in sql/queries.sql."""
    try:
        return _all()[name]
    except KeyError:
        raise KeyError(f"no query named {name!r} in charter/db/sql/queries.sql") from None
