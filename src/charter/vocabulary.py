"""The value sets charter's tables and Python share: statuses, kinds, channels, decisions.

Each set SQL stores is one ``StrEnum`` here and one ``CHECK`` (or domain) in SQL named
``…_is_known``; tests/db/schema/test_vocabulary.py requires them to be equal and every such
``CHECK`` to have its enum, so neither side can grow a value the other does not know.
Python code, CLI choices and API enums name these rather than spelling the strings again.
Members compare equal to their strings (``RunStatus.COMPLETED == "completed"``).
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """``runs.status`` (CHECK run_status_is_known)."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class StepStatus(StrEnum):
    """``step_states.status`` (CHECK step_status_is_known)."""

    WAITING = "waiting"
    READY = "ready"
    RUNNING = "running"  # an instance node that waits (a state, a timer, an event, …)
    COMPLETED = "completed"
    SKIPPED = "skipped"  # every way into the node was a branch not taken
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskStatus(StrEnum):
    """``tasks.status`` (CHECK task_status_is_known)."""

    QUEUED = "queued"
    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ExecutionStatus(StrEnum):
    """``step_executions.status``: what became of an attempt (CHECK execution_status_is_known)."""

    RUNNING = "running"  # an instance node dispatched and waiting; it finishes in place
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"
    RETRIED = "retried"
    RESCHEDULED = "rescheduled"  # the handler asked to be resumed later (not an attempt)
    WAITING = "waiting"  # a child step's handler started its child run; the step waits


class FailureKind(StrEnum):
    """``error.type`` of a failed attempt when charter, not the handler, names the failure.
    A handler's own exception is recorded under its class name instead."""

    TIMEOUT = "Timeout"  # the handler overran its timeout
    LEASE_EXPIRED = "LeaseExpired"  # the worker stopped renewing the lease (SQL)
    MAP_SOURCE_NOT_ARRAY = "MapSourceNotArray"  # a map's source was not an array (SQL)
    OUTPUT_REJECTED = "OutputRejected"  # the output could not be recorded
    COMPLETION_FAILED = "CompletionFailed"  # the failure could not be recorded as it was
    STEP_NOT_IN_CODE = "StepNotInCode"  # the worker's code lacks the step
    PROCESS_DIED = "ProcessDied"  # an isolation="process" handler's process exited
    WORKER_ERROR = "WorkerError"  # charter itself failed while running the handler
    CHILD_RUN_FAILED = "ChildRunFailed"  # a child step's child run failed or was cancelled
    CHILD_START_FAILED = "ChildStartFailed"  # a child run could not start (SQL)
    SLEEP_UNTIL_INVALID = "SleepUntilInvalid"  # a sleep's until= rendered no time (SQL)
    EVENT_KEY_INVALID = "EventKeyInvalid"  # a wait_event's key rendered empty or too long (SQL)


class InstanceStatus(StrEnum):
    """``workflow_instances.status``: a document's workflow (CHECK instance_status_is_known)."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class WaitKind(StrEnum):
    """``instance_waits.kind``: what an instance node waits for (CHECK wait_kind_is_known)."""

    TIMER = "timer"
    EVENT = "event"
    DELIVERY = "delivery"
    APPROVAL = "approval"
    HANDLER = "handler"
    RETRY = "retry"


class ApprovalStatus(StrEnum):
    """``approval_requests.status`` (CHECK approval_status_is_known)."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    VOIDED = "voided"


class ApprovalRule(StrEnum):
    """``approval_requests.decision``: how many approvers must approve
    (CHECK approval_decision_rule_is_known)."""

    ANY = "any"
    ALL = "all"


class ApprovalDecision(StrEnum):
    """``approval_decisions.decision``: one approver's answer (CHECK approval_decision_is_known)."""

    APPROVED = "approved"
    REJECTED = "rejected"
    ABSTAINED = "abstained"


class DecisionVerb(StrEnum):
    """The verb a person decides with (``charter documents decide``, the API); each records
    the :class:`ApprovalDecision` of the same stem."""

    APPROVE = "approve"
    REJECT = "reject"
    ABSTAIN = "abstain"

    @property
    def decision(self) -> ApprovalDecision:
        return ApprovalDecision(f"{self.value.removesuffix('e')}ed")


class SideEffectKind(StrEnum):
    """``side_effects.kind``: sent by a worker, or a task run through database functions
    (CHECK side_effect_kind_is_known)."""

    EFFECT = "effect"
    TASK = "task"


class SideEffectChannel(StrEnum):
    """``side_effects.effect_type``: how an effect leaves (CHECK effect_type_is_known)."""

    WEBHOOK = "webhook"
    NOTIFICATION = "notification"
    EMAIL = "email"
    SMS = "sms"
    DB_FUNCTION = "db_function"


class NotificationChannel(StrEnum):
    """A notification effect's ``request.channel`` (the notification node's ``channel``);
    a worker claims ``notification:<channel>`` when it can send it."""

    EMAIL = "email"
    SMS = "sms"
    IN_APP = "in_app"


class SideEffectStatus(StrEnum):
    """``side_effects.status`` (CHECK effect_status_is_known)."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    DEAD_LETTER = "dead_letter"
    CANCELLED = "cancelled"


class EventType(StrEnum):
    """``document_events.event_type`` (domain charter.event_type, event_type_is_known)."""

    ON_CREATE = "on_create"
    ON_LIFECYCLE_TRANSITION = "on_lifecycle_transition"
    ON_MUTATION = "on_mutation"
    ON_AMENDMENT = "on_amendment"
    ON_AMENDED = "on_amended"


class EventStatus(StrEnum):
    """``document_events.status`` (domain charter.event_status, event_status_is_known)."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    DEAD_LETTER = "dead_letter"


class AuditVia(StrEnum):
    """``document_audit.via``: who wrote a document version (domain charter.audit_via)."""

    API = "api"
    WORKFLOW = "workflow"
    SYSTEM = "system"


class OutboxSource(StrEnum):
    """``outbox_receipts.source``: which outbox a receipt answers (domain charter.outbox_source).
    Also the ``charter outbox`` commands' choice of table."""

    EVENTS = "events"
    SIDE_EFFECTS = "side_effects"


class DefinitionKind(StrEnum):
    """``workflow_versions.definition_kind`` (CHECK definition_kind_is_known)."""

    FLOW = "flow"
    ENVELOPE = "envelope"
    ORG_PATCH = "org_patch"
    EFFECTIVE = "effective"
    EXTERNAL = "external"


class DefinitionStatus(StrEnum):
    """``workflow_versions.status``: where a compiled definition is in its life
    (CHECK definition_status_is_known); only org patches are drafts."""

    DRAFT = "draft"
    PUBLISHED = "published"
    ARCHIVED = "archived"


class VersionOperation(StrEnum):
    """``workflow_versions.operation``: how a version was bred (CHECK operation_is_known)."""

    INIT = "init"
    CROSSOVER = "crossover"
    MUTATION = "mutation"
    IMMIGRANT = "immigrant"


class StepType(StrEnum):
    """``flow_steps.step_type`` (CHECK step_type_is_known)."""

    SINGLE = "single"
    MAP = "map"
    SLEEP = "sleep"
    WAIT_EVENT = "wait_event"


class ScheduleMissed(StrEnum):
    """``schedules.missed``: what a schedule does with fire times it missed
    (CHECK schedule_missed_is_known)."""

    LATEST = "latest"
    ALL = "all"
    SKIP = "skip"


class MigrationKind(StrEnum):
    """``schema_migrations.kind`` (CHECK kind_is_known)."""

    VERSIONED = "versioned"
    REPEATABLE = "repeatable"


class NodeType(StrEnum):
    """A compiled workflow node's ``type``, recorded in ``step_executions.node_type``
    (no CHECK: the compiler refuses others). A definition may write every type but
    ``slot_entry`` and ``slot_exit``, which the compiler places; a test compares with
    ``dsl.slots.NodeType``."""

    START = "start"
    END = "end"
    LIFECYCLE_GATE = "lifecycle_gate"
    POLICY_GATE = "policy_gate"
    LIFECYCLE_STATE = "lifecycle_state"
    ACTION = "action"
    APPROVAL = "approval"
    CONDITION = "condition"
    PARALLEL_SPLIT = "parallel_split"
    PARALLEL_JOIN = "parallel_join"
    WAIT_TIMER = "wait_timer"
    WAIT_EVENT = "wait_event"
    WEBHOOK_OUT = "webhook_out"
    NOTIFICATION = "notification"
    SCRIPT = "script"
    RULE = "rule"
    SLOT_ENTRY = "slot_entry"  # where a slot's body begins and ends: placed by the compiler
    SLOT_EXIT = "slot_exit"


RESERVED_NODE_TYPES = frozenset(
    {
        NodeType.START,
        NodeType.END,
        NodeType.LIFECYCLE_GATE,
        NodeType.POLICY_GATE,
        NodeType.LIFECYCLE_STATE,
        NodeType.SLOT_ENTRY,
        NodeType.SLOT_EXIT,
    }
)
"""The node types an org's slot may not use: the envelope's and the compiler's own."""

TERMINAL_RUN_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
