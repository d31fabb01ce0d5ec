"""charter: durable, contracted workflows that live in PostgreSQL."""

from charter.actions import ActionContext, action
from charter.canonical import canonical_hash, canonical_json
from charter.client import AsyncClient, Client
from charter.compiler.flows import compare_flow_shapes, compile_flow, extract_flow_shape
from charter.db.migrate import migrate
from charter.dsl.flow import Flow, Step
from charter.engine.runs import Run, StepInfo
from charter.errors import CharterError
from charter.outcomes import NonRetryable
from charter.worker.context import Context

__all__ = [
    "ActionContext",
    "AsyncClient",
    "CharterError",
    "Client",
    "Context",
    "Flow",
    "NonRetryable",
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
]
