"""With OpenTelemetry's API installed but no SDK set, spans would be discarded: charter makes
none and lets the database make the trace id, but a trace the caller propagated (a remote
span context, no SDK needed) is still the one a mutation records. Run in a fresh interpreter:
a process sets its tracer provider once, and other tests set the SDK's."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from charter import tracing

assert not tracing.enabled()
assert tracing.trace_id_for_call(None) is None  # the database makes one
assert tracing.trace_id_for_call("ab" * 16) == "ab" * 16
with tracing.span("charter.mutate", "ab" * 16, {}) as made:
    assert made is None
remote = SpanContext(trace_id=0xC0FFEE, span_id=7, is_remote=True,
                     trace_flags=TraceFlags(TraceFlags.SAMPLED))
with trace.use_span(NonRecordingSpan(remote)):
    assert tracing.trace_id_for_call(None) == format(0xC0FFEE, "032x")

from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
assert tracing.enabled()
made_id = tracing.trace_id_for_call(None)
assert made_id is not None and len(made_id) == 32
with tracing.span("charter.mutate", made_id, {}) as made:
    assert made is not None and made.is_recording()
print("ok")
"""


def test_no_sdk_means_no_spans_but_a_propagated_trace_is_kept():
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
