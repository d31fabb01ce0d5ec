"""WF-16 under load: 10,000 arrivals at joins, delivered by four workers at once, fire each
join exactly once — an ALL join after every path arrived, an ANY join on its first arrival
with the other paths cancelled."""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest

from charter import Client
from tests import runtime_definitions as defs
from tests.workers import running_worker

pytestmark = pytest.mark.slow

PATHS = 10
DOCUMENTS = 500  # x 2 joins x 10 paths = 10,000 arrivals


def _contract():
    return defs.contract("fanout", {"n": "string"})


def _org():
    slot = "slot:work"

    def node(local, kind, **config):
        return {"id": f"usr:{slot}:{local}", "type": kind, "config": config}

    def edge(source, target):
        return {
            "id": f"{source}->{target}",
            "sourceNodeId": f"usr:{slot}:{source}",
            "targetNodeId": f"usr:{slot}:{target}",
        }

    nodes = [
        node("split_all", "parallel_split"),
        node("all", "parallel_join", mode="all"),
        node("split_any", "parallel_split"),
        node("any", "parallel_join", mode="any"),
    ]
    edges = [edge("all", "split_any")]
    for i in range(PATHS):
        nodes.append(node(f"a{i}", "wait_event", eventKey="a:{entity.n}"))
        nodes.append(node(f"b{i}", "wait_event", eventKey="b:{entity.n}"))
        edges += [edge("split_all", f"a{i}"), edge(f"a{i}", "all")]
        edges += [edge("split_any", f"b{i}"), edge(f"b{i}", "any")]
    return {
        "baseRef": {"entityType": "fanout", "envelopeVersion": 1},
        "slots": {slot: {"nodes": nodes, "edges": edges}},
    }


def _settle(client, ids, timeout=120):
    deadline = time.monotonic() + timeout
    for doc_id in ids:
        client.documents.wait(doc_id, timeout=max(1, deadline - time.monotonic()))


def test_each_join_fires_exactly_once_under_concurrent_arrivals(db_url, sql):
    with Client(db_url, org_id="acme") as client, ExitStack() as workers:
        client.definitions.publish(_contract())
        client.definitions.publish(_contract(), _org())
        client.directory.put_user("u", roles=[])
        for _ in range(4):
            workers.enter_context(running_worker(db_url, poll_interval=0.05))
        ids = []
        for i in range(DOCUMENTS):
            doc = client.documents.create("fanout", {"n": str(i)}, actor="u")
            client.documents.transition(doc.id, "open", actor="u")
            ids.append(doc.id)
        _settle(client, ids)
        for i in range(DOCUMENTS):
            assert client.events.send(f"a:{i}").matched == PATHS
        _settle(client, ids)
        for i in range(DOCUMENTS):
            assert client.events.send(f"b:{i}").matched == PATHS
        _settle(client, ids)
        states = {client.documents.get(doc_id).state for doc_id in ids}
        assert states == {"done"}
    fired = dict(
        sql(
            "SELECT step_slug, count(*) FROM charter.step_executions WHERE status = 'completed' "
            "AND step_slug IN ('usr:slot:work:all', 'usr:slot:work:any') GROUP BY 1"
        )
    )
    assert fired == {"usr:slot:work:all": DOCUMENTS, "usr:slot:work:any": DOCUMENTS}
    outcomes = dict(
        sql(
            "SELECT status, count(*) FROM charter.step_executions "
            "WHERE step_slug ~ '^usr:slot:work:b[0-9]+$' GROUP BY 1"
        )
    )
    assert outcomes == {"completed": DOCUMENTS, "cancelled": DOCUMENTS * (PATHS - 1)}
    [(a_done,)] = sql(
        "SELECT count(*) FROM charter.step_executions WHERE status = 'completed' "
        "AND step_slug ~ '^usr:slot:work:a[0-9]+$'"
    )
    assert a_done == DOCUMENTS * PATHS
