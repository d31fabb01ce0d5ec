"""The template library of seed 002 (UX Guardrails): ready contracts and org definitions.

``TEMPLATES[name]`` is a :class:`Template` with its entity contract and org definition as
JSON data; every one compiles (a test keeps it so). ``charter templates NAME`` prints one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    contract: dict[str, Any]
    org: dict[str, Any]


def _invoice_contract() -> dict[str, Any]:
    return {
        "entityType": "invoice",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "submitted", "editWindow": "amend_only"},
            {"id": "active", "editWindow": "locked", "final": True},
            {"id": "amended", "editWindow": "editable"},
            {"id": "cancelled", "editWindow": "locked"},
        ],
        "transitions": [
            {"from": "draft", "to": "submitted", "gate": "submit"},
            {"from": "submitted", "to": "active", "gate": "approve", "label": "approved"},
            {"from": "submitted", "to": "draft", "gate": "approve", "label": "reject"},
            {"from": "active", "to": "amended", "gate": "amend"},
            {"from": "amended", "to": "submitted", "gate": "submit"},
            {"from": "draft", "to": "cancelled", "gate": "cancel"},
        ],
        "slots": [
            {
                "slotId": "slot:draft_to_submit",
                "entryNodeId": "sys:state:draft",
                "exitNodeId": "sys:gate:submit",
                "defaultEditWindow": "editable",
                "stableRegion": False,
            },
            {
                "slotId": "slot:submitted_to_approved",
                "entryNodeId": "sys:state:submitted",
                "exitNodeId": "sys:gate:approve",
                "defaultEditWindow": "amend_only",
                "stableRegion": True,
            },
            {
                "slotId": "slot:approved_to_active",
                "entryNodeId": "sys:gate:approve",
                "exitNodeId": "sys:state:active",
                "defaultEditWindow": "locked",
                "stableRegion": False,
            },
            {
                "slotId": "slot:amendment_cycle",
                "entryNodeId": "sys:state:amended",
                "exitNodeId": "sys:gate:submit",
                "defaultEditWindow": "editable",
                "stableRegion": False,
            },
        ],
        "fields": {
            "grand_total": "number",
            "vendor_id": "string",
            "cost_center": "string",
            "currency": "string",
            "customer_email": "string",
        },
        # Closed by default: clerks do the rest; only a finance manager passes approve by
        # hand (the workflow passes it as the system when its approvals are given).
        "policies": {
            "*": {"roles": ["clerk"]},
            "approve": {"roles": ["finance_manager"]},
        },
    }


def _node(
    slot: str, local: str, node_type: str, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"id": f"usr:{slot}:{local}", "type": node_type, "config": config or {}}


def _edge(slot: str, edge_id: str, source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": edge_id,
        "sourceNodeId": f"usr:{slot}:{source}",
        "targetNodeId": f"usr:{slot}:{target}",
        **extra,
    }


def _invoice_approval() -> Template:
    slot = "slot:submitted_to_approved"
    return Template(
        "invoice_approval",
        "Invoice approval: above 10,000 the finance manager and the budget owner approve in "
        "parallel (ALL join); below it one chain-backed approval.",
        _invoice_contract(),
        {
            "baseRef": {"entityType": "invoice", "envelopeVersion": 1},
            "slots": {
                slot: {
                    "nodes": [
                        _node(
                            slot,
                            "threshold",
                            "condition",
                            {"expression": "entity.grand_total > 10000"},
                        ),
                        _node(slot, "split", "parallel_split"),
                        _node(
                            slot,
                            "finance_manager",
                            "approval",
                            {"mode": "inline", "approvers": [{"role": "finance_manager"}]},
                        ),
                        _node(
                            slot,
                            "budget_owner",
                            "approval",
                            {"mode": "inline", "approvers": [{"rule": "entity.cost_center"}]},
                        ),
                        _node(slot, "both_approved", "parallel_join", {"mode": "all"}),
                        _node(
                            slot,
                            "standard",
                            "approval",
                            {"mode": "chain", "chainId": "ap_standard"},
                        ),
                    ],
                    "edges": [
                        _edge(
                            slot,
                            "high_value",
                            "threshold",
                            "split",
                            label="high value",
                            condition="entity.grand_total > 10000",
                            priority=0,
                        ),
                        _edge(slot, "normal", "threshold", "standard", label="normal", priority=1),
                        _edge(slot, "to_finance", "split", "finance_manager"),
                        _edge(slot, "to_budget", "split", "budget_owner"),
                        _edge(slot, "finance_done", "finance_manager", "both_approved"),
                        _edge(slot, "budget_done", "budget_owner", "both_approved"),
                    ],
                    "entryEdgeMode": "serial",
                    "exitEdgeMode": "join",
                }
            },
        },
    )


def _purchase_order() -> Template:
    contract = {
        "entityType": "purchase_order",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "submitted", "editWindow": "amend_only"},
            {"id": "approved", "editWindow": "locked"},
            {"id": "rejected", "editWindow": "locked"},
        ],
        "transitions": [
            {"from": "draft", "to": "submitted", "gate": "submit"},
            {"from": "submitted", "to": "approved", "gate": "approve", "label": "approved"},
            {"from": "submitted", "to": "rejected", "gate": "reject"},
        ],
        "slots": [
            {
                "slotId": "slot:submitted_to_approved",
                "entryNodeId": "sys:state:submitted",
                "exitNodeId": "sys:gate:approve",
                "defaultEditWindow": "amend_only",
                "stableRegion": True,
            }
        ],
        "fields": {"total": "number", "cost_center": "string"},
        "policies": {
            "*": {"roles": ["buyer"]},
            "approve": {"roles": ["finance_manager"]},
            "reject": {"roles": ["finance_manager"]},
        },
    }
    slot = "slot:submitted_to_approved"
    return Template(
        "purchase_order_approval",
        "Purchase order approval: the budget owner, then the finance manager.",
        contract,
        {
            "baseRef": {"entityType": "purchase_order", "envelopeVersion": 1},
            "slots": {
                slot: {
                    "nodes": [
                        _node(
                            slot,
                            "budget_owner",
                            "approval",
                            {"mode": "inline", "approvers": [{"rule": "entity.cost_center"}]},
                        ),
                        _node(
                            slot,
                            "finance_manager",
                            "approval",
                            {"mode": "inline", "approvers": [{"role": "finance_manager"}]},
                        ),
                    ],
                    "edges": [_edge(slot, "then_finance", "budget_owner", "finance_manager")],
                }
            },
        },
    )


def _return_credit_note() -> Template:
    contract = {
        "entityType": "credit_note",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "submitted", "editWindow": "amend_only"},
            {"id": "issued", "editWindow": "locked"},
        ],
        "transitions": [
            {"from": "draft", "to": "submitted", "gate": "submit"},
            {"from": "submitted", "to": "issued", "gate": "issue", "label": "issued"},
            {"from": "submitted", "to": "draft", "gate": "issue", "label": "returned"},
        ],
        "slots": [
            {
                "slotId": "slot:submitted_to_issued",
                "entryNodeId": "sys:state:submitted",
                "exitNodeId": "sys:gate:issue",
                "defaultEditWindow": "amend_only",
                "stableRegion": True,
            }
        ],
        "fields": {"original_invoice_id": "string", "amount": "number"},
        "policies": {"*": {"roles": ["ar_clerk"]}, "issue": {"roles": ["ar_manager"]}},
    }
    slot = "slot:submitted_to_issued"
    return Template(
        "return_credit_note",
        "Return and credit note: requires the original invoice; links it, then an approval.",
        contract,
        {
            "baseRef": {"entityType": "credit_note", "envelopeVersion": 1},
            "slots": {
                slot: {
                    "nodes": [
                        _node(
                            slot,
                            "has_original",
                            "condition",
                            {"expression": "entity.original_invoice_id != null"},
                        ),
                        _node(
                            slot,
                            "link_original",
                            "action",
                            {
                                "actionType": "credit_note.link_original_invoice",
                                "payloadTemplate": {"invoice_id": "entity.original_invoice_id"},
                                "runAs": "system",
                            },
                        ),
                        _node(
                            slot,
                            "approve_credit",
                            "approval",
                            {"mode": "inline", "approvers": [{"role": "ar_manager"}]},
                        ),
                    ],
                    "edges": [
                        _edge(
                            slot,
                            "with_original",
                            "has_original",
                            "link_original",
                            condition="entity.original_invoice_id != null",
                        ),
                        _edge(slot, "linked", "link_original", "approve_credit"),
                    ],
                }
            },
        },
    )


def _amendment_loop() -> Template:
    slot = "slot:amendment_cycle"
    return Template(
        "amendment_loop",
        "Amendment loop: an approved invoice that is edited records the change, tells the "
        "approvers and goes through approval again on its new version.",
        _invoice_contract(),
        {
            "baseRef": {"entityType": "invoice", "envelopeVersion": 1},
            "slots": {
                slot: {
                    "nodes": [
                        _node(
                            slot,
                            "record_amendment",
                            "action",
                            {
                                "actionType": "invoice.record_amendment",
                                "payloadTemplate": {"total": "entity.grand_total"},
                                "runAs": "system",
                            },
                        ),
                        _node(
                            slot,
                            "tell_approvers",
                            "notification",
                            {
                                "channel": "email",
                                "to": "approvers@localhost",
                                "subject": "Invoice {entity.vendor_id} was amended",
                                "body": "The invoice now totals {entity.grand_total} "
                                "{entity.currency}; "
                                "it needs approval again.",
                            },
                        ),
                    ],
                    "edges": [_edge(slot, "then_tell", "record_amendment", "tell_approvers")],
                }
            },
        },
    )


def _fast_track() -> Template:
    slot = "slot:submitted_to_approved"
    return Template(
        "simple_fast_track",
        "Simple fast track: below 500 from a trusted vendor the invoice is approved "
        "automatically; otherwise one approval.",
        _invoice_contract(),
        {
            "baseRef": {"entityType": "invoice", "envelopeVersion": 1},
            "slots": {
                slot: {
                    "nodes": [
                        _node(
                            slot,
                            "small_and_trusted",
                            "condition",
                            {
                                "expression": "entity.grand_total <= 500 && "
                                "entity.vendor_id in org.trusted_vendors"
                            },
                        ),
                        _node(
                            slot,
                            "auto_approve",
                            "action",
                            {
                                "actionType": "invoice.auto_approve",
                                "runAs": "system",
                                "payloadTemplate": {"reason": "'fast track'"},
                            },
                        ),
                        _node(
                            slot,
                            "approval",
                            "approval",
                            {"mode": "inline", "approvers": [{"role": "ap_clerk"}]},
                        ),
                        _node(
                            slot,
                            "notify_vendor",
                            "webhook_out",
                            {
                                "url": "http://127.0.0.1:8080/hooks/invoice/{entity.vendor_id}",
                                "payloadTemplate": {"total": "entity.grand_total"},
                            },
                        ),
                    ],
                    "edges": [
                        _edge(
                            slot,
                            "fast",
                            "small_and_trusted",
                            "auto_approve",
                            label="fast track",
                            condition="entity.grand_total <= 500",
                            priority=0,
                        ),
                        _edge(
                            slot,
                            "slow",
                            "small_and_trusted",
                            "approval",
                            label="review",
                            priority=1,
                        ),
                        _edge(slot, "fast_done", "auto_approve", "notify_vendor"),
                        _edge(slot, "slow_done", "approval", "notify_vendor"),
                    ],
                }
            },
        },
    )


TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        _invoice_approval(),
        _purchase_order(),
        _return_credit_note(),
        _amendment_loop(),
        _fast_track(),
    )
}
