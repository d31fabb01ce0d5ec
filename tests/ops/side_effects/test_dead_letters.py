"""The app's own webhooks through the outbox, and the dead letter queue: list, show, retry
(same idempotency key), drop — from the client and from `charter dlq`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from charter.cli import main
from charter.errors import DeadLetterNotFoundError, SideEffectInvalidError
from charter.worker.channels.webhook import SIGNATURE_HEADER, signature
from tests.servers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _until(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def test_an_app_webhook_is_delivered_signed_and_its_key_dedups(acme, engine, receiver):
    queued = acme.side_effects.webhook(
        receiver.url + "/orders", {"order": "SO-1"}, headers={"X-Tenant": "acme"},
        idempotency_key="order-SO-1-created",
    )  # fmt: skip
    assert queued.status == "queued"
    again = acme.side_effects.webhook(receiver.url + "/orders", {"order": "SO-1"},
                                      idempotency_key="order-SO-1-created")  # fmt: skip
    assert (again.status, again.id) == ("duplicate", queued.id)
    effect = _until(lambda: (e := acme.side_effects.get(queued.id)).status == "completed" and e)
    [request] = receiver.to("/orders")
    assert json.loads(request["body"]) == {"order": "SO-1"}
    assert request["headers"]["Idempotency-Key"] == "order-SO-1-created"
    assert request["headers"]["X-Tenant"] == "acme"
    secret = acme.side_effects.webhook_secret()
    assert request["headers"][SIGNATURE_HEADER] == signature(secret, request["body"])
    assert (effect.channel, effect.target, effect.attempts) == (
        "webhook",
        receiver.url + "/orders",
        1,
    )
    assert effect.response["status"] == 200


@pytest.mark.parametrize(
    ("url", "options", "words"),
    [
        ("ftp://example.com/x", {}, "http:// or https://"),
        ("https://example.com/x", {"method": "DELETE"}, "POST, PUT or PATCH"),
        ("https://example.com/x", {"max_attempts": 0}, "between 1 and 50"),
        ("https://example.com/x", {"headers": {"Idempotency-Key": "k"}}, "set by charter"),
        ("https://example.com/x", {"headers": {"X-Charter-Attempt": "9"}}, "set by charter"),
        ("https://example.com/x", {"headers": {"X-Name": "caf\u00e9"}}, "not a valid HTTP header"),
        ("https://example.com/x", {"headers": {"X-Name": "a\r\nb"}}, "not a valid HTTP header"),
    ],
)
def test_a_bad_webhook_is_refused_with_what_to_fix(acme, url, options, words):
    with pytest.raises(SideEffectInvalidError, match=words):
        acme.side_effects.webhook(url, {}, **options)


def test_dead_letters_are_listed_retried_with_the_same_key_and_dropped(
    acme, engine, receiver, capsys, db_url
):
    receiver.script["/gone"] = [(410, {})]
    receiver.script["/flaky"] = [(400, {}), (200, {})]
    gone = acme.side_effects.webhook(receiver.url + "/gone", {"n": 1})
    flaky = acme.side_effects.webhook(receiver.url + "/flaky", {"n": 2})
    letters = _until(lambda: len(found := acme.dead_letters.list()) == 2 and found)
    by_id = {d.id: d for d in letters}
    assert by_id[gone.id].channel == "webhook" and by_id[gone.id].target.endswith("/gone")
    assert by_id[gone.id].attempts == 1 and "HTTP 410" in by_id[gone.id].last_error

    assert main(["--database-url", db_url, "dlq", "list", "--org", "acme", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(d["id"] for d in listed) == sorted([gone.id, flaky.id])
    assert main(["--database-url", db_url, "dlq", "show", str(gone.id), "--org", "acme"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "dead_letter" and shown["request"]["body"] == {"n": 1}

    # Retry: sent again with the key it had; delivered this time.
    assert main(["--database-url", db_url, "dlq", "retry", str(flaky.id), "--org", "acme",
                 "--actor", "ops"]) == 0  # fmt: skip
    assert "1 re-driven" in capsys.readouterr().out
    _until(lambda: acme.side_effects.get(flaky.id).status == "completed")
    first, second = receiver.to("/flaky")
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]
    [redrive] = acme.side_effects.get(flaky.id).interventions
    assert (redrive["action"], redrive["by"], redrive["attempts"]) == ("retry", "ops", 1)
    assert "HTTP 400" in redrive["lastError"]

    # Drop: kept as cancelled, no longer a dead letter, never sent again.
    assert acme.dead_letters.drop([gone.id], actor="ops") == [gone.id]
    assert acme.dead_letters.list() == []
    dropped = acme.side_effects.get(gone.id)
    assert dropped.status == "cancelled" and dropped.interventions[0]["action"] == "drop"
    assert len(receiver.to("/gone")) == 1

    # Ids that are not dead letters are refused, and nothing changes.
    with pytest.raises(DeadLetterNotFoundError, match=str(flaky.id)):
        acme.dead_letters.retry([flaky.id])
    assert main(["--database-url", db_url, "dlq", "drop", "999999", "--org", "acme"]) == 1
    assert "DEAD_LETTER_NOT_FOUND" in capsys.readouterr().err


def test_another_orgs_dead_letters_are_out_of_reach(acme, engine, receiver, db_url):
    from charter import Client

    receiver.script["/gone"] = [(404, {})]
    gone = acme.side_effects.webhook(receiver.url + "/gone", {})
    _until(lambda: acme.dead_letters.list())
    with Client(db_url, org_id="globex") as globex:
        assert globex.dead_letters.list() == []
        assert globex.side_effects.get(gone.id) is None
        with pytest.raises(DeadLetterNotFoundError):
            globex.dead_letters.retry([gone.id])
