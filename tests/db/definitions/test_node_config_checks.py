"""A node's configuration is checked in PostgreSQL at publish, against the JSON Schema
charter.compiler.node_schemas declares for its type (charter._node_config_problem): a
charter_app connection cannot publish a configuration the compiler would refuse."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from charter.compiler.compiled import compiled_hash
from charter.compiler.node_schemas import node_schema
from charter.compiler.nodes import compile_node_config
from charter.errors import CharterError
from tests.compiler.test_envelopes import NODE_CASES
from tests.db.definitions.test_effective_checks import ARTIFACTS, _publish, app  # noqa: F401 (the fixture)

USER_NODES = [
    (entity_type, org, artifact, node_id)
    for entity_type, org, artifact in ARTIFACTS
    for node_id, node in sorted(artifact["nodes"].items())
    if node_id.startswith("usr:") and node["type"] != "parallel_split"
]


def _problem(conn: Any, node_type: str, config: Any) -> str | None:
    return conn.execute(
        "SELECT charter._node_config_problem(%s, %s::jsonb)", (node_type, json.dumps(config))
    ).fetchone()[0]


def test_every_compiled_configuration_passes_the_sql_check(conn):
    checked = set()
    for _, _, artifact in ARTIFACTS:
        for node_id, node in artifact["nodes"].items():
            if node_id.startswith("usr:"):
                assert _problem(conn, node["type"], node["config"]) is None, (node_id, node)
                checked.add(node["type"])
    schema = {
        "entity": {"grand_total": "number", "vendor_id": "string", "customer_email": "string"}
    }
    for node_type, config, error in NODE_CASES:
        if error is None:
            compiled = compile_node_config("usr:s:n", node_type, config, schema)
            assert _problem(conn, node_type, compiled) is None, (node_type, compiled)
            checked.add(node_type)
    assert checked >= {"action", "approval", "condition", "script", "wait_timer", "wait_event",
                       "webhook_out", "notification", "parallel_join", "rule"}  # fmt: skip


def _form(node_type: str, config: dict[str, Any]) -> dict[str, Any]:
    """The compiled schema's form that the configuration has (an approval's by its mode)."""
    schema = node_schema(node_type, compiled=True)
    for form in schema.get("oneOf", [schema]):
        if "properties" not in form:  # wait_timer: one of duration, until
            return schema
        mode = form["properties"].get("mode", {}).get("enum")
        if mode is None or config.get("mode") in mode:
            return form
    raise AssertionError(node_type)


WRONG = {"string": 5, "object": "x", "array": {"a": 1}}


def mutate(config: dict[str, Any], node_type: str, data: st.DataObject) -> str | None:
    """Makes the configuration one the compiler refuses; the setting it names, or None."""
    form = _form(node_type, config)
    properties = form.get("properties", {})
    how = data.draw(st.sampled_from(["unknown", "wrong_type", "bad_enum", "missing"]))
    event(how)
    if how == "unknown":
        key = data.draw(st.sampled_from(["note", "retries", "Mode", "payload"]))
        if key in properties:
            return None
        config[key] = data.draw(st.sampled_from([1, "x", None, [], {}]))
        return key
    if how == "wrong_type":
        keys = sorted(k for k in config if k in properties and "type" in properties[k])
        if not keys:
            return None
        key = data.draw(st.sampled_from(keys))
        config[key] = WRONG[properties[key]["type"]]
        return key
    if how == "bad_enum":
        keys = sorted(k for k in config if "enum" in properties.get(k, {}))
        if not keys:
            return None
        key = data.draw(st.sampled_from(keys))
        config[key] = data.draw(
            st.sampled_from(["quorum", "first", "pigeon", "GET", "", "ALL"]).filter(
                lambda v: v not in properties[key]["enum"]
            )
        )
        return key
    required = [k for k in form.get("required", []) if k in config]
    if not required:
        keys = [k for k in ("duration", "until") if k in config]  # a timer's one of the two
        if not keys:
            return None
        required = keys
    key = data.draw(st.sampled_from(required))
    del config[key]
    return key


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_configuration_the_compiler_would_refuse_cannot_be_published(app, data):  # noqa: F811
    entity_type, org, artifact, node_id = data.draw(st.sampled_from(USER_NODES), label="node")
    mutant = copy.deepcopy(artifact)
    node = mutant["nodes"][node_id]
    key = mutate(node["config"], node["type"], data)
    if key is None:
        return
    mutant["hash"] = compiled_hash(mutant)
    with pytest.raises(CharterError) as caught:
        _publish(app, entity_type, org, mutant)
    assert caught.value.code == "NODE_CONFIG_INVALID", caught.value.message
    assert node_id in caught.value.message and key in caught.value.message, caught.value.message


def test_the_refusal_names_the_node_and_the_setting(app):  # noqa: F811
    entity_type, org, artifact, node_id = next(
        n for n in USER_NODES if n[2]["nodes"][n[3]]["type"] == "approval"
    )
    mutant = copy.deepcopy(artifact)
    mutant["nodes"][node_id]["config"]["decision"] = "most"
    mutant["hash"] = compiled_hash(mutant)
    with pytest.raises(CharterError) as caught:
        _publish(app, entity_type, org, mutant)
    assert caught.value.code == "NODE_CONFIG_INVALID"
    assert f"node {node_id}: " in caught.value.message
    assert 'decision="most" is not one of any, all' in caught.value.message
