"""Storing an entity type's system envelope as an immutable default definition."""

from __future__ import annotations

from typing import Any

import psycopg

from charter.canonical import canonical_json
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.dsl.contract import EntityContract


def publish_envelope(conn: psycopg.Connection[Any], contract: EntityContract) -> dict[str, Any]:
    """Generate, compile and store the contract's envelope; the same envelope twice is
    ``verified``, a changed one a new ``published`` version."""
    envelope = generate_envelope(contract)
    compiled = compile_effective(envelope)
    with charter_errors():
        row = conn.execute(
            query("publish_envelope"),
            {
                "entity_type": contract.entity_type,
                "envelope": canonical_json(envelope),
                "compiled": canonical_json(compiled),
            },
        ).fetchone()
    assert row is not None
    return dict(row[0])
