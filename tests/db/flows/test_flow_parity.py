"""Python and SQL give identical shapes and identical difference lists (hypothesis)."""

import itertools

from hypothesis import HealthCheck, given, settings
from psycopg.types.json import Jsonb

from charter import compare_flow_shapes, extract_flow_shape
from charter.ops.flows import ensure_flow_compiled
from tests.flows_for_tests import flow_from_shape, shapes

PARITY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_names = (f"parity_{n}" for n in itertools.count())


@PARITY
@given(code=shapes(), database=shapes())
def test_python_and_sql_report_the_same_differences(conn, code, database):
    in_sql = conn.execute(
        "SELECT charter._compare_flow_shapes(%s, %s)", (Jsonb(code), Jsonb(database))
    ).fetchone()[0]
    assert in_sql == compare_flow_shapes(code, database).differences


@PARITY
@given(shape=shapes())
def test_the_shape_sql_stores_is_the_shape_python_extracts(conn, shape):
    flow = flow_from_shape(next(_names), shape)
    assert ensure_flow_compiled(conn, flow, "production").status == "compiled"
    stored = conn.execute("SELECT charter._get_flow_shape(%s)", (flow.slug,)).fetchone()[0]
    assert stored == extract_flow_shape(flow)
