"""Org workflow definitions: slot graph patches that fill an envelope's body slots.

JSON form (the seed's field names)::

    {"baseRef": {"entityType": "invoice", "envelopeVersion": 1},
     "slots": {"slot:submitted_to_approved": {
         "nodes": [{"id": "usr:slot:submitted_to_approved:review", "type": "approval",
                    "config": {"mode": "inline", "approvers": [{"role": "finance_manager"}]}}],
         "edges": [],
         "entryEdgeMode": "serial", "exitEdgeMode": "single",
         "editWindowOverride": "locked"}}}
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from charter.dsl.contract import EditWindow, _Model, describe
from charter.errors import ContractError

NodeType = Literal[
    "start",
    "end",
    "lifecycle_gate",
    "policy_gate",
    "lifecycle_state",
    "action",
    "approval",
    "condition",
    "parallel_split",
    "parallel_join",
    "wait_timer",
    "wait_event",
    "webhook_out",
    "notification",
    "script",
    "rule",
]
USER_NODE_TYPES = (
    "action",
    "approval",
    "condition",
    "parallel_split",
    "parallel_join",
    "wait_timer",
    "wait_event",
    "webhook_out",
    "notification",
    "script",
    "rule",
)


class WorkflowNode(_Model):
    id: str
    type: NodeType
    config: dict[str, Any] = Field(default_factory=dict)


class WorkflowEdge(_Model):
    id: str
    source_node_id: str = Field(alias="sourceNodeId")
    target_node_id: str = Field(alias="targetNodeId")
    label: str | None = None
    condition: str | None = None  # a typed-DSL expression
    priority: int = 0


class SlotGraphPatch(_Model):
    nodes: list[WorkflowNode]
    edges: list[WorkflowEdge] = Field(default_factory=list)
    entry_edge_mode: Literal["serial", "branch"] = Field(alias="entryEdgeMode", default="serial")
    exit_edge_mode: Literal["single", "join"] = Field(alias="exitEdgeMode", default="single")
    edit_window_override: EditWindow | None = Field(alias="editWindowOverride", default=None)


class BaseRef(_Model):
    entity_type: str = Field(alias="entityType")
    envelope_version: int = Field(alias="envelopeVersion", ge=1)


class OrgWorkflowDefinition(_Model):
    base_ref: BaseRef = Field(alias="baseRef")
    slots: dict[str, SlotGraphPatch] = Field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> OrgWorkflowDefinition:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ContractError(
                "The org workflow definition is invalid: " + describe(exc) + ".",
                code="ORG_DEFINITION_INVALID",
            ) from None
