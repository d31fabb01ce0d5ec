"""Development or production: decides whether a changed flow may be deleted and recreated.

Production unless development is certain (seed 000's safety rule): the database is
charter's own embedded server, or the environment holds the well-known keys of a local
Supabase stack. ``CHARTER_MODE=production`` forces production; nothing forces development.
"""

from __future__ import annotations

import os
from typing import Any, Literal

import psycopg

from charter.db import embedded
from charter.db.connection import DatabaseTarget
from charter.errors import ConfigurationError

Mode = Literal["development", "production"]

# Every local Supabase CLI stack uses these keys (signed with a fixed, published JWT secret,
# issuer "supabase-demo"); hosted projects never do.
KNOWN_LOCAL_SUPABASE_ANON_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAi"
    "OjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
)
KNOWN_LOCAL_SUPABASE_SERVICE_ROLE_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9s"
    "ZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"
)


def is_local_supabase(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    return (
        env.get("SUPABASE_ANON_KEY") == KNOWN_LOCAL_SUPABASE_ANON_KEY
        or env.get("SUPABASE_SERVICE_ROLE_KEY") == KNOWN_LOCAL_SUPABASE_SERVICE_ROLE_KEY
    )


def detect_mode(
    target: DatabaseTarget,
    conn: psycopg.Connection[Any] | None = None,
    env: dict[str, str] | None = None,
) -> Mode:
    env = dict(os.environ) if env is None else env
    forced = env.get("CHARTER_MODE", "").strip()
    if forced and forced != "production":
        raise ConfigurationError(
            f"CHARTER_MODE={forced!r} is not accepted: it can only force 'production'. "
            "Development mode deletes a changed flow's data, so charter chooses it only when "
            "it is certain the database is local (charter's embedded server or a local "
            "Supabase stack). Unset CHARTER_MODE or set it to production."
        )
    if forced == "production":
        return "production"
    if target.embedded is not None or is_local_supabase(env):
        return "development"
    if conn is not None and _is_embedded_server(conn):
        return "development"
    return "production"


def _is_embedded_server(conn: psycopg.Connection[Any]) -> bool:
    """True when the URL points at charter's own embedded server (e.g. via `db url`)."""
    try:
        with conn.transaction():  # a savepoint when the caller has a transaction open
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
    except psycopg.Error:
        return False  # not allowed to read it: cannot be certain
    if row is None or not row[0]:
        return False
    return bool(os.path.realpath(row[0]) == os.path.realpath(embedded.default_data_dir()))
