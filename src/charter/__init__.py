"""charter: durable, contracted workflows that live in PostgreSQL."""

from charter.canonical import canonical_hash, canonical_json
from charter.client.client import AsyncClient, Client
from charter.compiler.flows import compare_flow_shapes, compile_flow, extract_flow_shape
from charter.db.migrate import migrate
from charter.dsl.actions import ActionContext, action
from charter.dsl.flow import Flow, Step
from charter.dsl.outcomes import NonRetryable, Reschedule
from charter.dsl.waits import timed_out
from charter.errors import CharterError
from charter.ops.run_model import Run, StepInfo
from charter.worker.context import ChildRun, Context

__all__ = [
    "ActionContext",
    "AsyncClient",
    "CharterError",
    "ChildRun",
    "Client",
    "Context",
    "Flow",
    "NonRetryable",
    "Reschedule",
    "Run",
    "Step",
    "StepInfo",
    "action",
    "canonical_hash",
    "canonical_json",
    "compare_flow_shapes",
    "compile_flow",
    "extract_flow_shape",
    "migrate",
    "timed_out",
]
