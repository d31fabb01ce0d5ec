"""Development only where it is certain; production everywhere else (seed 000)."""

import pytest

from charter.db.connection import DatabaseTarget
from charter.db.embedded import EmbeddedServer
from charter.db.mode import (
    KNOWN_LOCAL_SUPABASE_ANON_KEY,
    KNOWN_LOCAL_SUPABASE_SERVICE_ROLE_KEY,
    detect_mode,
    is_local_supabase,
)
from charter.errors import ConfigurationError

EXTERNAL = DatabaseTarget("postgresql://app@db.example/app", "CHARTER_DATABASE_URL")


def _embedded(tmp_path):
    server = EmbeddedServer(tmp_path, tmp_path, 5432, False, 1, "18")
    return DatabaseTarget(server.url(), "embedded", server)


def test_an_external_database_is_production():
    assert detect_mode(EXTERNAL, env={}) == "production"


def test_the_embedded_server_is_development(tmp_path):
    assert detect_mode(_embedded(tmp_path), env={}) == "development"


@pytest.mark.parametrize(
    "env",
    [
        {"SUPABASE_ANON_KEY": KNOWN_LOCAL_SUPABASE_ANON_KEY},
        {"SUPABASE_SERVICE_ROLE_KEY": KNOWN_LOCAL_SUPABASE_SERVICE_ROLE_KEY},
    ],
)
def test_known_local_supabase_keys_mean_development(env):
    assert is_local_supabase(env)
    assert detect_mode(EXTERNAL, env=env) == "development"


@pytest.mark.parametrize(
    "env",
    [
        {"SUPABASE_ANON_KEY": KNOWN_LOCAL_SUPABASE_ANON_KEY[:-1] + "x"},
        {"SUPABASE_SERVICE_ROLE_KEY": "eyJhbGciOiJIUzI1NiJ9.production.key"},
        {"SUPABASE_URL": "http://127.0.0.1:54321"},
    ],
    ids=["almost-local-key", "hosted-key", "local-url-only"],
)
def test_anything_but_the_exact_local_keys_is_production(env):
    assert not is_local_supabase(env)
    assert detect_mode(EXTERNAL, env=env) == "production"


def test_charter_mode_production_forces_production(tmp_path):
    env = {"CHARTER_MODE": "production", "SUPABASE_ANON_KEY": KNOWN_LOCAL_SUPABASE_ANON_KEY}
    assert detect_mode(_embedded(tmp_path), env=env) == "production"
    assert detect_mode(EXTERNAL, env=env) == "production"


def test_charter_mode_development_forces_development():
    assert detect_mode(EXTERNAL, env={"CHARTER_MODE": "development"}) == "development"


@pytest.mark.parametrize("value", ["dev", "staging", "Production"])
def test_an_unknown_mode_is_refused(value):
    with pytest.raises(ConfigurationError) as caught:
        detect_mode(EXTERNAL, env={"CHARTER_MODE": value})
    assert "is not a mode" in caught.value.message


def test_a_url_to_charters_own_embedded_server_is_production_unless_charter_resolved_it(
    conn, monkeypatch
):
    # Comparing a server's data directory with ours is not proof it is ours to experiment on.
    data_directory = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
    monkeypatch.setenv("CHARTER_DATA_DIR", data_directory)
    assert detect_mode(EXTERNAL, env={}) == "production"
