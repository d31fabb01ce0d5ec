"""Statuses and failure kinds: one enumerated set each, the same in Python and SQL."""

import re
from importlib import resources

import pytest

from charter.vocabulary import ExecutionStatus, FailureKind, RunStatus, StepStatus, TaskStatus


@pytest.mark.parametrize(
    ("constraint", "enum"),
    [
        ("run_status_is_known", RunStatus),
        ("step_status_is_known", StepStatus),
        ("task_status_is_known", TaskStatus),
        ("execution_status_is_known", ExecutionStatus),
    ],
)
def test_each_status_check_in_sql_allows_exactly_the_python_values(conn, constraint, enum):
    definition = conn.execute(
        "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE n.nspname = 'charter' AND c.conname = %s LIMIT 1",
        (constraint,),
    ).fetchone()[0]
    assert set(re.findall(r"'(\w+)'::text", definition)) == {member.value for member in enum}


def test_every_failure_kind_sql_records_is_a_python_failure_kind():
    sql = resources.files("charter.db").joinpath("sql", "functions")
    kinds = set()
    for file in sql.iterdir():
        kinds |= set(re.findall(r"'type',\s*'(\w+)'", file.read_text("utf-8")))
    assert kinds  # LeaseExpired, MapSourceNotArray
    assert kinds <= {member.value for member in FailureKind}
