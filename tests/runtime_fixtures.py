"""Documents' workflows running: seed 002's use cases published for org acme, its directory,
and a worker that runs the documents engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.db.store import perform
from charter.demos.use_cases import USE_CASES
from charter.ops.api_keys import create_api_key
from tests.servers import MailServer, SmsServer
from tests.workers import running_worker


@pytest.fixture
def acme(db_url, monkeypatch) -> Iterator[Client]:
    """Org acme with every use case published (contract and org definition) and its people."""
    monkeypatch.setenv("CHARTER_MODE", "development")  # the test clock may move
    with Client(db_url, org_id="acme") as client:
        for contract, org in USE_CASES.values():
            client.definitions.publish(contract)
            client.definitions.publish(contract, org)
        client.directory.put_user("clerk", roles=["ap_clerk"], email="clerk@example.com")
        # Who approves what the clerk submits: a requester never approves their own request.
        client.directory.put_user("reviewer", roles=["ap_clerk"], email="reviewer@example.com")
        client.directory.put_user("sales", roles=["sales"], email="sales@example.com")
        client.directory.put_user("wh", roles=["warehouse"], email="wh@example.com")
        client.directory.put_user(
            "boss", roles=["logistics_manager", "franchise_ops"], email="boss@example.com"
        )
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        yield client


@pytest.fixture(scope="session")
def _mail_server() -> Iterator[MailServer]:
    server = MailServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def _sms_server() -> Iterator[SmsServer]:
    server = SmsServer()
    yield server
    server.close()


@pytest.fixture
def mail(_mail_server, monkeypatch) -> Iterator[MailServer]:
    """A local SMTP server the worker sends email to (CHARTER_SMTP_URL)."""
    _mail_server.reset()
    monkeypatch.setenv("CHARTER_SMTP_URL", _mail_server.url)
    yield _mail_server
    _mail_server.reset()


@pytest.fixture
def sms(_sms_server, monkeypatch) -> Iterator[SmsServer]:
    """A local SMS provider (Twilio's API shape) the worker sends to (CHARTER_SMS_URL)."""
    _sms_server.reset()
    monkeypatch.setenv("CHARTER_SMS_URL", _sms_server.url)
    yield _sms_server
    _sms_server.reset()


@pytest.fixture
def engine(db_url, mail, sms) -> Iterator[Any]:
    """A worker running the documents engine alone (no flows), with email and SMS sent to
    the local servers."""
    with running_worker(db_url, poll_interval=0.05) as worker:
        yield worker


@pytest.fixture
def sql(db_url) -> Callable[..., list[tuple[Any, ...]]]:
    def run(query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(db_url, autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    return run


@pytest.fixture
def keys(acme, db_url) -> dict[str, str]:
    """Keys (made by the owner) for acme's clerk, a second ap_clerk, a service account, and
    globex's user."""
    acme.directory.put_user("clerk2", roles=["ap_clerk"], email="clerk2@example.com")
    with Client(db_url, org_id="globex") as globex:
        globex.directory.put_user("gx", roles=["ap_clerk"])
    with psycopg.connect(db_url, autocommit=True) as owner:
        made = {
            "clerk": perform(owner, create_api_key("acme", "clerk", "tests", None)),
            "clerk2": perform(owner, create_api_key("acme", "clerk2", "tests", None)),
            "ops": perform(owner, create_api_key("acme", "service:ops", "tests", None)),
            "globex": perform(owner, create_api_key("globex", "gx", None, None)),
        }
    return {name: str(key.key) for name, key in made.items()}
