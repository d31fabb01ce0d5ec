"""Node configurations declared once (charter.compiler.node_schemas): the JSON Schemas it
exports, and the generated SQL that PostgreSQL checks at publish, kept in step with it."""

from __future__ import annotations

import json

import pytest

from charter.compiler.node_schemas import (
    DURATION,
    HEADER_NAME,
    NODE_TYPES,
    SQL_FILE,
    json_schema,
    matches,
    node_schema,
    sql,
)
from charter.dsl.slots import USER_NODE_TYPES


def test_the_checked_in_sql_is_generated_from_the_declarations():
    assert SQL_FILE.read_text() == sql(), (
        "functions/0594_node_config_schemas.sql is stale: run python tools/gen_node_schema_sql.py"
    )


def test_every_user_node_type_has_a_schema_as_written_and_as_compiled():
    assert set(json_schema()) == set(USER_NODE_TYPES) == set(NODE_TYPES)
    for compiled in (False, True):
        for node_type, schema in json_schema(compiled=compiled).items():
            assert json.loads(json.dumps(schema)) == schema
            assert schema["type"] == "object" and schema["title"].startswith(node_type)


def test_the_written_schema_is_for_forms_and_the_compiled_one_is_what_is_stored():
    written, compiled = node_schema("action"), node_schema("action", compiled=True)
    assert written["required"] == ["actionType"]
    assert written["properties"]["runAs"] == {
        "type": "string",
        "enum": ["actor", "system", "service_account"],
        "default": "actor",
    }
    assert written["properties"]["payloadTemplate"]["additionalProperties"]["type"] == "string"
    # Compiled: defaults filled in, expressions {"expression", "ast"} objects.
    assert compiled["required"] == ["actionType", "payloadTemplate", "runAs"]
    expression = compiled["properties"]["payloadTemplate"]["additionalProperties"]
    assert expression["required"] == ["expression", "ast"]
    assert set(expression["properties"]) == {"expression", "ast"}
    assert node_schema("condition", compiled=True)["properties"]["expression"] == expression
    assert node_schema("parallel_split") == {
        "title": "parallel_split node configuration",
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_variants_and_exclusive_settings_are_one_of_their_forms():
    approval = node_schema("approval")
    inline, chain = approval["oneOf"]
    assert inline["properties"]["mode"]["enum"] == ["inline"]
    assert inline["required"] == ["approvers"]  # mode may be left out for inline
    assert chain["required"] == ["mode", "chainId"]
    assert "approvers" not in chain["properties"]
    compiled_inline, _ = node_schema("approval", compiled=True)["oneOf"]
    assert compiled_inline["required"] == ["mode", "approvers", "decision"]
    assert node_schema("wait_timer")["oneOf"] == [
        {"required": ["duration"]},
        {"required": ["until"]},
    ]


@pytest.mark.parametrize(
    ("value", "ok"),
    [("PT24H", True), ("P3D", True), ("PT90M", True), ("P1Y2M", True), ("PT0S", False),
     ("P", False), ("PT", False), ("24h", False), ("PT24H\n", False), ("P1DT", False)],
)  # fmt: skip
def test_patterns_read_alike_in_python_and_postgresql(value, ok):
    assert matches(DURATION, value) is ok


@pytest.mark.parametrize(
    ("name", "ok"),
    [("X-Source", True), ("Authorization", True), ("Content-Type", False), ("HOST", False),
     ("x-Charter-Sig", False), ("Hostname", True), ("content-types", True)],
)  # fmt: skip
def test_charter_sets_its_own_headers(name, ok):
    assert matches(HEADER_NAME, name) is ok
