"""The value sets: one enumerated set each, the same in Python and SQL."""

import re
import typing
from enum import StrEnum
from importlib import resources

import pytest

from charter import vocabulary
from charter.dsl import slots
from charter.vocabulary import (
    ApprovalDecision,
    ApprovalRule,
    ApprovalStatus,
    AuditVia,
    DecisionVerb,
    DefinitionKind,
    DefinitionStatus,
    EventStatus,
    EventType,
    ExecutionStatus,
    FailureKind,
    InstanceStatus,
    MigrationKind,
    NodeType,
    OutboxSource,
    RunStatus,
    ScheduleMissed,
    SideEffectChannel,
    SideEffectKind,
    SideEffectStatus,
    StepStatus,
    StepType,
    TaskStatus,
    VersionOperation,
    WaitKind,
)

# Each CHECK (on a table, or on a domain) that names a set of values, with its enum.
SETS: dict[str, type[StrEnum]] = {
    "run_status_is_known": RunStatus,
    "step_status_is_known": StepStatus,
    "task_status_is_known": TaskStatus,
    "execution_status_is_known": ExecutionStatus,
    "instance_status_is_known": InstanceStatus,
    "wait_kind_is_known": WaitKind,
    "approval_status_is_known": ApprovalStatus,
    "approval_decision_rule_is_known": ApprovalRule,
    "approval_decision_is_known": ApprovalDecision,
    "side_effect_kind_is_known": SideEffectKind,
    "effect_type_is_known": SideEffectChannel,
    "effect_status_is_known": SideEffectStatus,
    "event_type_is_known": EventType,
    "event_status_is_known": EventStatus,
    "audit_via_is_known": AuditVia,
    "outbox_source_is_known": OutboxSource,
    "definition_kind_is_known": DefinitionKind,
    "definition_status_is_known": DefinitionStatus,
    "operation_is_known": VersionOperation,
    "step_type_is_known": StepType,
    "schedule_missed_is_known": ScheduleMissed,
    "kind_is_known": MigrationKind,
}


def _value_sets(conn) -> dict[str, set[str]]:
    """Every charter CHECK whose text lists quoted values, table and domain alike."""
    rows = conn.execute(
        "SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE n.nspname = 'charter' AND c.contype = 'c'"
    ).fetchall()
    sets: dict[str, set[str]] = {}
    for name, definition in rows:
        # ``IN (…)`` becomes ``= ANY (ARRAY['a'::text, …])`` in the catalogue's text.
        if "ARRAY[" not in definition:
            continue
        values = set(re.findall(r"'(\w+)'::text", definition))
        assert sets.get(name, values) == values, f"{name} differs between two tables"
        sets[name] = values
    return sets


@pytest.mark.parametrize(("constraint", "enum"), SETS.items(), ids=list(SETS))
def test_each_value_check_in_sql_allows_exactly_the_python_values(conn, constraint, enum):
    sets = _value_sets(conn)
    assert constraint in sets, f"no CHECK {constraint} lists values in the migrated schema"
    assert sets[constraint] == {member.value for member in enum}


def test_every_value_set_sql_checks_has_its_enum(conn):
    """A new CHECK listing values needs its StrEnum in charter.vocabulary (and in SETS)."""
    sets = _value_sets(conn)
    # Not vocabularies: a subset of a status, tied to another column.
    subsets = {"finished_instances_have_completed_at", "waiting_tasks_have_available_at"}
    missing = {name for name in sets if name not in SETS and name not in subsets}
    assert not missing, f"CHECKs without a StrEnum in charter.vocabulary: {sorted(missing)}"


def test_every_enum_in_vocabulary_is_checked():
    enums = {
        obj
        for obj in vars(vocabulary).values()
        if isinstance(obj, type) and issubclass(obj, StrEnum) and obj is not StrEnum
    }
    # Not stored in a CHECKed column: a failure kind is error.type, a verb is what a person
    # says, a node type is checked by the compiler (below), a notification channel is jsonb.
    unchecked = {FailureKind, DecisionVerb, NodeType, vocabulary.NotificationChannel}
    assert enums - unchecked == set(SETS.values())


def test_the_definition_language_takes_every_node_type_but_the_compilers_own():
    written = set(typing.get_args(slots.NodeType))
    assert written == {member.value for member in NodeType} - {"slot_entry", "slot_exit"}
    assert set(slots.USER_NODE_TYPES) == {
        member.value for member in NodeType if member not in vocabulary.RESERVED_NODE_TYPES
    }


def test_node_types_sql_branches_on_are_node_types():
    sql = resources.files("charter.db").joinpath("sql", "functions")
    named = set()
    for file in sql.iterdir():
        for listing in re.findall(r"v_type IN \(([^)]*)\)", file.read_text("utf-8")):
            named |= set(re.findall(r"'(\w+)'", listing))
    assert named  # lifecycle_gate, wait_timer, …
    assert named <= {member.value for member in NodeType}


def test_each_verb_records_its_decision():
    assert [verb.decision for verb in DecisionVerb] == list(ApprovalDecision)


def test_every_failure_kind_sql_records_is_a_python_failure_kind():
    sql = resources.files("charter.db").joinpath("sql", "functions")
    kinds = set()
    for file in sql.iterdir():
        kinds |= set(re.findall(r"'type',\s*'(\w+)'", file.read_text("utf-8")))
    assert kinds  # LeaseExpired, MapSourceNotArray
    assert kinds <= {member.value for member in FailureKind}
