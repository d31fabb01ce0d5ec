"""Which database the `charter` command uses, and the errors for bad ones."""

import pytest

from tests.integration.helpers import charter_env, run_charter


def test_charter_database_url_selects_the_server(db_url):
    result = run_charter("db", "status", env=charter_env(CHARTER_DATABASE_URL=db_url))
    assert result.returncode == 0, result.stderr
    assert "(CHARTER_DATABASE_URL)" in result.stdout
    assert "schema charter: version" in result.stdout


def test_database_url_option_beats_the_environment(db_url):
    env = charter_env(CHARTER_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    result = run_charter("--database-url", db_url, "db", "status", env=env)
    assert result.returncode == 0, result.stderr
    assert "(--database-url)" in result.stdout


@pytest.mark.parametrize(
    ("url", "code", "fragment"),
    [
        ("postgresql://postgres@127.0.0.1:1/charter", "DATABASE_UNREACHABLE", "Connection refused"),
        ("not a url", "CONFIG_INVALID", "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"),
        ("postgresql://postgres:secret@127.0.0.1:1/x", "DATABASE_UNREACHABLE", "127.0.0.1:1/x"),
    ],
)
def test_a_bad_database_url_is_one_clear_paragraph(url, code, fragment):
    for command in (["db", "status"], ["migrate"], ["demo"]):
        result = run_charter(*command, env=charter_env(CHARTER_DATABASE_URL=url))
        assert result.returncode == 1
        assert code in result.stderr
        assert fragment in result.stderr
        assert "Traceback" not in result.stderr
        assert "secret" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_demo_runs_a_batch_of_runs_to_completion_on_a_fresh_database(empty_db_url):
    result = run_charter("demo", "--runs", "20", env=charter_env(CHARTER_DATABASE_URL=empty_db_url))
    assert result.returncode == 0, result.stderr
    assert "20 runs in" in result.stdout and "20 completed" in result.stdout
    for step in ("crawl", "audit", "summarize", "report"):
        assert step in result.stdout
