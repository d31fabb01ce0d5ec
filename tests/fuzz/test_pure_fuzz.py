"""The pure layers fed hostile input: flow definitions, expressions, entity contracts, org
definitions and canonical JSON. Every refusal is a CharterError; whatever is accepted is
something the database and the rest of charter can take."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import Flow, canonical_hash, canonical_json, compile_flow, extract_flow_shape
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.compiler.mermaid import to_mermaid
from charter.dsl.contract import EntityContract
from charter.errors import (
    ArgumentError,
    CanonicalJsonError,
    CharterError,
    ExpressionError,
    RunInputError,
)
from charter.expr import compile_expression, evaluate
from charter.library.templates import TEMPLATES
from charter.payloads import json_text
from tests.effective_oracle import problems
from tests.fuzz.strategies import (
    charter_error_or_result,
    cyclic,
    expressions,
    hostile_argument,
    hostile_json,
    hostile_text,
    hostile_value,
    monsters,
    nested,
    settings_for,
    wrong_type,
)

# What SQL's _validate_flow_shape accepts (PostgreSQL's '$' is the end of the text).
SQL_SLUG = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,127}\Z")

options = st.one_of(st.none(), st.integers(-5, 100_000_000), wrong_type)


def _handler(run):
    return run


@settings_for(80)
@given(
    slug=st.one_of(st.sampled_from(["ok", "_x", "A" * 128, "A" * 129]), hostile_argument),
    max_attempts=options,
    base_delay=options,
    timeout=options,
    start_delay=options,
    description=st.one_of(st.none(), hostile_argument),
)
def test_flow_definitions_refuse_with_a_code(
    slug, max_attempts, base_delay, timeout, start_delay, description
):
    flow = charter_error_or_result(
        lambda: Flow(
            slug,
            max_attempts=max_attempts,
            base_delay=base_delay,
            timeout=timeout,
            start_delay=start_delay,
            description=description,
        )
    )
    if isinstance(flow, Flow):
        assert SQL_SLUG.match(flow.slug) and flow.slug not in ("run", "ctx"), flow.slug


def _callables() -> st.SearchStrategy[Any]:
    import functools

    return st.one_of(
        st.just(_handler),
        st.just(lambda run: run),
        st.just(functools.partial(_handler)),
        st.just(print),
        st.just(dict),
        st.just(json),
        wrong_type,
    )


@settings_for(80)
@given(
    handler=_callables(),
    slug=st.one_of(st.none(), hostile_argument),
    depends_on=st.one_of(st.just(()), st.lists(hostile_argument, max_size=2), hostile_argument),
    over=st.one_of(st.just("run"), st.just("first"), hostile_argument),
    option=options,
    isolation=st.one_of(st.none(), st.just("process"), hostile_argument),
    retry_on=st.one_of(st.none(), st.just(ValueError), st.just([KeyError]), wrong_type),
    is_map=st.booleans(),
)
def test_steps_refuse_with_a_code(
    handler, slug, depends_on, over, option, isolation, retry_on, is_map
):
    flow = Flow("fuzzed")
    flow.step(slug="first")(lambda run: [1, 2])

    def define() -> Any:
        if is_map:
            return flow.map(
                handler, over=over, slug=slug, timeout=option, isolation=isolation,
                retry_on=retry_on,
            )  # fmt: skip
        return flow.step(
            handler, depends_on=depends_on, slug=slug, max_attempts=option,
            isolation=isolation, no_retry_on=retry_on,
        )  # fmt: skip

    charter_error_or_result(define)
    for step in flow.steps:
        assert SQL_SLUG.match(step) and step not in ("run", "ctx"), step
    # Whatever was accepted compiles, and its shape is JSON PostgreSQL can store.
    json_text(compile_flow(flow), "compiled")
    json_text(extract_flow_shape(flow), "shape")


schemas = st.one_of(
    st.none(),
    st.just({"entity": {"total": "number", "name": "string"}}),
    st.dictionaries(
        st.sampled_from(["entity", "actor", "x"]),
        st.one_of(
            st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=8), wrong_type)),
            wrong_type,
        ),
        max_size=2,
    ),
    hostile_argument,
)


@settings_for(150)
@given(source=expressions, schema=schemas)
def test_expressions_compile_or_refuse_with_a_code(source, schema):
    compiled = charter_error_or_result(lambda: compile_expression(source, schema))
    if isinstance(compiled, CharterError):
        assert isinstance(compiled, ExpressionError | ArgumentError), compiled
        return
    # A compiled expression is JSON that SQL's eval_expr can take, and it evaluates.
    json_text(compiled, "compiled")
    evaluate(compiled, {"entity": {"a": 1, "total": 2}, "actor": {"roles": ["cfo"]}})


variables = st.one_of(
    st.fixed_dictionaries({"entity": hostile_json, "actor": hostile_json}),
    st.dictionaries(st.sampled_from(["entity", "actor", "org", "context", "now"]), hostile_json),
    hostile_value,
)


@settings_for(120)
@given(
    source=st.sampled_from(
        [
            "entity.total > 10",
            "entity.total == actor.total",
            "actor.roles contains 'cfo'",
            "entity.name in ['a', 'b']",
            "entity.total >= now",
            "entity == actor",
            "!(entity.a.b.c == null) || entity.x < 'z'",
        ]
    ),
    values=variables,
)
def test_evaluate_refuses_variables_that_are_not_json_with_a_code(source, values):
    compiled = compile_expression(source)
    audit = charter_error_or_result(lambda: evaluate(compiled, values))
    if not isinstance(audit, CharterError):
        json.dumps(audit, allow_nan=False)  # the audit record is JSON


def _template_contracts() -> list[dict[str, Any]]:
    return [copy.deepcopy(t.contract) for t in TEMPLATES.values()]


@st.composite
def mutated(draw: st.DrawFn, documents: list[dict[str, Any]]) -> Any:
    """A template document with a few places replaced by hostile values or removed."""
    document = copy.deepcopy(draw(st.sampled_from(documents)))
    inserted: set[int] = set()  # hostile values may be shared between examples: left alone
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = document
        key: Any = None
        while True:
            children = (
                list(parent) if isinstance(parent, dict)
                else list(range(len(parent))) if isinstance(parent, list) else []
            )  # fmt: skip
            if not children:
                break
            key = draw(st.sampled_from(children))
            child = parent[key]
            if (
                not draw(st.booleans())
                or not isinstance(child, dict | list)
                or id(child) in inserted
            ):
                break
            parent, key = child, None
        if key is None:
            continue
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(
                st.one_of(hostile_json, hostile_text, monsters, st.sampled_from(_NEAR_MISSES))
            )
            inserted.add(id(parent[key]))
    return document


_NEAR_MISSES = [
    "draft\n", "Draft", "slot:x\n", "slot:draft_to_submit", "usr:slot:draft_to_submit:a\n",
    "sys:gate:submit", "sys:start", "locked", "editable", 0, -1, 2**63, 1.5, True, [], {},
    "PT1H\n", "invoice.post\n", "usr:slot:draft_to_submit:ok", "approval", "parallel_join",
    "\ud800", "dr\udcffaft", "draft\x00", "sys:gate:\ud800", "slot:\x00",
]  # fmt: skip


@settings_for(150)
@given(data=st.one_of(mutated(_template_contracts()), hostile_value))
def test_entity_contracts_refuse_with_a_code(data):
    contract = charter_error_or_result(lambda: EntityContract.from_json(data))
    if isinstance(contract, EntityContract):
        envelope = charter_error_or_result(lambda: generate_envelope(contract))
        if isinstance(envelope, dict):
            charter_error_or_result(lambda: compile_effective(envelope))
            json_text(envelope, "envelope")


_ORG_DEFINITIONS = [copy.deepcopy(t.org) for t in TEMPLATES.values()]
_BY_ENTITY = {t.contract["entityType"]: t.contract for t in TEMPLATES.values()}


@settings_for(200)
@given(
    org=st.one_of(mutated(_ORG_DEFINITIONS), hostile_value),
    name=st.sampled_from(sorted(TEMPLATES)),
)
def test_org_definitions_refuse_with_a_code(org, name):
    contract = EntityContract.from_json(TEMPLATES[name].contract)
    envelope = generate_envelope(contract)
    compiled = charter_error_or_result(lambda: compile_effective(envelope, org))
    if isinstance(compiled, CharterError):
        return
    # What compiles keeps WF-06 and WF-08, checked independently of the compiler...
    bare = compile_effective(envelope)
    assert problems(bare, envelope["slots"], compiled) == []
    # ...and can be shown, diffed, hashed and stored.
    to_mermaid(compiled)
    diff_effective(compiled, bare)
    json_text(compiled, "compiled")


def _patch_edge(draw: Any, i: int, ids: list[str], strays: list[str]) -> dict[str, str]:
    if draw(st.integers(0, 7)) and len(ids) > 1:  # mostly forwards inside the slot
        pair = draw(st.lists(st.sampled_from(range(len(ids))), min_size=2, max_size=2, unique=True))
        source, target = ids[min(pair)], ids[max(pair)]
    else:
        source, target = (draw(st.sampled_from([*ids, *strays])) for _ in "st")
    return {"id": f"e{i}", "sourceNodeId": source, "targetNodeId": target}


@st.composite
def slot_patches(draw: Any) -> tuple[str, dict[str, Any]]:
    """Org definitions that are well formed but place nodes and edges anywhere: in the
    slot's namespace or not, edges inside the slot or to system nodes and other slots."""
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    contract = TEMPLATES[name].contract
    envelope = generate_envelope(EntityContract.from_json(contract))
    slots = [slot["slotId"] for slot in envelope["slots"]]
    system = [node["id"] for node in envelope["nodes"]]
    patches: dict[str, Any] = {}
    for slot in draw(st.lists(st.sampled_from(slots), min_size=1, max_size=2, unique=True)):
        own = [f"usr:{slot}:n{i}" for i in range(draw(st.integers(1, 4)))]
        elsewhere = [f"usr:{other}:n0" for other in slots if other != slot]
        strays = [*system, *elsewhere, f"{own[0]}:x", "n0"]
        ids = [node if draw(st.integers(0, 9)) else draw(st.sampled_from(strays)) for node in own]
        kinds = ["action"] * 12 + ["lifecycle_gate", "parallel_split", "parallel_join"]
        nodes = []
        for node in ids:
            kind = draw(st.sampled_from(kinds))
            config = {"actionType": "x.do"} if kind == "action" else {}
            nodes.append({"id": node, "type": kind, "config": config})

        edges = [
            _patch_edge(draw, i, ids, [*system, *elsewhere]) for i in range(draw(st.integers(0, 5)))
        ]
        patches[slot] = {
            "nodes": nodes,
            "edges": edges,
            "entryEdgeMode": draw(st.sampled_from(["serial", "branch", "branch"])),
            "exitEdgeMode": draw(st.sampled_from(["single", "join", "join"])),
            **draw(
                st.sampled_from(  # often none
                    [
                        {},
                        {},
                        {},
                        {
                            "editWindowOverride": draw(
                                st.sampled_from(["editable", "amend_only", "locked"])
                            )
                        },
                    ]
                )
            ),
        }
    base = {"entityType": contract["entityType"], "envelopeVersion": contract["version"]}
    return name, {"baseRef": base, "slots": patches}


@settings_for(300)
@given(patch=slot_patches())
def test_a_slot_patch_that_compiles_keeps_wf06_and_wf08(patch):
    name, org = patch
    envelope = generate_envelope(EntityContract.from_json(TEMPLATES[name].contract))
    compiled = charter_error_or_result(lambda: compile_effective(envelope, org))
    if isinstance(compiled, CharterError):
        return
    assert problems(compile_effective(envelope), envelope["slots"], compiled) == []


@settings_for(80)
@given(
    envelope=st.one_of(
        mutated([generate_envelope(EntityContract.from_json(c)) for c in _template_contracts()]),
        hostile_value,
    )
)
def test_hand_edited_envelopes_refuse_with_a_code(envelope):
    charter_error_or_result(lambda: compile_effective(envelope))


@settings_for(100)
@given(value=hostile_value)
def test_canonical_json_refuses_with_a_code(value):
    charter_error_or_result(lambda: canonical_json(value))
    charter_error_or_result(lambda: canonical_hash(value))
    charter_error_or_result(lambda: json_text(value, "The value"))


def test_the_monsters_are_refused_by_name():
    for value in (nested(5_000), nested(5_000, "dict"), cyclic("list"), cyclic("dict")):
        with pytest.raises(CanonicalJsonError, match=r"deep|contains itself"):
            canonical_json(value)
        with pytest.raises(RunInputError, match="levels deep"):
            json_text(value, "The value")
