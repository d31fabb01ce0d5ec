"""charter: durable, contracted workflows that live in PostgreSQL."""

from charter.canonical import canonical_hash, canonical_json
from charter.compiler.flows import compare_flow_shapes, compile_flow, extract_flow_shape
from charter.db.migrate import migrate
from charter.dsl.flow import Flow, Step
from charter.errors import CharterError

__all__ = [
    "CharterError",
    "Flow",
    "Step",
    "canonical_hash",
    "canonical_json",
    "compare_flow_shapes",
    "compile_flow",
    "extract_flow_shape",
    "migrate",
]
