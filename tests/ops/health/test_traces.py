"""OpenTelemetry traces (charter[otel]), caught with the SDK's in-memory exporter: one trace
from mutate() through the engine's advance and each node to the webhook's delivery, on the
trace id the evidence records; a caller's own span is continued, not replaced."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests import runtime_definitions as defs
from tests.servers import Receiver

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the process's provider is set once
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _hex(span) -> str:
    return format(span.context.trace_id, "032x")


def test_one_trace_from_mutate_through_the_nodes_to_the_delivery(acme, engine, spans):
    receiver = Receiver()
    try:
        contract = defs.contract("notice", {"code": "string"})
        nodes = [
            ("send", "webhook_out", {"url": receiver.url + "/t", "payloadTemplate": {"c": "'x'"}}),
            ("sent", "script", {"expression": "true", "assignTo": "context.sent"}),
        ]
        acme.definitions.publish(contract)
        acme.definitions.publish(
            contract, defs.org_definition("notice", nodes, [("send", "sent", {})])
        )
        doc = acme.documents.create("notice", {"code": "T1"}, actor="sales")
        opened = acme.documents.transition(doc.id, "open", actor="sales")
        deadline = time.monotonic() + 20
        while acme.documents.wait(doc.id, timeout=20).state != "done":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        receiver.close()
    deadline = time.monotonic() + 5
    while not any(s.name == "charter.side_effect" for s in spans.get_finished_spans()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    finished = spans.get_finished_spans()
    mutations = [s for s in finished if s.name == "charter.mutate"]
    assert {s.attributes["charter.action"] for s in mutations} >= {"create", "open"}
    [open_span] = [s for s in mutations if s.attributes["charter.action"] == "open"]
    assert _hex(open_span) == opened.trace_id  # the id the evidence records
    advances = [s for s in finished if s.name == "charter.advance" and _hex(s) == opened.trace_id]
    assert advances and advances[0].attributes["charter.document"] == doc.id
    parent = advances[0].context.span_id
    children = [s for s in finished if s.parent is not None and s.parent.span_id == parent]
    assert any(s.attributes.get("charter.node") == "usr:slot:work:send" for s in children)
    [delivery] = [s for s in finished if s.name == "charter.side_effect"]
    assert _hex(delivery) in {_hex(s) for s in mutations}
    assert delivery.attributes["charter.result"] == "delivered"


def test_a_callers_span_is_continued_into_charter(acme, spans):
    contract = defs.contract("memo", {"code": "string"})
    acme.definitions.publish(contract)
    with trace.get_tracer("app").start_as_current_span("handle request") as outer:
        doc = acme.documents.create("memo", {"code": "C1"}, actor="sales")
    assert doc.trace_id == format(outer.get_span_context().trace_id, "032x")
    [mutate] = [s for s in spans.get_finished_spans() if s.name == "charter.mutate"]
    assert mutate.parent is not None and mutate.parent.span_id == outer.get_span_context().span_id
