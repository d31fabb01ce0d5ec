"""Entity contracts, their envelopes, slot patches and compile_effective (seed 002)."""

import copy
import json
import random

import pytest

from charter.compiler.compiled import CompiledWorkflowError, verify_compiled
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.compiler.mermaid import to_mermaid
from charter.dsl.contract import EntityContract
from charter.errors import ContractError, ContractPolicyMissingError
from charter.library.templates import TEMPLATES

SLOT = "slot:submitted_to_approved"


def contract_json():
    return copy.deepcopy(TEMPLATES["invoice_approval"].contract)


def org_json():
    return copy.deepcopy(TEMPLATES["invoice_approval"].org)


def envelope():
    return generate_envelope(EntityContract.from_json(contract_json()))


def _code(call):
    with pytest.raises(ContractError) as caught:
        call()
    return caught.value.code, caught.value.message


# -- contracts ---------------------------------------------------------------------------


def test_a_contract_reads_and_writes_exactly_its_json_form():
    data = contract_json()
    assert EntityContract.from_json(data).to_json() == data


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (
            lambda c: c["transitions"].append({"from": "draft", "to": "nowhere", "gate": "x"}),
            "'nowhere' is not a declared state",
        ),
        (
            lambda c: c["states"].append({"id": "draft", "editWindow": "editable"}),
            "state 'draft' is declared twice",
        ),
        (lambda c: c["states"][0].update(editWindow="open"), "editWindow"),
        (lambda c: c["slots"][0].update(slotId="draft_to_submit"), "slot ids look like"),
        (lambda c: c.update(colour="red"), "colour"),
        (lambda c: c.update(version=0), "version"),
        (lambda c: c["transitions"].append(dict(c["transitions"][0])), "declared twice"),
    ],
)
def test_invalid_contracts_are_refused_naming_the_problem(change, fragment):
    data = contract_json()
    change(data)
    code, message = _code(lambda: EntityContract.from_json(data))
    assert code == "CONTRACT_INVALID" and fragment in message


def _gates_and_actions(policies):
    data = contract_json()
    data["actions"] = [{"actionType": "invoice.post", "fields": ["vendor_id"]}]
    data["policies"] = policies
    return data


@pytest.mark.parametrize(
    ("policies", "named"),
    [
        (
            None,
            ["the gates 'submit', 'approve', 'amend', 'cancel' and the action 'invoice.post'"],
        ),
        ({"create": {"roles": ["clerk"]}, "update": {"roles": ["clerk"]}}, ["'submit'"]),
        (
            {g: {"roles": ["clerk"]} for g in ("submit", "approve", "amend", "cancel")},
            ["for the action 'invoice.post':"],
        ),
        ({"invoice.post": {"roles": ["clerk"]}, "submit": {"roles": ["clerk"]}}, ["gates 'app"]),
    ],
)
def test_a_gate_or_action_without_a_policy_is_refused_naming_each(policies, named):
    """Closed by default: publish refuses a contract that leaves a gate or a declared action
    to no policy (it would be open to every actor), naming each and the fix."""
    data = _gates_and_actions(policies)
    with pytest.raises(ContractPolicyMissingError) as caught:
        EntityContract.from_json(data)
    assert caught.value.code == "CONTRACT_POLICY_MISSING"
    assert isinstance(caught.value, ContractError)
    for name in named:
        assert name in caught.value.message
    assert '"*"' in caught.value.message and '"policies"' in caught.value.message
    if policies:
        assert "'create'" not in caught.value.message  # create and update are no gates


@pytest.mark.parametrize(
    "policies",
    [
        {"*": {"roles": ["clerk"]}},
        {"*": {"rule": "true"}, "approve": {"roles": ["finance_manager"]}},
        {
            **{g: {"roles": ["clerk"]} for g in ("submit", "approve", "amend", "cancel")},
            "invoice.post": {"rule": "actor.roles contains 'accountant'"},
        },
    ],
)
def test_a_policy_for_each_gate_and_action_or_a_default_is_enough(policies):
    contract = EntityContract.from_json(_gates_and_actions(policies))
    assert contract.ungranted() == []
    assert contract.to_json()["policies"] == policies


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ("entity.grand_total", "it is a number"),
        ("actor", "it is an object"),
        ("'clerk'", "it is a string"),
    ],
)
def test_a_policy_rule_must_be_able_to_be_true_or_false(rule, fragment):
    data = _gates_and_actions({"*": {"rule": rule}})
    code, message = _code(lambda: EntityContract.from_json(data))
    assert code == "CONTRACT_INVALID" and "policies.*.rule" in message and fragment in message


def test_an_unknown_policy_key_names_the_default_among_the_known():
    code, message = _code(lambda: EntityContract.from_json(_gates_and_actions({"**": {}})))
    assert code == "CONTRACT_INVALID" and "'**'" in message and "*," in message


# -- envelopes ---------------------------------------------------------------------------


def test_the_envelope_has_stable_system_ids_edges_loops_and_slots():
    env = envelope()
    ids = [n["id"] for n in env["nodes"]]
    assert ids == sorted(ids)
    assert {
        "sys:start",
        "sys:end",
        "sys:state:draft",
        "sys:gate:submit",
        "sys:gate:approve",
        "sys:state:active",
    } <= set(ids)
    edges = {e["id"]: e for e in env["edges"]}
    assert "sys:start->sys:state:draft" in edges
    assert edges["sys:gate:approve->sys:state:active"]["label"] == "approved"
    assert edges["sys:gate:approve->sys:state:draft"] == {
        "id": "sys:gate:approve->sys:state:draft",
        "sourceNodeId": "sys:gate:approve",
        "targetNodeId": "sys:state:draft",
        "priority": 0,
        "label": "reject",
        "loop": True,
    }
    assert edges["sys:state:amended->sys:gate:submit"]["loop"] is True
    assert sorted(e["id"] for e in env["edges"] if e["targetNodeId"] == "sys:end") == [
        "sys:state:active->sys:end",
        "sys:state:cancelled->sys:end",
    ]
    assert [s["slotId"] for s in env["slots"]] == sorted(s["slotId"] for s in env["slots"])


def test_edit_windows_come_from_states_and_gates_are_at_least_amend_only():
    windows = envelope()["editWindows"]
    assert windows["sys:state:draft"] == "editable"
    assert windows["sys:gate:submit"] == "amend_only"  # leaves draft: amend_only at least
    assert windows["sys:gate:approve"] == "amend_only"
    assert windows["sys:gate:amend"] == "locked"  # leaves active, which is locked
    assert (windows["sys:start"], windows["sys:end"]) == ("editable", "locked")


def test_envelope_rules():
    data = contract_json()
    data["slots"].append(
        {
            "slotId": "slot:nowhere",
            "entryNodeId": "sys:state:draft",
            "exitNodeId": "sys:state:active",
            "defaultEditWindow": "editable",
        }
    )
    code, message = _code(lambda: generate_envelope(EntityContract.from_json(data)))
    assert code == "ENVELOPE_SLOT_INVALID" and "no direct edge" in message
    endless = {
        "entityType": "loop",
        "version": 1,
        "states": [{"id": "a", "editWindow": "editable"}, {"id": "b", "editWindow": "editable"}],
        "transitions": [
            {"from": "a", "to": "b", "gate": "go"},
            {"from": "b", "to": "a", "gate": "back"},
        ],
        "policies": {"*": {"roles": ["clerk"]}},
    }
    code, _ = _code(lambda: generate_envelope(EntityContract.from_json(endless)))
    assert code == "ENVELOPE_NO_END"


# -- compile_effective: the merge --------------------------------------------------------


def test_the_merge_attaches_the_slot_and_replaces_the_direct_edge():
    compiled = compile_effective(envelope(), org_json())
    edges = compiled["edgesById"]
    assert "sys:state:submitted->sys:gate:approve" not in edges
    slot_in, slot_out = f"sys:slot:{SLOT}:in", f"sys:slot:{SLOT}:out"
    assert edges[f"sys:state:submitted->{slot_in}"]["provenance"] == SLOT
    assert f"{slot_in}->usr:{SLOT}:threshold" in edges
    assert f"{slot_out}->sys:gate:approve" in edges
    assert edges["high_value"]["condition"]["ast"]["op"] == ">"
    assert edges["high_value"]["provenance"] == SLOT
    assert edges["sys:start->sys:state:draft"]["provenance"] == "envelope"
    assert compiled["slotMap"][f"usr:{SLOT}:split"] == SLOT
    assert compiled["slotMap"]["sys:state:draft"] == "envelope"
    assert compiled["joinRequirements"][f"usr:{SLOT}:both_approved"] == {
        "requiredTokenCount": 2,
        "mode": "all",
        "split": f"usr:{SLOT}:split",  # configured from its split
    }
    assert compiled["joinRequirements"][slot_out] == {"requiredTokenCount": 2, "mode": "all"}
    assert f"usr:{SLOT}:threshold" in compiled["stableRegionNodes"]
    assert "sys:state:submitted" in compiled["stableRegionNodes"]
    assert compiled["editWindows"][f"usr:{SLOT}:split"] == "amend_only"
    assert compiled["systemGateIntegrity"]["valid"] is True
    assert compiled["compilerVersion"] and compiled["kind"] == "effective"
    order = compiled["topologicalOrder"]
    assert (
        order.index("sys:state:submitted") < order.index(slot_in) < order.index("sys:gate:approve")
    )
    verify_compiled(compiled)


def test_expressions_in_nodes_are_compiled_and_checked_against_declared_fields():
    compiled = compile_effective(envelope(), org_json())
    condition = compiled["nodes"][f"usr:{SLOT}:threshold"]["config"]["expression"]
    assert condition["ast"]["args"][0] == {"type": "var", "path": "entity.grand_total"}
    org = org_json()
    org["slots"][SLOT]["nodes"][0]["config"]["expression"] = "entity.grand_totl > 1"
    code, message = _code(lambda: compile_effective(envelope(), org))
    assert code == "NODE_CONFIG_INVALID" and "entity.grand_totl is not a declared field" in message


def test_wf12_compiling_twice_gives_the_same_hash():
    assert (
        compile_effective(envelope(), org_json())["hash"]
        == compile_effective(envelope(), org_json())["hash"]
    )


def test_wf12_wf13_shuffled_input_gives_the_same_hash_and_order():
    reference = compile_effective(envelope(), org_json())
    rng = random.Random(7)
    for _ in range(5):
        contract, org = contract_json(), org_json()
        initial, *rest = contract["states"]
        rng.shuffle(rest)
        contract["states"] = [initial, *rest]
        rng.shuffle(contract["transitions"])
        rng.shuffle(contract["slots"])
        rng.shuffle(org["slots"][SLOT]["nodes"])
        rng.shuffle(org["slots"][SLOT]["edges"])
        shuffled = compile_effective(generate_envelope(EntityContract.from_json(contract)), org)
        assert shuffled["hash"] == reference["hash"]
        assert shuffled["topologicalOrder"] == reference["topologicalOrder"]


def test_wf08_a_missing_system_node_fails_compilation():
    env = envelope()
    env["nodes"] = [n for n in env["nodes"] if n["id"] != "sys:gate:approve"]
    code, message = _code(lambda: compile_effective(env, org_json()))
    assert code == "WORKFLOW_SYSTEM_INTEGRITY" and "sys:gate:approve" in message
    env = envelope()
    env["nodes"] = [n for n in env["nodes"] if n["id"] != "sys:gate:cancel"]
    env["edges"] = [e for e in env["edges"] if "sys:gate:cancel" not in e["id"]]
    code, message = _code(lambda: compile_effective(env))
    assert (
        code == "WORKFLOW_SYSTEM_INTEGRITY" and "missing system node(s) sys:gate:cancel" in message
    )


def test_wf08_reordered_system_nodes_fail_compilation():
    env = envelope()
    for edge in env["edges"]:  # approve before submit: draft -> approve -> submitted
        if edge["id"] == "sys:state:draft->sys:gate:submit":
            edge.update(id="sys:state:draft->sys:gate:approve", targetNodeId="sys:gate:approve")
    code, message = _code(lambda: compile_effective(env))
    assert code == "WORKFLOW_SYSTEM_INTEGRITY"
    assert "system edge sys:state:draft -> sys:gate:submit is missing" in message


def test_wf08_an_altered_system_node_fails_compilation():
    env = envelope()
    for node in env["nodes"]:
        if node["id"] == "sys:gate:submit":
            node["type"] = "policy_gate"
    code, message = _code(lambda: compile_effective(env))
    assert code == "WORKFLOW_SYSTEM_INTEGRITY" and "sys:gate:submit was altered" in message


def _patched(**changes):
    org = org_json()
    org["slots"][SLOT].update(changes)
    return org


@pytest.mark.parametrize(
    ("mutate", "code", "fragment"),
    [
        (
            lambda o: o["slots"][SLOT]["edges"].append(
                {
                    "id": "sneak",
                    "sourceNodeId": f"usr:{SLOT}:standard",
                    "targetNodeId": "sys:state:active",
                }
            ),
            "SLOT_EDGE_OUT_OF_SCOPE",
            "sys:state:active is not a node of this slot",
        ),
        (
            lambda o: o["slots"][SLOT]["edges"].append(
                {
                    "id": "cross",
                    "sourceNodeId": f"usr:{SLOT}:standard",
                    "targetNodeId": "usr:slot:draft_to_submit:x",
                }
            ),
            "SLOT_EDGE_OUT_OF_SCOPE",
            "not a node of this slot",
        ),
        (
            lambda o: o["slots"][SLOT]["nodes"].append(
                {
                    "id": "usr:slot:draft_to_submit:stray",
                    "type": "script",
                    "config": {"expression": "true"},
                }
            ),
            "SLOT_NODE_ID_INVALID",
            f"usr:{SLOT}:<id>",
        ),
        (
            lambda o: o["slots"][SLOT]["nodes"].append(
                {"id": "sys:gate:extra", "type": "lifecycle_gate"}
            ),
            "SLOT_NODE_ID_INVALID",
            "namespace",
        ),
        (
            lambda o: o["slots"][SLOT]["nodes"].append(
                {"id": f"usr:{SLOT}:gate", "type": "lifecycle_gate"}
            ),
            "SLOT_NODE_TYPE_RESERVED",
            "only the system envelope may use",
        ),
        (
            lambda o: o["slots"][SLOT].update(editWindowOverride="editable"),
            "SLOT_EDIT_WINDOW_LOOSER",
            "may only be stricter",
        ),
        (
            lambda o: o["slots"].update({"slot:made_up": o["slots"][SLOT]}),
            "SLOT_UNKNOWN",
            "not a slot of the invoice envelope",
        ),
        (
            lambda o: o["baseRef"].update(envelopeVersion=2),
            "ENVELOPE_VERSION_MISMATCH",
            "pins envelope version 2",
        ),
        (lambda o: o["baseRef"].update(entityType="order"), "ENVELOPE_MISMATCH", "order"),
        (
            lambda o: o["slots"][SLOT]["edges"].append(
                {
                    "id": "back",
                    "sourceNodeId": f"usr:{SLOT}:both_approved",
                    "targetNodeId": f"usr:{SLOT}:threshold",
                }
            ),
            "WORKFLOW_CYCLE",
            "cycle",
        ),
        (
            lambda o: o["slots"][SLOT].update(exitEdgeMode="single"),
            "SLOT_EXIT_INVALID",
            "exactly one last node",
        ),
        (
            lambda o: o["slots"][SLOT]["nodes"].append(
                {
                    "id": f"usr:{SLOT}:second_start",
                    "type": "script",
                    "config": {"expression": "true"},
                }
            ),
            "SLOT_ENTRY_INVALID",
            "exactly one first node",
        ),
        (
            lambda o: (
                o["slots"][SLOT]["edges"].pop(3),
                o["slots"][SLOT].update(entryEdgeMode="branch"),
            ),
            "WORKFLOW_SPLIT_INVALID",
            "two or more outgoing",
        ),
        (
            lambda o: o["slots"][SLOT]["edges"][0].update(condition="entity.grand_total >"),
            "SLOT_EDGE_CONDITION_INVALID",
            "ends too early",
        ),
        (  # an edge condition that cannot be true or false would never be taken
            lambda o: o["slots"][SLOT]["edges"][0].update(condition="entity.cost_center"),
            "SLOT_EDGE_CONDITION_INVALID",
            "it is a string",
        ),
        (
            lambda o: o["slots"][SLOT]["nodes"][2]["config"].update(approvers=[]),
            "NODE_CONFIG_INVALID",
            "non-empty approvers",
        ),
    ],
)
def test_wf06_guardrails(mutate, code, fragment):
    org = org_json()
    mutate(org)
    got, message = _code(lambda: compile_effective(envelope(), org))
    assert (got, fragment in message) == (code, True), message


def test_a_join_without_a_split_is_refused():
    slot = "slot:draft_to_submit"
    org = {
        "baseRef": {"entityType": "invoice", "envelopeVersion": 1},
        "slots": {
            slot: {
                "nodes": [
                    {"id": f"usr:{slot}:a", "type": "script", "config": {"expression": "true"}},
                    {"id": f"usr:{slot}:j", "type": "parallel_join"},
                ],
                "edges": [
                    {"id": "a_j", "sourceNodeId": f"usr:{slot}:a", "targetNodeId": f"usr:{slot}:j"}
                ],
            }
        },
    }
    code, message = _code(lambda: compile_effective(envelope(), org))
    assert code == "WORKFLOW_JOIN_INVALID" and "no parallel_split before it" in message


NODE_CASES = [
    (
        "action",
        {"actionType": "invoice.post", "payloadTemplate": {"total": "entity.grand_total"}},
        None,
    ),
    ("action", {"actionType": "post", "payloadTemplate": {}}, "must look like"),
    ("action", {"actionType": "invoice.post", "runAs": "root"}, "runAs='root'"),
    (
        "action",
        {"actionType": "invoice.post", "payloadTemplate": {"x": "entity.a +"}},
        "payloadTemplate.x",
    ),
    ("approval", {"mode": "chain", "chainId": "c1"}, None),
    (
        "approval",
        {
            "mode": "inline",
            "approvers": [{"user": "u1"}, {"role": "cfo"}, {"rule": "entity.vendor_id"}],
            "decision": "all",
        },
        None,
    ),
    ("approval", {"mode": "inline", "approvers": [{"group": "x"}]}, "approvers[0]"),
    ("approval", {"mode": "quorum"}, "mode='quorum'"),
    ("condition", {"expression": "entity.grand_total > 5"}, None),
    ("condition", {"expression": 5}, "expression string"),
    ("script", {"expression": "true", "assignTo": "context.ok"}, None),
    ("script", {"expression": "true", "assignTo": "entity.ok"}, "context variable"),
    ("wait_timer", {"duration": "PT24H"}, None),
    ("wait_timer", {"duration": "24h"}, "ISO 8601 duration"),
    ("wait_timer", {"duration": "PT0S"}, "positive"),
    ("wait_timer", {}, "exactly one of duration"),
    ("wait_timer", {"until": "now"}, None),
    ("wait_event", {"eventKey": "delivery:pod:{entity.vendor_id}", "timeout": "P3D"}, None),
    ("wait_event", {"eventKey": "delivery:{shipment}"}, "not a variable path"),
    ("wait_event", {"eventKey": "delivery:{entity.vendor_id"}, "unbalanced"),
    ("condition", {"expression": "entity.vendor_id == 'v-7' || true"}, None),
    # What decides must be able to be true or false: a number would match no edge.
    ("condition", {"expression": "entity.grand_total"}, "it is a number"),
    ("condition", {"expression": "'yes'"}, "decides between true and false"),
    (
        "webhook_out",
        {
            "url": "https://x.example/{entity.vendor_id}",
            "payloadTemplate": {"total": "entity.grand_total", "n": "1", "kind": "'invoice'"},
            "headers": {"X-Vendor": "vendor {entity.vendor_id}"},
        },
        None,
    ),
    # payloadTemplate is a map of expressions in a webhook as in an action: a {…} text
    # template (once sent as the literal text) and a value that is no expression are refused.
    (
        "webhook_out",
        {"url": "https://x.example", "payloadTemplate": {"total": "{entity.grand_total}"}},
        "write 'entity.grand_total' for the value itself",
    ),
    (
        "webhook_out",
        {"url": "https://x.example", "payloadTemplate": {"t": "Total {entity.grand_total}"}},
        "expressions do not join text",
    ),
    ("webhook_out", {"url": "https://x.example", "payloadTemplate": {"t": "'{kept}'"}}, None),
    ("webhook_out", {"url": "https://x.example", "payloadTemplate": {"n": 1}}, "not an expression"),
    (
        "webhook_out",
        {"url": "https://x.example", "payloadTemplate": {"deep": {"a": "entity.grand_total"}}},
        "payloadTemplate.deep",
    ),
    ("webhook_out", {"url": "https://x.example", "payloadTemplate": ["x"]}, "map names to"),
    (
        "webhook_out",
        {"url": "https://x.example", "payloadTemplate": {"ref": "entity.ref"}},
        "entity.ref is not a declared field",
    ),
    ("webhook_out", {"url": "https://x.example", "headers": {"X-N": 5}}, "headers.X-N"),
    (
        "action",
        {"actionType": "invoice.post", "payloadTemplate": {"t": "{entity.grand_total}"}},
        "write 'entity.grand_total'",
    ),
    ("webhook_out", {"url": "ftp://x"}, "must start with https://"),
    ("notification", {"channel": "sms", "to": "{entity.customer_email}", "body": "Hi"}, None),
    ("notification", {"channel": "pigeon", "to": "x", "body": "y"}, "channel='pigeon'"),
    ("parallel_join", {"mode": "first"}, "mode='first'"),
    ("rule", {"ruleId": "r-1"}, None),
    ("rule", {"ruleId": "r-1", "extra": 1}, "unknown setting(s) extra"),
    ("parallel_split", {"paths": 2}, "takes no configuration"),
]


@pytest.mark.parametrize(("node_type", "config", "error"), NODE_CASES)
def test_every_node_type_validates_its_configuration(node_type, config, error):
    from charter.compiler.nodes import compile_node_config

    schema = {
        "entity": {"grand_total": "number", "vendor_id": "string", "customer_email": "string"}
    }
    if error is None:
        compiled = compile_node_config("usr:s:n", node_type, config, schema)
        assert json.loads(json.dumps(compiled)) == compiled
    else:
        with pytest.raises(ContractError) as caught:
            compile_node_config("usr:s:n", node_type, config, schema)
        assert caught.value.code == "NODE_CONFIG_INVALID"
        assert error in caught.value.message and "usr:s:n" in caught.value.message


def test_a_stored_artifact_from_another_compiler_is_refused():
    compiled = compile_effective(envelope(), org_json())
    with pytest.raises(CompiledWorkflowError) as caught:
        verify_compiled({**compiled, "compilerVersion": "0.0.1"})
    assert caught.value.code == "WORKFLOW_COMPILER_STALE"
    tampered = copy.deepcopy(compiled)
    tampered["editWindows"][f"usr:{SLOT}:split"] = "editable"
    with pytest.raises(CompiledWorkflowError) as caught:
        verify_compiled(tampered)
    assert caught.value.code == "WORKFLOW_HASH_MISMATCH"


# -- diff, Mermaid, templates -------------------------------------------------------------


def test_the_diff_against_the_envelope_is_grouped_by_slot_and_deterministic():
    env = envelope()
    org = org_json()
    org["slots"][SLOT]["editWindowOverride"] = "locked"
    diff = diff_effective(compile_effective(env, org), compile_effective(env))
    assert list(diff["slots"]) == [SLOT]
    changes = diff["slots"][SLOT]
    assert [n["id"] for n in changes["addedNodes"]] == sorted(
        n["id"] for n in changes["addedNodes"]
    )
    assert {"id": f"usr:{SLOT}:split", "type": "parallel_split"} in changes["addedNodes"]
    assert changes["replacedEdges"] == [
        {
            "id": "sys:state:submitted->sys:gate:approve",
            "source": "sys:state:submitted",
            "target": "sys:gate:approve",
        }
    ]
    assert any(
        e["id"] == "high_value" and e["label"] == "high value" for e in changes["addedEdges"]
    )
    assert changes["slotEditWindow"] == "locked"
    again = diff_effective(compile_effective(env, org), compile_effective(env))
    assert json.dumps(diff) == json.dumps(again)


def test_mermaid_shows_the_graph_with_its_provenance():
    text = to_mermaid(compile_effective(envelope(), org_json()))
    assert text.startswith("flowchart TD\n")
    assert f'subgraph slot_submitted_to_approved["{SLOT}"]' in text
    assert "-.->" in text  # the lifecycle's loops
    assert f'|"high value · {SLOT}"|' in text
    assert "class " in text and "classDef system" in text


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_compiles(name):
    template = TEMPLATES[name]
    env = generate_envelope(EntityContract.from_json(template.contract))
    compiled = compile_effective(env, template.org)
    verify_compiled(compiled)
    assert set(template.org["slots"]) <= {s["slotId"] for s in env["slots"]}
    assert any(owner != "envelope" for owner in compiled["slotMap"].values())


def test_a_join_must_join_exactly_the_paths_of_its_split():
    org = org_json()
    slot = org["slots"][SLOT]
    slot["nodes"].append(
        {"id": f"usr:{SLOT}:stray", "type": "script", "config": {"expression": "true"}}
    )
    slot["edges"] += [
        {
            "id": "to_stray",
            "sourceNodeId": f"usr:{SLOT}:threshold",
            "targetNodeId": f"usr:{SLOT}:stray",
        },
        {
            "id": "stray_in",
            "sourceNodeId": f"usr:{SLOT}:stray",
            "targetNodeId": f"usr:{SLOT}:both_approved",
        },
    ]
    code, message = _code(lambda: compile_effective(envelope(), org))
    assert code == "WORKFLOW_JOIN_INVALID"
    assert "joins 3 paths, but its parallel_split" in message and "sends 2" in message
