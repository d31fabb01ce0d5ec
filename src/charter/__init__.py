"""charter: durable, contracted workflows that live in PostgreSQL."""

from charter.actions import ActionContext, action
from charter.canonical import canonical_hash, canonical_json
from charter.client import AsyncClient, Client
from charter.compiler.flows import compare_flow_shapes, compile_flow, extract_flow_shape
from charter.db.migrate import migrate
from charter.dsl.flow import Flow, Step
from charter.dsl.waits import timed_out
from charter.engine.runs import Run, StepInfo
from charter.errors import CharterError
from charter.outcomes import NonRetryable, Reschedule
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
