"""Storing an entity type's system envelope (with its contract) as an immutable default
definition."""

from __future__ import annotations

from typing import Any

import psycopg

from charter.db.store import perform
from charter.dsl.contract import EntityContract
from charter.ops.definitions import publish_contract


def publish_envelope(conn: psycopg.Connection[Any], contract: EntityContract) -> dict[str, Any]:
    """Generate, compile and store the contract's envelope; the same envelope twice is
    ``verified``, a changed one a new ``published`` version."""
    return perform(conn, publish_contract(contract))
