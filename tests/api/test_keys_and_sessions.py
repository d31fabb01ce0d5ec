"""Keys and sessions (issue #37 § 5): a user's API key is bound to the directory entry it was
made for, so re-adding a removed user does not revive it; the run functions honour the
transaction's charter.org_id as the document functions do, so an app that names its org
cannot reach another org's runs; and the worker role cannot shrink retention below the
deduplication window, which the schema's owner may."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb
from starlette.testclient import TestClient

from charter import Client
from charter.api import create_app
from charter.db.sqlstate import charter_errors
from charter.db.store import perform
from charter.errors import OrgMismatchError, PermissionDeniedError, RunNotFoundError
from charter.ops.api_keys import authenticate_api_key, create_api_key
from tests.engine import install
from tests.flows_for_tests import analyze_site


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app"))) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --- keys are bound to the directory entry they were made for -------------------------------


def test_re_adding_a_removed_user_does_not_revive_their_old_keys(api, keys, acme, db_url):
    old = keys["clerk2"]
    assert api.get("/api/documents", headers=_as(old)).status_code == 200
    acme.directory.remove_user("clerk2")
    assert api.get("/api/documents", headers=_as(old)).status_code == 401
    # The same id is given to someone again (or the same person comes back): a new entry.
    acme.directory.put_user("clerk2", roles=["ap_clerk"], email="clerk2@example.com")
    answer = api.get("/api/documents", headers=_as(old))
    assert answer.status_code == 401, "a key made for the removed entry works again"
    assert answer.json()["error"]["code"] == "UNAUTHENTICATED"
    with psycopg.connect(db_url, autocommit=True) as owner:
        assert perform(owner, authenticate_api_key(old)) is None
        # A key made for the new entry works; updating the entry (roles, email) keeps it.
        new = perform(owner, create_api_key("acme", "clerk2", "again", None)).key
    assert new is not None and api.get("/api/documents", headers=_as(new)).status_code == 200
    acme.directory.put_user("clerk2", roles=["ap_clerk", "admin"], email="c2@example.com")
    assert api.get("/api/documents", headers=_as(new)).status_code == 200
    # Service accounts have no directory entry: their keys are untouched by all this.
    assert api.get("/api/documents", headers=_as(keys["ops"])).status_code == 200


def test_keys_removed_and_re_added_while_requests_race_never_come_back(api, keys, acme, db_url):
    """A removal racing with re-adds of the same id: whichever order they commit in, the old
    key never authenticates again once the removal committed."""
    old = keys["clerk2"]
    acme.directory.remove_user("clerk2")
    errors: list[BaseException] = []

    def re_add(n: int) -> None:
        try:
            with Client(db_url, org_id="acme") as client:
                for _ in range(5):
                    client.directory.put_user("clerk2", roles=["ap_clerk"], email=f"{n}@x.org")
                    client.directory.remove_user("clerk2")
                client.directory.put_user("clerk2", roles=["ap_clerk"])
        except BaseException as error:  # reported below
            errors.append(error)

    def authenticate() -> None:
        try:
            with psycopg.connect(db_url, autocommit=True) as conn:
                for _ in range(20):
                    assert perform(conn, authenticate_api_key(old)) is None
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=re_add, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=authenticate) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert api.get("/api/documents", headers=_as(old)).status_code == 401


# --- the run functions honour charter.org_id ------------------------------------------------


@pytest.fixture
def runs(db_url) -> dict[str, str]:
    """A running run in acme and one in globex (no worker runs them), started by the owner."""
    with psycopg.connect(db_url, autocommit=True) as owner:
        install(owner, analyze_site())
        for org in ("acme", "globex"):
            owner.execute(
                "SELECT charter.start_run('analyze_site', %s, %s, %s)",
                (Jsonb({"pages": ["a"]}), f"run-{org}", org),
            )
    return {"acme": "run-acme", "globex": "run-globex"}


def _in_org(conn: psycopg.Connection[Any], org: str, statement: str, *params: Any) -> Any:
    """One transaction scoped to org (SET LOCAL charter.org_id), as an app under RLS runs."""
    with charter_errors(), conn.transaction():
        conn.execute("SELECT set_config('charter.org_id', %s, true)", (org,))
        return conn.execute(statement, params).fetchone()[0]


def test_an_app_scoped_to_its_org_cannot_reach_another_orgs_runs(runs, login, db_url):
    with psycopg.connect(login("charter_app"), autocommit=True) as app:
        theirs, mine = runs["globex"], runs["acme"]
        # Its own runs, by id alone or naming its org.
        assert _in_org(app, "acme", "SELECT charter.get_run(%s)", mine)["id"] == mine
        assert _in_org(app, "acme", "SELECT charter.get_run(%s, 'acme')", mine)["id"] == mine
        # Another org's run named by its id: not found, as another org's document is.
        assert _in_org(app, "acme", "SELECT charter.get_run(%s)", theirs) is None
        assert _in_org(app, "acme", "SELECT charter.get_runs(%s)", [theirs, mine])[0] is None
        finished = _in_org(app, "acme", "SELECT charter.get_finished_runs(%s)", [theirs])
        assert finished == [None]
        listed = _in_org(app, "acme", "SELECT array_agg(r->>'id') FROM charter.list_runs() AS r")
        assert listed == [mine]
        with pytest.raises(RunNotFoundError):
            _in_org(app, "acme", "SELECT charter.cancel_run(%s)", theirs)
        # Naming the other org besides the transaction's: refused, as for documents.
        for statement in (
            "SELECT charter.get_run(%s, 'globex')",
            "SELECT charter.cancel_run(%s, 'globex')",
            "SELECT charter.retry_run(%s, 'globex')",
            "SELECT charter.list_runs(p_org_id => 'globex', p_after => %s)",
            "SELECT charter.start_run('analyze_site', '{\"pages\": []}', %s, 'globex')",
        ):
            with pytest.raises(OrgMismatchError):
                _in_org(app, "acme", statement, theirs)
    with psycopg.connect(db_url, autocommit=True) as owner:
        owner.execute(
            "UPDATE charter.runs SET status = 'failed', finished_at = now() WHERE id = %s",
            (theirs,),
        )
        with pytest.raises(RunNotFoundError):
            _in_org(owner, "acme", "SELECT charter.retry_run(%s)", theirs)
        status = owner.execute("SELECT org_id, status FROM charter.runs ORDER BY org_id").fetchall()
    assert status == [("acme", "running"), ("globex", "failed")]


def test_apps_of_two_orgs_cancelling_each_others_runs_at_once_cancel_nothing(runs, login):
    url = login("charter_app")
    refused: list[str] = []
    errors: list[BaseException] = []

    def attack(org: str, target: str) -> None:
        try:
            with psycopg.connect(url, autocommit=True) as app:
                for _ in range(10):
                    try:
                        _in_org(app, org, "SELECT charter.cancel_run(%s)", target)
                    except RunNotFoundError:
                        refused.append(org)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [
        threading.Thread(target=attack, args=(org, runs[other]))
        for org, other in (("acme", "globex"), ("globex", "acme"))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(refused) == 60
    with psycopg.connect(url, autocommit=True) as app:
        for org, run_id in runs.items():
            assert _in_org(app, org, "SELECT charter.get_run(%s)", run_id)["status"] == "running"


# --- retention and the deduplication window -------------------------------------------------


def test_the_worker_role_cannot_shrink_retention_below_the_dedup_window(login, db_url):
    with psycopg.connect(login("charter_worker"), autocommit=True) as worker:
        for days in (1, 30, 89):
            with pytest.raises(PermissionDeniedError) as refused, charter_errors():
                worker.execute("SELECT charter.run_maintenance(%s)", (days,))
            assert "90-day deduplication window" in refused.value.message
        with charter_errors():
            report = worker.execute("SELECT charter.run_maintenance(90)").fetchone()[0]
        assert report["retentionDays"] == 90
    # The schema's owner may (an operator's deliberate choice).
    with psycopg.connect(db_url, autocommit=True) as owner, charter_errors():
        report = owner.execute("SELECT charter.run_maintenance(30)").fetchone()[0]
    assert report["retentionDays"] == 30
