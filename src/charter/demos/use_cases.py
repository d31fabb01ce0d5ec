"""Seed 002's use cases as contracts and org definitions that run: A (invoice fast lane; with
``invoice_lanes_org`` all three of its lanes), B
(sales order with an ANY join), D (shipment waiting for proof of delivery, escalating on a
timeout) and E (royalty cycle on a timer). ``charter demo documents`` and the tests run
them end to end.
"""

from __future__ import annotations

from typing import Any

# Where use case E sends its statements: a receiver on this machine (the documents demo
# starts one and points the webhook at it). charter's demos, tests and templates contact
# nothing outside the machine.
STATEMENT_PORTAL = "http://127.0.0.1:8080"


def _node(slot: str, local: str, node_type: str, **config: Any) -> dict[str, Any]:
    return {"id": f"usr:{slot}:{local}", "type": node_type, "config": config}


def _edge(slot: str, source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"{source}->{target}",
        "sourceNodeId": f"usr:{slot}:{source}",
        "targetNodeId": f"usr:{slot}:{target}",
        **extra,
    }


def _slot(slot_id: str, entry: str, exit_: str, window: str, stable: bool) -> dict[str, Any]:
    return {
        "slotId": slot_id,
        "entryNodeId": entry,
        "exitNodeId": exit_,
        "defaultEditWindow": window,
        "stableRegion": stable,
    }


# -- A: the AP invoice fast lane --------------------------------------------------------------


def invoice_contract() -> dict[str, Any]:
    return {
        "entityType": "ap_invoice",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "submitted", "editWindow": "amend_only"},
            {"id": "active", "editWindow": "locked", "final": True},
            {"id": "cancelled", "editWindow": "locked"},
        ],
        "transitions": [
            {"from": "draft", "to": "submitted", "gate": "submit"},
            {"from": "submitted", "to": "active", "gate": "approve", "label": "approved"},
            {"from": "submitted", "to": "draft", "gate": "approve", "label": "reject"},
            {"from": "draft", "to": "cancelled", "gate": "cancel"},
        ],
        "slots": [
            _slot("slot:review", "sys:state:submitted", "sys:gate:approve", "amend_only", True),
            _slot("slot:posting", "sys:gate:approve", "sys:state:active", "locked", False),
        ],
        "fields": {
            "grand_total": "number",
            "vendor_id": "string",
            "cost_center": "string",
            "gl_batch": "string",
            "posted_at": "string",
            "invoice_no": "string",
            "vendor": "string",
        },
        "actions": [{"actionType": "ap_invoice.post", "fields": ["gl_batch", "posted_at"]}],
        # Closed by default: AP clerks enter, submit, review and cancel; posting by hand is
        # the finance manager's (the workflow posts as the system).
        "policies": {
            "*": {"roles": ["ap_clerk"]},
            "ap_invoice.post": {"roles": ["finance_manager"]},
        },
        # How people see an invoice: its number and vendor, not a uuid.
        "display": {
            "title": "Invoice {invoice_no} — {vendor}",
            "columns": ["invoice_no", "vendor", "grand_total", "cost_center"],
            "summary": ["invoice_no", "vendor", "grand_total", "cost_center"],
        },
    }


def invoice_org() -> dict[str, Any]:
    review, posting = "slot:review", "slot:posting"
    return {
        "baseRef": {"entityType": "ap_invoice", "envelopeVersion": 1},
        "slots": {
            review: {
                "nodes": [
                    _node(
                        review,
                        "fast_lane",
                        "condition",
                        expression="entity.grand_total <= 500 && "
                        "entity.vendor_id in org.trusted_vendors",
                    ),
                    _node(
                        review,
                        "auto_approved",
                        "script",
                        expression="true",
                        assignTo="context.auto_approved",
                    ),
                    _node(
                        review,
                        "review",
                        "approval",
                        mode="inline",
                        approvers=[{"role": "ap_clerk"}],
                    ),
                ],
                "edges": [
                    _edge(review, "fast_lane", "auto_approved", label="true"),
                    _edge(review, "fast_lane", "review", label="false"),
                ],
                "exitEdgeMode": "join",
            },
            posting: {
                "nodes": [
                    _node(
                        posting,
                        "post",
                        "action",
                        actionType="ap_invoice.post",
                        runAs="system",
                        payloadTemplate={"gl_batch": "'GL-AUTO'", "posted_at": "now"},
                    )
                ],
                "edges": [],
            },
        },
    }


def invoice_lanes_org() -> dict[str, Any]:
    """Use case A with all three lanes: the fast lane; above 10,000 the finance manager (by
    role) and the budget owner (by rule: the cost center names its owner) in parallel, both
    needed; otherwise the org's `ap-standard` approval chain. Then posting, then locked."""
    definition = invoice_org()
    review = "slot:review"
    definition["slots"][review] = {
        "nodes": [
            *definition["slots"][review]["nodes"][:2],  # fast_lane, auto_approved
            _node(review, "size", "condition", expression="entity.grand_total > 10000"),
            _node(review, "both", "parallel_split"),
            _node(
                review,
                "finance_manager",
                "approval",
                mode="inline",
                approvers=[{"role": "finance_manager"}],
            ),
            _node(
                review,
                "budget_owner",
                "approval",
                mode="inline",
                approvers=[{"rule": "entity.cost_center"}],
            ),
            _node(review, "both_approved", "parallel_join", mode="all"),
            _node(review, "standard", "approval", mode="chain", chainId="ap-standard"),
        ],
        "edges": [
            _edge(review, "fast_lane", "auto_approved", label="true"),
            _edge(review, "fast_lane", "size", label="false"),
            _edge(review, "size", "both", label="true"),
            _edge(review, "size", "standard", label="false"),
            _edge(review, "both", "finance_manager"),
            _edge(review, "both", "budget_owner"),
            _edge(review, "finance_manager", "both_approved"),
            _edge(review, "budget_owner", "both_approved"),
        ],
        "exitEdgeMode": "join",
    }
    return definition


# -- B: sales order fulfilment with an ANY join -------------------------------------------------


def sales_order_contract() -> dict[str, Any]:
    return {
        "entityType": "sales_order",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "submitted", "editWindow": "amend_only"},
            {"id": "confirmed", "editWindow": "locked", "final": True},
        ],
        "transitions": [
            {"from": "draft", "to": "submitted", "gate": "submit"},
            {"from": "submitted", "to": "confirmed", "gate": "confirm"},
        ],
        "slots": [
            _slot("slot:fulfil", "sys:state:submitted", "sys:gate:confirm", "amend_only", True)
        ],
        "fields": {
            "order_id": "string",
            "grand_total": "number",
            "credit_available": "number",
            "reserved": "boolean",
        },
        "actions": [{"actionType": "sales_order.reserve_inventory", "fields": ["reserved"]}],
        "policies": {
            "*": {"roles": ["sales"]},
            "confirm": {"roles": ["warehouse"]},
            "sales_order.reserve_inventory": {"roles": ["warehouse"]},
        },
    }


def sales_order_org() -> dict[str, Any]:
    """Reserve inventory, wait for a backorder and tell the warehouse in parallel; the first
    path done wins the ANY join (the others are cancelled, with evidence); then the credit
    check: enough credit confirms the order, too little waits for a payment event."""
    slot = "slot:fulfil"
    return {
        "baseRef": {"entityType": "sales_order", "envelopeVersion": 1},
        "slots": {
            slot: {
                "nodes": [
                    _node(slot, "fan_out", "parallel_split"),
                    _node(
                        slot,
                        "reserve_inventory",
                        "action",
                        actionType="sales_order.reserve_inventory",
                        runAs="system",
                        payloadTemplate={"reserved": "true"},
                    ),
                    _node(slot, "backorder", "wait_event", eventKey="backorder:{entity.order_id}"),
                    _node(
                        slot,
                        "notify_warehouse",
                        "notification",
                        channel="email",
                        to="role:warehouse",
                        subject="Order {entity.order_id} to pick",
                        body="Order {entity.order_id} totals {entity.grand_total}.",
                    ),
                    _node(slot, "first_done", "parallel_join", mode="any"),
                    _node(
                        slot,
                        "credit_check",
                        "condition",
                        expression="entity.credit_available >= entity.grand_total",
                    ),
                    _node(slot, "go", "script", expression="true", assignTo="context.credit_ok"),
                    _node(
                        slot,
                        "payment_required",
                        "wait_event",
                        eventKey="payment:{entity.order_id}",
                    ),
                ],
                "edges": [
                    _edge(slot, "fan_out", "reserve_inventory", priority=0),
                    _edge(slot, "fan_out", "backorder", priority=1),
                    _edge(slot, "fan_out", "notify_warehouse", priority=2),
                    _edge(slot, "reserve_inventory", "first_done"),
                    _edge(slot, "backorder", "first_done"),
                    _edge(slot, "notify_warehouse", "first_done"),
                    _edge(slot, "first_done", "credit_check"),
                    _edge(slot, "credit_check", "go", label="true"),
                    _edge(slot, "credit_check", "payment_required", label="false"),
                ],
                "exitEdgeMode": "join",
            }
        },
    }


# -- D: waiting for proof of delivery, escalating after 72 hours --------------------------------


def shipment_contract() -> dict[str, Any]:
    return {
        "entityType": "shipment",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "in_transit", "editWindow": "amend_only"},
            {"id": "delivered", "editWindow": "locked", "final": True},
        ],
        "transitions": [
            {"from": "draft", "to": "in_transit", "gate": "dispatch"},
            {"from": "in_transit", "to": "delivered", "gate": "deliver"},
        ],
        "slots": [
            _slot(
                "slot:confirmation", "sys:state:in_transit", "sys:gate:deliver", "amend_only", False
            )
        ],
        "fields": {"shipment_id": "string", "carrier": "string"},
        "policies": {
            "*": {"roles": ["sales", "warehouse"]},
            "deliver": {"roles": ["logistics_manager"]},
        },
    }


def shipment_org() -> dict[str, Any]:
    slot = "slot:confirmation"
    return {
        "baseRef": {"entityType": "shipment", "envelopeVersion": 1},
        "slots": {
            slot: {
                "nodes": [
                    _node(
                        slot,
                        "proof_of_delivery",
                        "wait_event",
                        eventKey="delivery:pod:{entity.shipment_id}",
                        timeout="PT72H",
                    ),
                    _node(
                        slot,
                        "confirmed",
                        "script",
                        expression="context.event.signed_by",
                        assignTo="context.signed_by",
                    ),
                    _node(
                        slot,
                        "escalate",
                        "notification",
                        channel="email",
                        to="role:logistics_manager",
                        subject="Shipment {entity.shipment_id} unconfirmed after 72h",
                        body="No proof of delivery from {entity.carrier} for {entity.shipment_id}.",
                    ),
                    _node(
                        slot,
                        "manager_review",
                        "approval",
                        mode="inline",
                        approvers=[{"role": "logistics_manager"}],
                    ),
                ],
                "edges": [
                    _edge(slot, "proof_of_delivery", "confirmed"),
                    _edge(slot, "proof_of_delivery", "escalate", label="timeout"),
                    _edge(slot, "escalate", "manager_review"),
                ],
                "exitEdgeMode": "join",
            }
        },
    }


# -- E: the franchise royalty cycle -------------------------------------------------------------


def royalty_contract() -> dict[str, Any]:
    return {
        "entityType": "royalty_period",
        "version": 1,
        "states": [
            {"id": "open", "editWindow": "editable"},
            {"id": "closed", "editWindow": "locked", "final": True},
        ],
        "transitions": [{"from": "open", "to": "closed", "gate": "close"}],
        "slots": [_slot("slot:cycle", "sys:state:open", "sys:gate:close", "editable", False)],
        "fields": {
            "franchisee": "string",
            "sales": "number",
            "anomalies": "boolean",
            "statement_ready": "boolean",
        },
        "actions": [
            {"actionType": "royalty_period.generate_statement", "fields": ["statement_ready"]}
        ],
        "policies": {
            "*": {"roles": ["sales", "franchise_ops"]},
            "close": {"roles": ["franchise_ops"]},
            "royalty_period.generate_statement": {"roles": ["franchise_ops"]},
        },
    }


def royalty_org() -> dict[str, Any]:
    slot = "slot:cycle"
    return {
        "baseRef": {"entityType": "royalty_period", "envelopeVersion": 1},
        "slots": {
            slot: {
                "nodes": [
                    _node(slot, "month_end", "wait_timer", duration="P30D"),
                    _node(
                        slot,
                        "generate_statement",
                        "action",
                        actionType="royalty_period.generate_statement",
                        runAs="system",
                        payloadTemplate={"statement_ready": "true"},
                    ),
                    _node(slot, "anomalies", "condition", expression="entity.anomalies == true"),
                    _node(
                        slot,
                        "audit",
                        "approval",
                        mode="inline",
                        approvers=[{"role": "franchise_ops"}],
                    ),
                    _node(
                        slot,
                        "send_statement",
                        "webhook_out",
                        url=STATEMENT_PORTAL + "/franchisees/{entity.franchisee}/statements",
                        payloadTemplate={
                            "franchisee": "entity.franchisee",
                            "sales": "entity.sales",
                        },
                    ),
                ],
                "edges": [
                    _edge(slot, "month_end", "generate_statement"),
                    _edge(slot, "generate_statement", "anomalies"),
                    _edge(slot, "anomalies", "audit", label="true"),
                    _edge(slot, "anomalies", "send_statement", label="false"),
                    _edge(slot, "audit", "send_statement"),
                ],
            }
        },
    }


USE_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "A": (invoice_contract(), invoice_org()),
    "B": (sales_order_contract(), sales_order_org()),
    "D": (shipment_contract(), shipment_org()),
    "E": (royalty_contract(), royalty_org()),
}
