"""charter: durable, contracted workflows that live in PostgreSQL."""

from charter.canonical import canonical_hash, canonical_json
from charter.db.migrate import migrate
from charter.errors import CharterError

__all__ = [
    "CharterError",
    "canonical_hash",
    "canonical_json",
    "migrate",
]
