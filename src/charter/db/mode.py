"""Development or production: what a worker does with a flow whose shape changed.

In development it publishes the code's shape as a new version (earlier versions and their
runs stay intact); in production it refuses, listing every difference, unless told to
deploy. Production unless development is certain (seed 000's safety rule): charter itself
resolved its embedded server, ``CHARTER_MODE=development`` is set, or the environment
holds the well-known keys of a local Supabase stack. ``CHARTER_MODE=production`` forces
production. A remote server is never taken for development by its data directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from charter import settings
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


def is_local_supabase(env: Mapping[str, str] | None = None) -> bool:
    env = settings.environment() if env is None else env
    return (
        env.get("SUPABASE_ANON_KEY") == KNOWN_LOCAL_SUPABASE_ANON_KEY
        or env.get("SUPABASE_SERVICE_ROLE_KEY") == KNOWN_LOCAL_SUPABASE_SERVICE_ROLE_KEY
    )


def detect_mode(target: DatabaseTarget, env: Mapping[str, str] | None = None) -> Mode:
    env = settings.environment() if env is None else env
    forced = env.get("CHARTER_MODE", "").strip()
    if forced and forced not in ("production", "development"):
        raise ConfigurationError(
            f"CHARTER_MODE={forced!r} is not a mode; use 'production' (a changed flow stops "
            "the worker until it is deployed) or 'development' (a changed flow is published "
            "as a new version), or unset it to let charter decide."
        )
    if forced:
        return "production" if forced == "production" else "development"
    if target.embedded is not None or is_local_supabase(env):
        return "development"
    return "production"
