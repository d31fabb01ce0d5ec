"""Every problem of an org definition the compiler can name, each where it is: for an editor
that marks refusals on the node or edge they concern.

``compile_effective`` stops at the first refusal. :func:`definition_problems` goes on: each
node's configuration and each edge's condition on its own, then each slot's patch on the
envelope alone, then (when every slot passes) the whole definition, so one broken slot
does not hide another's problems. Each refusal becomes one problem per node it names.
"""

from __future__ import annotations

import re
from typing import Any

from charter.compiler.effective import compile_effective, edge_condition, field_schema
from charter.compiler.nodes import compile_node_config
from charter.dsl.contract import EntityContract
from charter.dsl.slots import USER_NODE_TYPES, OrgWorkflowDefinition
from charter.errors import CharterError, ContractError

_RULE = re.compile(r"\bWF-[0-9]+\b")


def problem(exc: CharterError) -> list[dict[str, Any]]:
    """``exc`` as problems: ``{"code", "rule", "message", "slotId", "nodeId", "edgeId",
    "path", "line", "caret"}``, one per node it names (one if it names none)."""
    rule = _RULE.search(exc.message)
    base: dict[str, Any] = {
        "code": exc.code,
        "rule": rule.group() if rule else None,
        "message": exc.message,
        "slotId": None,
        "nodeId": None,
        "edgeId": None,
        "path": None,
        "line": None,
        "caret": None,
    }
    if not isinstance(exc, ContractError):
        return [base]
    base.update(
        slotId=exc.slot_id,
        edgeId=exc.edge_id,
        path=exc.path,
        line=exc.line,
        caret=exc.caret,
    )
    found = []
    for node_id in exc.node_ids or (None,):
        entry = {**base, "nodeId": node_id}
        if entry["slotId"] is None and node_id and node_id.startswith("usr:"):
            entry["slotId"] = node_id.removeprefix("usr:").rpartition(":")[0] or None
        found.append(entry)
    return found


def definition_problems(envelope: dict[str, Any], definition: Any) -> list[dict[str, Any]]:
    """What keeps ``definition`` from compiling on ``envelope`` (empty: it compiles)."""
    found: list[dict[str, Any]] = []

    def note(exc: CharterError) -> None:
        for entry in problem(exc):
            if entry not in found:
                found.append(entry)

    try:
        org = OrgWorkflowDefinition.from_json(definition)
        contract = EntityContract.from_json(envelope.get("contract"))
    except CharterError as exc:
        note(exc)
        return found
    schema = field_schema(contract)
    data = org.to_json()
    for slot_id, patch in sorted(org.slots.items()):
        for node in patch.nodes:
            if node.type in USER_NODE_TYPES:
                try:
                    compile_node_config(node.id, node.type, node.config, schema)
                except ContractError as exc:
                    exc.slot_id = slot_id
                    note(exc)
        for edge in patch.edges:
            try:
                edge_condition(slot_id, edge.id, edge.condition, schema)
            except ContractError as exc:
                note(exc)
        alone = {"baseRef": data["baseRef"], "slots": {slot_id: data["slots"][slot_id]}}
        try:
            compile_effective(envelope, alone)
        except CharterError as exc:
            note(exc)
    if not found:
        try:
            compile_effective(envelope, data)
        except CharterError as exc:
            note(exc)
    return found
