"""Python and SQL evaluate every expression the same way (hypothesis)."""

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from charter.db.sqlstate import charter_errors
from charter.errors import ExpressionError
from charter.expr import compile_expression, evaluate

FIELDS = ["a", "b", "c"]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.decimals(-100, 100, places=2, allow_nan=False).map(float)
    | st.sampled_from(["", "x", "abc", "b", "ß", "Zoë", "10"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3)
    ),
    max_leaves=6,
)
variables = st.fixed_dictionaries(
    {
        "entity": st.dictionaries(st.sampled_from(FIELDS), values, max_size=3),
        "actor": st.dictionaries(st.sampled_from(FIELDS), values, max_size=2),
        "now": st.sampled_from(["2026-01-01T00:00:00+00:00", "2027-06-30T12:00:00+00:00"]),
    }
)


def _literal(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, float):
        return repr(value)
    return str(value)


operands = (
    st.sampled_from(
        [f"{root}.{f}" for root in ("entity", "actor") for f in FIELDS]
        + ["entity.a.b", "actor.c.a", "org.x", "now"]
    )
    | scalars.map(_literal)
    | st.lists(scalars.map(_literal), max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
)
comparators = st.sampled_from(["==", "!=", ">", ">=", "<", "<=", "in", "contains"])


@st.composite
def expressions(draw, depth=0):
    kind = draw(
        st.sampled_from(
            ["compare", "compare", "and", "or", "not", "operand"]
            if depth < 3
            else ["compare", "operand"]
        )
    )
    if kind == "operand":
        return draw(operands)
    if kind == "compare":
        return f"{draw(operands)} {draw(comparators)} {draw(operands)}"
    if kind == "not":
        return f"!({draw(expressions(depth + 1))})"
    op = "&&" if kind == "and" else "||"
    return f"({draw(expressions(depth + 1))}) {op} ({draw(expressions(depth + 1))})"


def _normal(value):
    """Numbers by value, so 1 and 1.0 (and SQL's numerics) compare equal."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float | Decimal):
        return ("number", Decimal(str(value)).normalize())
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return {k: _normal(v) for k, v in value.items()}


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(source=expressions(), env=variables)
def test_python_and_sql_agree(conn, source, env):
    try:
        compiled = compile_expression(source)
    except ExpressionError:
        return  # type errors are found at compile time; nothing to evaluate
    in_python = evaluate(compiled, env)
    in_sql = conn.execute(
        "SELECT charter.eval_expr(%s, %s)", (Jsonb(compiled), Jsonb(env))
    ).fetchone()[0]
    assert _normal(in_sql) == _normal(in_python), source


def test_sql_refuses_what_is_not_an_expression(conn):
    with pytest.raises(ExpressionError, match="Not an expression node"), charter_errors():
        conn.execute("SELECT charter.eval_expr('{\"type\": \"call\"}', '{}')")


def test_sql_fills_now_when_the_variables_do_not(conn):
    compiled = compile_expression("now > '2026-01-01'")
    audit = conn.execute("SELECT charter.eval_expr(%s, '{}')", (Jsonb(compiled),)).fetchone()[0]
    assert audit == {"expression": "now > '2026-01-01'", "variables": {}, "result": True}
