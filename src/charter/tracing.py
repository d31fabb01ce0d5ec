"""OpenTelemetry traces, with the optional extra ``charter[otel]``: a span for each
``mutate()`` (in the client), each document event the engine applies and each node that
event ran (in the worker, from the evidence), and each side-effect delivery — all on the
trace id charter records in the evidence (seed 002), so one business action is one trace
from the API call to the webhook. Without OpenTelemetry installed everything here is a no-op;
with the API but no tracer provider set (no SDK), the API would discard every span, so none
is made (a propagated trace id is still the one a mutation records)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

try:
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
except ImportError:  # the extra is not installed
    trace = None  # type: ignore[assignment]

_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def enabled() -> bool:
    """Whether spans are recorded: OpenTelemetry is installed and a tracer provider (an
    SDK's) is set. Until one is, the API's default provider discards every span, so charter
    makes none and reads no trace ids back for them."""
    if trace is None:
        return False
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def current_trace_id() -> str | None:
    """The active span's trace id (hex), to continue the caller's trace into charter."""
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


def trace_id_for_call(given: str | None) -> str | None:
    """The trace id a mutation records: the caller's, else the active span's (a propagated
    one counts without an SDK), else a new one when spans are recorded; otherwise the
    database makes one."""
    if given is not None or trace is None:
        return given
    return current_trace_id() or (secrets.token_hex(16) if enabled() else None)


def _parent(trace_id: str | None, parent: Any = None) -> Any:
    if trace is None or trace_id is None or not _HEX32.match(trace_id):
        return None
    if parent is not None:
        return trace.set_span_in_context(parent)
    current = trace.get_current_span().get_span_context()
    if current.is_valid and format(current.trace_id, "032x") == trace_id:
        return None  # the caller's own span is the parent
    remote = SpanContext(
        trace_id=int(trace_id, 16),
        span_id=int(secrets.token_hex(8), 16) or 1,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(remote))


@contextmanager
def span(name: str, trace_id: str | None, attributes: dict[str, Any]) -> Iterator[Any]:
    """A span around work happening now, on ``trace_id`` (not made current: it may end in
    another task than it began)."""
    if trace_id is None or not enabled() or not _HEX32.match(trace_id):
        yield None
        return
    started = trace.get_tracer("charter").start_span(
        name, context=_parent(trace_id), attributes=_clean(attributes)
    )
    try:
        yield started
    except BaseException as exc:
        started.record_exception(exc)
        raise
    finally:
        started.end()


def record(
    name: str,
    trace_id: str | None,
    start: datetime | None,
    end: datetime | None,
    attributes: dict[str, Any],
    parent: Any = None,
) -> Any:
    """A span for work that already happened (read back from the evidence)."""
    if trace_id is None or not enabled() or not _HEX32.match(trace_id):
        return None
    begin = start or end
    made = trace.get_tracer("charter").start_span(
        name,
        context=_parent(trace_id, parent),
        attributes=_clean(attributes),
        start_time=_ns(begin) if begin else None,
    )
    made.end(end_time=_ns(end) if end else None)
    return made


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if isinstance(v, str | int | float | bool)}
