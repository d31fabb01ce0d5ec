"""Every error charter raises, each with a stable machine-readable ``code``.

The tree::

    CharterError                      base; .code, .message (what was wrong and how to fix it)
    ├── ConfigurationError            CONFIG_INVALID: a setting or environment variable is wrong
    ├── ArgumentError                 ARGUMENT_INVALID: a call got an argument it cannot use
    ├── PermissionDeniedError         PERMISSION_DENIED: the database role (or the API key, or an
    │                                 org's client publishing a contract) may not do this
    ├── DatabaseError                 anything about reaching or using PostgreSQL
    │   ├── DatabaseUnreachableError  DATABASE_UNREACHABLE
    │   ├── DatabaseBusyError         DATABASE_TOO_MANY_CONNECTIONS (every slot is taken)
    │   ├── DatabaseConnectionLostError DATABASE_CONNECTION_LOST (mid-call; outcome unknown)
    │   ├── DatabaseVersionError      DATABASE_VERSION_UNSUPPORTED (older than PostgreSQL 15)
    │   ├── SchemaNotCurrentError     SCHEMA_NOT_CURRENT (a role without DDL met an old schema)
    │   └── EmbeddedDatabaseError     EMBEDDED_DATABASE_FAILED (and the codes below)
    │       ├── DataDirectoryError    EMBEDDED_DATA_DIR_UNUSABLE
    │       ├── PortInUseError        EMBEDDED_PORT_IN_USE
    │       └── EmbeddedPortMismatchError EMBEDDED_PORT_MISMATCH
    ├── MigrationError                MIGRATION_FAILED
    │   ├── MigrationChecksumError    MIGRATION_CHECKSUM_MISMATCH
    │   └── MigrationUnknownError     MIGRATION_UNKNOWN (database is newer than this charter)
    ├── CitusError                    CITUS_NOT_READY (not a coordinator with workers)
    ├── CanonicalJsonError            JSON_NOT_STABLE
    ├── FlowDefinitionError           FLOW_DEFINITION_INVALID; one subclass per rule:
    │   ├── FlowSlugInvalidError, FlowStepInvalidError, FlowStepDuplicateError,
    │   │   FlowDependencyUnknownError, FlowDependencyDuplicateError, FlowHandlerInvalidError,
    │   │   FlowHandlerParameterUnknownError, FlowMapSourceInvalidError, FlowOptionInvalidError,
    │   │   FlowEmptyError            FLOW_<RULE>
    │   └── WorkflowStructureError    WORKFLOW_INVALID (also a ContractError): WorkflowCycleError,
    │       WorkflowUnreachableError, WorkflowSplitInvalidError, WorkflowJoinInvalidError,
    │       WorkflowSystemIntegrityError                              WORKFLOW_<RULE>
    ├── CompiledWorkflowError         WORKFLOW_ARTIFACT_INVALID (WF-07):
    │   ├── WorkflowCompilerStaleError    WORKFLOW_COMPILER_STALE
    │   ├── WorkflowHashMismatchError     WORKFLOW_HASH_MISMATCH
    │   ├── WorkflowArtifactMissingError  WORKFLOW_ARTIFACT_MISSING
    │   └── WorkflowArtifactUnverifiedError WORKFLOW_ARTIFACT_UNVERIFIED (not verified by a
    │                                     worker yet, or refused by it)
    ├── FlowLoadError                 FLOW_LOAD_FAILED (a module:attribute gave no flows)
    ├── FlowShapeInvalidError         FLOW_SHAPE_INVALID (a shape sent to SQL is malformed)
    ├── FlowShapeMismatchError        FLOW_SHAPE_MISMATCH (production flow differs from code)
    ├── FlowNotFoundError             FLOW_NOT_FOUND
    ├── WorkflowVersionImmutableError WORKFLOW_VERSION_IMMUTABLE (WF-04)
    ├── StepInputError                STEP_INPUT_INVALID (an input fails the handler's hints)
    ├── StepOutputError               STEP_OUTPUT_INVALID (a result fails the return hint)
    ├── RunNotFoundError              RUN_NOT_FOUND
    ├── RunIdConflictError            RUN_ID_CONFLICT (same run id, other flow or input)
    ├── RunStateError                 RUN_STATE_INVALID (e.g. cancelling a completed run)
    ├── RunInputError                 RUN_INPUT_INVALID (not JSON, or not what the flow needs)
    ├── ReadinessOverflowError        READINESS_OVERFLOW (a bug guard: never expected)
    ├── RunWaitTimeoutError           RUN_WAIT_TIMEOUT (wait() gave up; the run goes on)
    ├── ExpressionError               EXPR_INVALID; .line and .column locate the problem:
    │   └── ExprSyntaxError, ExprUnknownVariableError, ExprTypeMismatchError,
    │       ExprTooLongError, ExprTooDeepError, ExprTooManyDereferencesError,
    │       ExprForbiddenError                                        EXPR_<RULE>
    ├── DocumentError                 the documents kernel (seed 002), one class per refusal:
    │   ├── DocumentNotFoundError         DOCUMENT_NOT_FOUND (also: another org's document)
    │   ├── DocumentExistsError           DOCUMENT_EXISTS
    │   ├── DocumentVersionConflictError  DOCUMENT_VERSION_CONFLICT (expected_version)
    │   ├── DocumentInvalidError          DOCUMENT_INVALID (a field, its type)
    │   ├── DocumentTooLargeError         DOCUMENT_TOO_LARGE (its data past the size limit)
    │   ├── PolicyDeniedError             POLICY_DENIED (actor, action, rule)
    │   ├── WorkflowEditLockedError       WORKFLOW_EDIT_LOCKED (edit window)
    │   ├── LifecycleTransitionError      LIFECYCLE_TRANSITION_INVALID
    │   ├── ActorUnknownError             ACTOR_UNKNOWN (not in the org's directory)
    │   ├── EntityTypeUnknownError        ENTITY_TYPE_UNKNOWN (no published contract)
    │   ├── OrgMismatchError              ORG_MISMATCH (two orgs in one transaction)
    │   ├── DefinitionNotFoundError       DEFINITION_NOT_FOUND
    │   ├── WorkflowGatePendingError      WORKFLOW_GATE_PENDING (the workflow passes this gate)
    │   ├── DocumentAmendedError          DOCUMENT_AMENDED (superseded: work on its amendment)
    │   ├── DefinitionChangedError        DEFINITION_CHANGED (published or archived mid-rebase)
    │   ├── DefinitionRollbackInvalidError DEFINITION_ROLLBACK_INVALID (not a published one)
    │   ├── WorkflowPausedError           WORKFLOW_PAUSED (its instance is paused: resume it)
    │   └── DocumentWaitTimeoutError      DOCUMENT_WAIT_TIMEOUT (documents.wait gave up)
    ├── WorkflowRuntimeError          WORKFLOW_RUNTIME_ERROR: why an instance failed at a node
    │   ├── ConditionNoMatchError         CONDITION_NO_MATCH (no edge matched, no default)
    │   ├── WorkflowVersionDriftError     WORKFLOW_VERSION_DRIFT (WF-05)
    │   ├── WorkflowNodeError             WORKFLOW_NODE_INVALID (e.g. an until that is no time)
    │   ├── ApproversEmptyError           APPROVERS_EMPTY (an approval's approvers: nobody)
    │   ├── DeliveryFailedError           DELIVERY_FAILED (a side effect dead-lettered)
    │   │   ├── WebhookDestinationDeniedError WEBHOOK_DESTINATION_DENIED (loopback, private,
    │   │   │                             link-local…: not in CHARTER_WEBHOOK_ALLOW)
    │   │   └── ChannelNotConfiguredError CHANNEL_NOT_CONFIGURED (no running worker can send
    │   │                                 it: e.g. email without CHARTER_SMTP_URL)
    │   ├── StuckForceFailedError         STUCK_FORCE_FAILED (an admin failed a stuck one)
    │   └── WaitTimedOutError             WAIT_TIMED_OUT (no event, no timeout edge)
    ├── EventInvalidError             EVENT_INVALID (an event's key or id)
    ├── RuleNotFoundError             RULE_NOT_FOUND (the org's rule store)
    ├── ProductionClockError          TEST_CLOCK_DISABLED (the test clock outside development)
    ├── ScheduleInvalidError          SCHEDULE_INVALID (name, cron, time zone, target, policy)
    ├── ApprovalError                 APPROVAL_ERROR: a decision or chain was refused:
    │   └── ApprovalVersionStaleError, ApprovalNotApproverError, ApprovalAlreadyDecidedError,
    │       ApprovalClosedError, ApprovalSelfApprovalError, ApprovalApproverExcludedError,
    │       ApprovalNotFoundError, ApprovalChainInvalidError          APPROVAL_<RULE>
    ├── SideEffectInvalidError        SIDE_EFFECT_INVALID (a webhook, task or email to enqueue)
    ├── DeadLetterNotFoundError       DEAD_LETTER_NOT_FOUND (retry/drop of a non-dead letter)
    ├── NotificationNotFoundError     NOTIFICATION_NOT_FOUND (mark_read of another's)
    ├── ApiKeyInvalidError            API_KEY_INVALID (a key for an unknown actor)
    ├── TemplateNotFoundError         TEMPLATE_NOT_FOUND (no library template of that name)
    ├── ArchiveDateInvalidError       ARCHIVE_DATE_INVALID (--archive-before: not a past day)
    ├── ContractError                 CONTRACT_INVALID; one subclass per rule (.slot_id,
    │   │                             .node_id, .edge_id, .path, .caret: where, if known):
    │   ├── ContractPolicyMissingError    CONTRACT_POLICY_MISSING (a gate or action no policy
    │   │                                 grants, and no "*" default: nobody may pass it)
    │   ├── ContractDisplayInvalidError   DISPLAY_INVALID (display: an unknown field, more
    │   │                                 than 6 summary fields, a malformed title template)
    │   ├── OrgDefinitionInvalidError, EnvelopeSlotInvalidError, EnvelopeNoEndError,
    │   │   EnvelopeMismatchError, EnvelopeVersionMismatchError, NodeConfigInvalidError,
    │   │   SlotUnknownError, SlotPatchEmptyError, SlotNodeIdInvalidError,
    │   │   SlotNodeDuplicateError, SlotNodeTypeReservedError, SlotEdgeIdInvalidError,
    │   │   SlotEdgeOutOfScopeError, SlotEdgeConditionInvalidError, SlotEntryInvalidError,
    │   │   SlotExitInvalidError, SlotEditWindowLooserError    ORG_/ENVELOPE_/NODE_/SLOT_<RULE>
    │   └── ContractVersionStaleError CONTRACT_VERSION_STALE (a changed contract, old version)
    └── RegistryError                 the definition registry (seed 001)
        ├── WorkflowExistsError           WORKFLOW_EXISTS
        ├── WorkflowNotFoundError         WORKFLOW_NOT_FOUND
        ├── VersionExistsError            VERSION_EXISTS
        ├── VersionIdTakenError           VERSION_ID_TAKEN (the id belongs to another workflow)
        ├── VersionNotFoundError          VERSION_NOT_FOUND
        ├── ParentVersionNotFoundError    PARENT_VERSION_NOT_FOUND
        ├── InvocationIdRequiredError     INVOCATION_ID_REQUIRED
        ├── InvocationExistsError         INVOCATION_EXISTS
        ├── InvocationIdTakenError        INVOCATION_ID_TAKEN (the id belongs to another version)
        ├── WorkflowMismatchError         WORKFLOW_MISMATCH (version of another workflow)
        └── RegistryInputError            REGISTRY_INPUT_INVALID

Each class declares its code, and, when SQL raises it, its SQLSTATE (class ``CH``), on
the class itself: ``class RunNotFoundError(CharterError, code="RUN_NOT_FOUND",
sqlstate="CH005")``. One code, one class: the SQL-to-Python mapping
(:func:`for_sqlstate`) and the table in ``docs/errors.md`` (:func:`error_table`) are read
from these declarations. A family raised with a rule's code, ``ContractError(msg,
code="SLOT_UNKNOWN")``, is an instance of that rule's class.
"""

from __future__ import annotations

from typing import Any, ClassVar

_BY_CODE: dict[str, type[CharterError]] = {}
_BY_SQLSTATE: dict[str, type[CharterError]] = {}


class CharterError(Exception):
    """Base of all charter errors. ``code`` is stable; ``message`` is for people."""

    code: ClassVar[str] = "CHARTER_ERROR"
    sqlstate: ClassVar[str | None] = None

    def __init_subclass__(
        cls, *, code: str | None = None, sqlstate: str | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if code is None:
            raise TypeError(f"{cls.__name__} must declare its code=")
        if code in _BY_CODE:
            raise TypeError(f"{cls.__name__}: code {code} already belongs to {_BY_CODE[code]}")
        cls.code = code
        _BY_CODE[code] = cls
        cls.sqlstate = sqlstate
        if sqlstate is not None:
            if sqlstate in _BY_SQLSTATE:
                raise TypeError(f"{cls.__name__}: SQLSTATE {sqlstate} is taken")
            _BY_SQLSTATE[sqlstate] = cls

    def __new__(cls, *args: Any, code: str | None = None, **kwargs: Any) -> CharterError:
        target: type[CharterError] = cls
        if code is not None and code != cls.code:
            found = _BY_CODE.get(code)
            if found is None or not issubclass(found, cls):
                raise TypeError(f"{code} is not the code of {cls.__name__} or of a subclass")
            target = found
        return super().__new__(target, *args)

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


def for_code(code: str) -> type[CharterError] | None:
    return _BY_CODE.get(code)


def for_sqlstate(sqlstate: str) -> type[CharterError] | None:
    """The class SQL raises with this SQLSTATE, or None."""
    return _BY_SQLSTATE.get(sqlstate)


def with_code(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """A failure as SQL records it (``sqlstate``, ``message``, ``node``…) with its stable
    ``code`` too, from the class of its SQLSTATE (``CH051`` → ``APPROVERS_EMPTY``)."""
    if not error or error.get("code") or not isinstance(error.get("sqlstate"), str):
        return error
    cls = for_sqlstate(error["sqlstate"])
    return {**error, "code": cls.code} if cls else error


def all_errors() -> list[type[CharterError]]:
    return sorted(_BY_CODE.values(), key=lambda cls: cls.code)


def errors_document() -> str:
    """docs/errors.md, made from the classes below (``charter errors > docs/errors.md``); a
    test checks the file is current."""
    return (
        "# Errors\n\n"
        "Every error charter raises has a stable code. Python raises the class; the CLI prints\n"
        "`error [CODE] message`; SQL raises the SQLSTATE, which the client turns back into the\n"
        "class. This page is generated from `charter/errors.py` (`charter errors`).\n\n"
        + error_table()
    )


def error_table() -> str:
    """The Markdown table of every code, one row per class."""
    lines = ["| code | class | SQLSTATE | meaning |", "| --- | --- | --- | --- |"]
    for cls in all_errors():
        meaning = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        lines.append(f"| `{cls.code}` | `{cls.__name__}` | {cls.sqlstate or ''} | {meaning} |")
    return "\n".join(lines) + "\n"


class ConfigurationError(CharterError, code="CONFIG_INVALID", sqlstate="CH004"):
    """A setting, environment variable or option is wrong."""


class ArgumentError(CharterError, ValueError, code="ARGUMENT_INVALID", sqlstate="CH022"):
    """A call got an argument it cannot use (an unknown status, a run id with U+0000…)."""


class PermissionDeniedError(CharterError, code="PERMISSION_DENIED", sqlstate="CH085"):
    """The database role may not do this (least-privilege roles), or the caller may not:
    an API key without the right, or an org's client publishing a new contract (a platform
    act). The message says who may."""


class DatabaseError(CharterError, code="DATABASE_ERROR"):
    """Reaching or using PostgreSQL failed."""


class DatabaseUnreachableError(DatabaseError, code="DATABASE_UNREACHABLE"):
    """charter could not connect to PostgreSQL."""


class DatabaseBusyError(DatabaseError, code="DATABASE_TOO_MANY_CONNECTIONS"):
    """The server refused a connection because every slot is taken (max_connections, or a
    database's or role's CONNECTION LIMIT)."""


class DatabaseConnectionLostError(DatabaseError, code="DATABASE_CONNECTION_LOST"):
    """The connection broke during a call that is not safe to repeat: it may or may not
    have taken effect; the message says how to check."""


class DatabaseVersionError(DatabaseError, code="DATABASE_VERSION_UNSUPPORTED"):
    """The server is older than PostgreSQL 15."""


class SchemaNotCurrentError(DatabaseError, code="SCHEMA_NOT_CURRENT"):
    """Schema charter is missing or older than this charter, and the role in use may not
    migrate it; the owner must run `charter migrate`."""


class EmbeddedDatabaseError(DatabaseError, code="EMBEDDED_DATABASE_FAILED"):
    """charter's embedded PostgreSQL could not be set up or started."""


class DataDirectoryError(EmbeddedDatabaseError, code="EMBEDDED_DATA_DIR_UNUSABLE"):
    """The embedded server's data directory cannot be used (left untouched)."""


class PortInUseError(EmbeddedDatabaseError, code="EMBEDDED_PORT_IN_USE"):
    """CHARTER_EMBEDDED_PORT is taken by another program."""


class EmbeddedPortMismatchError(EmbeddedDatabaseError, code="EMBEDDED_PORT_MISMATCH"):
    """The embedded server already runs, listening elsewhere than CHARTER_EMBEDDED_PORT
    asks."""


class MigrationError(CharterError, code="MIGRATION_FAILED"):
    """A migration file failed; nothing was changed."""


class CitusError(CharterError, code="CITUS_NOT_READY"):
    """The database is not a Citus coordinator with workers, so charter cannot be
    distributed on it; the message names the step that is missing."""


class MigrationChecksumError(MigrationError, code="MIGRATION_CHECKSUM_MISMATCH"):
    """An applied migration's file was edited afterwards."""


class MigrationUnknownError(MigrationError, code="MIGRATION_UNKNOWN"):
    """The database was migrated by a newer charter."""


class CanonicalJsonError(CharterError, ValueError, code="JSON_NOT_STABLE"):
    """A value has no canonical JSON form (NaN, sets, datetimes…)."""


class FlowDefinitionError(CharterError, ValueError, code="FLOW_DEFINITION_INVALID"):
    """A flow breaks a rule; the subclass's code names the rule."""


class FlowSlugInvalidError(FlowDefinitionError, code="FLOW_SLUG_INVALID"):
    """A flow or step slug is not a valid name, too long, or reserved."""


class FlowStepInvalidError(FlowDefinitionError, code="FLOW_STEP_INVALID"):
    """A step handler is not a function."""


class FlowStepDuplicateError(FlowDefinitionError, code="FLOW_STEP_DUPLICATE"):
    """A step slug is used twice, or a function is decorated twice."""


class FlowDependencyUnknownError(FlowDefinitionError, code="FLOW_DEPENDENCY_UNKNOWN"):
    """A dependency is not a step of this flow (defined above it)."""


class FlowDependencyDuplicateError(FlowDefinitionError, code="FLOW_DEPENDENCY_DUPLICATE"):
    """A dependency is listed twice."""


class FlowHandlerInvalidError(FlowDefinitionError, code="FLOW_HANDLER_INVALID"):
    """A handler's signature cannot receive its inputs."""


class FlowHandlerParameterUnknownError(FlowDefinitionError, code="FLOW_HANDLER_PARAMETER_UNKNOWN"):
    """A handler parameter names no dependency (nor run, ctx)."""


class FlowMapSourceInvalidError(FlowDefinitionError, code="FLOW_MAP_SOURCE_INVALID"):
    """A map step's source is not one array source."""


class FlowOptionInvalidError(FlowDefinitionError, code="FLOW_OPTION_INVALID"):
    """An option is out of range or unknown."""


class FlowEmptyError(FlowDefinitionError, code="FLOW_EMPTY"):
    """A flow has no steps."""


class ContractError(CharterError, ValueError, code="CONTRACT_INVALID"):
    """An entity contract, envelope, org definition or slot patch breaks a rule; the
    subclass's code names it."""

    # Where the problem is, when the compiler knows, so an editor can mark it: the slot,
    # node and edge ids (``node_ids`` when several nodes share one problem), the setting's
    # path (``config.expression``, ``condition``), and for an expression the line and the
    # 0-based column of the error (``caret``).
    slot_id: str | None = None
    node_id: str | None = None
    edge_id: str | None = None
    node_ids: tuple[str, ...] = ()
    path: str | None = None
    line: int | None = None
    caret: int | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        slot_id: str | None = None,
        node_id: str | None = None,
        edge_id: str | None = None,
        node_ids: tuple[str, ...] = (),
        path: str | None = None,
        line: int | None = None,
        caret: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.slot_id, self.node_id, self.edge_id = slot_id, node_id, edge_id
        self.node_ids = node_ids or ((node_id,) if node_id else ())
        self.path, self.line, self.caret = path, line, caret


class WorkflowStructureError(FlowDefinitionError, ContractError, code="WORKFLOW_INVALID"):
    """A workflow graph breaks a structural rule (flows and document workflows alike)."""


class WorkflowCycleError(WorkflowStructureError, code="WORKFLOW_CYCLE", sqlstate="CH145"):
    """The graph has a cycle outside the envelope's lifecycle loops."""


class WorkflowUnreachableError(
    WorkflowStructureError, code="WORKFLOW_UNREACHABLE", sqlstate="CH146"
):
    """A node cannot be reached from the start or cannot reach the end."""


class WorkflowSplitInvalidError(
    WorkflowStructureError, code="WORKFLOW_SPLIT_INVALID", sqlstate="CH148"
):
    """A parallel split has fewer than two paths."""


class WorkflowJoinInvalidError(
    WorkflowStructureError, code="WORKFLOW_JOIN_INVALID", sqlstate="CH147"
):
    """A parallel join does not match its split."""


class WorkflowSystemIntegrityError(
    WorkflowStructureError, code="WORKFLOW_SYSTEM_INTEGRITY", sqlstate="CH140"
):
    """WF-08: a system node or edge of the envelope was changed or removed."""


class ContractPolicyMissingError(ContractError, code="CONTRACT_POLICY_MISSING", sqlstate="CH090"):
    """A contract states no policy for a gate or a declared action, and no ``"*"`` default:
    what no policy grants is refused (at publish, and by ``mutate()`` for a contract stored
    before the rule)."""


class OrgDefinitionInvalidError(ContractError, code="ORG_DEFINITION_INVALID"):
    """An org workflow definition is malformed."""


class EnvelopeSlotInvalidError(ContractError, code="ENVELOPE_SLOT_INVALID"):
    """A slot does not sit on one direct envelope edge."""


class EnvelopeNoEndError(ContractError, code="ENVELOPE_NO_END"):
    """A lifecycle has no state that ends it."""


class EnvelopeMismatchError(ContractError, code="ENVELOPE_MISMATCH"):
    """An org definition names another envelope."""


class EnvelopeVersionMismatchError(ContractError, code="ENVELOPE_VERSION_MISMATCH"):
    """An org definition names another envelope version."""


class ContractVersionStaleError(ContractError, code="CONTRACT_VERSION_STALE", sqlstate="CH086"):
    """A contract differs from the published one of its version, or is older than the
    newest: a version is published once, so a changed contract needs a higher version."""


class ContractDisplayInvalidError(ContractError, code="DISPLAY_INVALID", sqlstate="CH151"):
    """A contract's ``display`` (title template, list columns, summary) names an undeclared
    field, lists more than 6 summary fields, or has a malformed title template."""


class NodeConfigInvalidError(ContractError, code="NODE_CONFIG_INVALID", sqlstate="CH150"):
    """A node's configuration is invalid for its type (refused by the compiler, or at publish
    when SQL checks it against the node type's schema)."""


class SlotUnknownError(ContractError, code="SLOT_UNKNOWN"):
    """A patch names a slot the contract does not declare."""


class SlotPatchEmptyError(ContractError, code="SLOT_PATCH_EMPTY"):
    """A slot patch has no nodes."""


class SlotNodeIdInvalidError(ContractError, code="SLOT_NODE_ID_INVALID", sqlstate="CH142"):
    """A slot node id is outside its slot's namespace (WF-06)."""


class SlotNodeDuplicateError(ContractError, code="SLOT_NODE_DUPLICATE"):
    """A slot node id is used twice."""


class SlotNodeTypeReservedError(ContractError, code="SLOT_NODE_TYPE_RESERVED", sqlstate="CH143"):
    """A slot node uses a system-only node type (WF-06)."""


class SlotEdgeIdInvalidError(ContractError, code="SLOT_EDGE_ID_INVALID"):
    """A slot edge id is invalid or duplicated."""


class SlotEdgeOutOfScopeError(ContractError, code="SLOT_EDGE_OUT_OF_SCOPE", sqlstate="CH141"):
    """A slot edge leaves its slot (WF-06)."""


class SlotEdgeConditionInvalidError(ContractError, code="SLOT_EDGE_CONDITION_INVALID"):
    """A slot edge's condition is invalid."""


class SlotEntryInvalidError(ContractError, code="SLOT_ENTRY_INVALID"):
    """A slot's entry does not match its kind (serial, branch)."""


class SlotExitInvalidError(ContractError, code="SLOT_EXIT_INVALID"):
    """A slot's exit does not match its kind (single, join)."""


class SlotEditWindowLooserError(ContractError, code="SLOT_EDIT_WINDOW_LOOSER", sqlstate="CH144"):
    """A slot override loosens an edit window (only stricter is allowed), or a published
    effective workflow loosens or drops one of its envelope's or slot's windows."""


class CompiledWorkflowError(CharterError, code="WORKFLOW_ARTIFACT_INVALID"):
    """A compiled workflow cannot be trusted (WF-07)."""


class WorkflowCompilerStaleError(CompiledWorkflowError, code="WORKFLOW_COMPILER_STALE"):
    """The artifact was made by another compiler version; the owner runs `charter
    recompile`."""


class WorkflowHashMismatchError(
    CompiledWorkflowError, code="WORKFLOW_HASH_MISMATCH", sqlstate="CH149"
):
    """The artifact was changed after it was compiled (found at run time, or at publish when
    SQL recomputes the hash from its canonical JSON)."""


class WorkflowArtifactMissingError(
    CompiledWorkflowError, code="WORKFLOW_ARTIFACT_MISSING", sqlstate="CH023"
):
    """A version has no compiled artifact, so it cannot run; the owner runs `charter
    recompile`."""


class FlowLoadError(CharterError, code="FLOW_LOAD_FAILED"):
    """MODULE[:ATTRIBUTE] gave no flows."""


class FlowShapeInvalidError(CharterError, code="FLOW_SHAPE_INVALID", sqlstate="CH001"):
    """A flow shape sent to SQL is malformed."""


class FlowShapeMismatchError(CharterError, code="FLOW_SHAPE_MISMATCH"):
    """In production, the database holds a flow with another shape than the code."""

    def __init__(
        self,
        message: str,
        *,
        flow_slug: str = "",
        differences: list[str] | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.flow_slug = flow_slug
        self.differences = differences or []


class FlowNotFoundError(CharterError, code="FLOW_NOT_FOUND", sqlstate="CH003"):
    """The flow is not in the database."""


class WorkflowVersionImmutableError(
    CharterError, code="WORKFLOW_VERSION_IMMUTABLE", sqlstate="CH002"
):
    """WF-04: published versions and evidence cannot change."""


class StepInputError(CharterError, code="STEP_INPUT_INVALID"):
    """An input fails the handler's type hints."""


class StepOutputError(CharterError, code="STEP_OUTPUT_INVALID"):
    """A handler's result fails its return hint or cannot be stored."""


class RunNotFoundError(CharterError, code="RUN_NOT_FOUND", sqlstate="CH005"):
    """No run has this id."""


class RunIdConflictError(CharterError, code="RUN_ID_CONFLICT", sqlstate="CH006"):
    """The run id names a run of another flow or input."""


class RunStateError(CharterError, code="RUN_STATE_INVALID", sqlstate="CH007"):
    """The run's status does not allow this (cancelling a completed run…)."""


class RunInputError(CharterError, code="RUN_INPUT_INVALID", sqlstate="CH008"):
    """A run input (or run id) is not what charter or the flow accepts."""


class ReadinessOverflowError(CharterError, code="READINESS_OVERFLOW", sqlstate="CH009"):
    """A bug guard: a step received more arrivals than it has dependencies."""


class RunWaitTimeoutError(CharterError, TimeoutError, code="RUN_WAIT_TIMEOUT"):
    """wait() gave up; the run goes on."""


class RegistryError(CharterError, code="REGISTRY_ERROR"):
    """The definition registry (seed 001) refused a call."""


class WorkflowExistsError(RegistryError, code="WORKFLOW_EXISTS", sqlstate="CH010"):
    """The workflow exists (on_existing='error')."""


class WorkflowNotFoundError(RegistryError, code="WORKFLOW_NOT_FOUND", sqlstate="CH011"):
    """The workflow does not exist."""


class VersionExistsError(RegistryError, code="VERSION_EXISTS", sqlstate="CH012"):
    """The version exists (on_existing='error')."""


class VersionIdTakenError(RegistryError, code="VERSION_ID_TAKEN", sqlstate="CH013"):
    """The version id belongs to another workflow."""


class VersionNotFoundError(RegistryError, code="VERSION_NOT_FOUND", sqlstate="CH014"):
    """The version does not exist (or is not runnable for this flow)."""


class ParentVersionNotFoundError(RegistryError, code="PARENT_VERSION_NOT_FOUND", sqlstate="CH015"):
    """A parent version does not exist."""


class InvocationIdRequiredError(RegistryError, code="INVOCATION_ID_REQUIRED", sqlstate="CH016"):
    """An invocation needs an id from its runner."""


class InvocationExistsError(RegistryError, code="INVOCATION_EXISTS", sqlstate="CH017"):
    """The invocation exists (on_existing='error')."""


class InvocationIdTakenError(RegistryError, code="INVOCATION_ID_TAKEN", sqlstate="CH018"):
    """The invocation id belongs to another version."""


class WorkflowMismatchError(RegistryError, code="WORKFLOW_MISMATCH", sqlstate="CH019"):
    """The version belongs to another workflow."""


class RegistryInputError(RegistryError, code="REGISTRY_INPUT_INVALID", sqlstate="CH020"):
    """A registry argument is invalid."""


class ExpressionError(CharterError, ValueError, code="EXPR_INVALID", sqlstate="CH021"):
    """An expression broke a rule; the subclass's code names it and ``line``/``column``
    say where."""

    line: int = 1
    column: int = 1


class ExprSyntaxError(ExpressionError, code="EXPR_SYNTAX"):
    """The expression does not parse."""


class ExprUnknownVariableError(ExpressionError, code="EXPR_UNKNOWN_VARIABLE"):
    """A path names no variable or declared field."""


class ExprTypeMismatchError(ExpressionError, code="EXPR_TYPE_MISMATCH"):
    """An operator gets operands of the wrong type."""


class ExprTooLongError(ExpressionError, code="EXPR_TOO_LONG"):
    """The expression is longer than 500 characters."""


class ExprTooDeepError(ExpressionError, code="EXPR_TOO_DEEP"):
    """The expression nests deeper than 10."""


class ExprTooManyDereferencesError(ExpressionError, code="EXPR_TOO_MANY_DEREFERENCES"):
    """The expression has more than 20 dereferences."""


class ExprForbiddenError(ExpressionError, code="EXPR_FORBIDDEN"):
    """The expression uses a construct the language forbids (calls, +, loops…)."""


class DocumentError(CharterError, code="DOCUMENT_ERROR"):
    """The documents kernel refused a call."""


class DocumentNotFoundError(DocumentError, code="DOCUMENT_NOT_FOUND", sqlstate="CH030"):
    """No document (or version) with this id in the calling org."""


class DocumentVersionConflictError(
    DocumentError, code="DOCUMENT_VERSION_CONFLICT", sqlstate="CH031"
):
    """The document is not at expected_version: someone changed it meanwhile."""


class DocumentInvalidError(DocumentError, code="DOCUMENT_INVALID", sqlstate="CH032"):
    """A field is undeclared, of the wrong type, or not one the action may set."""


class DocumentTooLargeError(DocumentError, code="DOCUMENT_TOO_LARGE", sqlstate="CH100"):
    """A document's data, as JSON text, is larger than its contract's ``maxDocumentBytes``
    or the database's ``charter.max_document_bytes`` (default 1 MiB)."""


class PolicyDeniedError(DocumentError, code="POLICY_DENIED", sqlstate="CH033"):
    """The contract's policy does not allow this actor this action."""


class WorkflowEditLockedError(DocumentError, code="WORKFLOW_EDIT_LOCKED", sqlstate="CH034"):
    """The document's edit window is locked; amend it instead."""


class LifecycleTransitionError(
    DocumentError, code="LIFECYCLE_TRANSITION_INVALID", sqlstate="CH035"
):
    """No such gate, action or legal transition from the document's state."""


class ActorUnknownError(DocumentError, code="ACTOR_UNKNOWN", sqlstate="CH036"):
    """The actor is not in the org's directory."""


class EntityTypeUnknownError(DocumentError, code="ENTITY_TYPE_UNKNOWN", sqlstate="CH037"):
    """No contract is published for the entity type."""


class OrgMismatchError(DocumentError, code="ORG_MISMATCH", sqlstate="CH038"):
    """The transaction is scoped to another org than the call."""


class DocumentExistsError(DocumentError, code="DOCUMENT_EXISTS", sqlstate="CH039"):
    """A document with this id exists already."""


class DefinitionNotFoundError(DocumentError, code="DEFINITION_NOT_FOUND", sqlstate="CH040"):
    """No org definition with this version id in the calling org."""


class WorkflowGatePendingError(DocumentError, code="WORKFLOW_GATE_PENDING", sqlstate="CH041"):
    """The gate is passed by the document's workflow when its body finishes, not by a user."""


class DocumentAmendedError(DocumentError, code="DOCUMENT_AMENDED", sqlstate="CH075"):
    """The document was amended: it no longer changes; the message names its amendment."""


class DefinitionChangedError(DocumentError, code="DEFINITION_CHANGED", sqlstate="CH087"):
    """The org published or archived a definition while a rebase recompiled the one before;
    rebase again."""


class DefinitionRollbackInvalidError(
    DocumentError, code="DEFINITION_ROLLBACK_INVALID", sqlstate="CH121"
):
    """Only a published org definition of the same entity type can be published again: not
    a draft, an archived version, or another entity type's."""


class TemplateNotFoundError(CharterError, code="TEMPLATE_NOT_FOUND"):
    """No template of the library has this name (``charter templates`` lists them)."""


class WorkflowPausedError(DocumentError, code="WORKFLOW_PAUSED", sqlstate="CH080"):
    """The document's workflow instance is paused: no transition until it is resumed."""


class WorkflowRuntimeError(CharterError, code="WORKFLOW_RUNTIME_ERROR"):
    """A document's workflow instance failed at a node (the instance records the error)."""


class ConditionNoMatchError(WorkflowRuntimeError, code="CONDITION_NO_MATCH", sqlstate="CH042"):
    """No edge of a condition or rule node matched and it has no default edge."""


class WorkflowVersionDriftError(
    WorkflowRuntimeError, code="WORKFLOW_VERSION_DRIFT", sqlstate="CH043"
):
    """The document changed in a stable region where the work could not be withdrawn (WF-05),
    or moved where its instance could not follow."""


class EventInvalidError(CharterError, ValueError, code="EVENT_INVALID", sqlstate="CH044"):
    """An event's key or id is not acceptable."""


class RuleNotFoundError(CharterError, code="RULE_NOT_FOUND", sqlstate="CH045"):
    """The org's rule store has no such rule (or version), or the rule id is not valid."""


class WorkflowNodeError(WorkflowRuntimeError, code="WORKFLOW_NODE_INVALID", sqlstate="CH046"):
    """A node's configuration gave something the engine cannot use (e.g. an until that is no
    time)."""


class ProductionClockError(CharterError, code="TEST_CLOCK_DISABLED", sqlstate="CH047"):
    """The test clock moves only in development mode."""


class WorkflowArtifactUnverifiedError(
    CompiledWorkflowError, code="WORKFLOW_ARTIFACT_UNVERIFIED", sqlstate="CH048"
):
    """A worker has not verified (or refused) the workflow version's artifact (WF-07)."""


class WaitTimedOutError(WorkflowRuntimeError, code="WAIT_TIMED_OUT", sqlstate="CH049"):
    """An event did not arrive before its wait's timeout, and the node has no timeout edge."""


class DocumentWaitTimeoutError(DocumentError, TimeoutError, code="DOCUMENT_WAIT_TIMEOUT"):
    """documents.wait gave up; the document's workflow goes on."""


class ScheduleInvalidError(CharterError, ValueError, code="SCHEDULE_INVALID", sqlstate="CH050"):
    """A schedule's name, cron expression, time zone, target or missed-tick policy is wrong."""


class ApprovalError(CharterError, code="APPROVAL_ERROR"):
    """An approval call was refused; nothing was recorded."""


class ApproversEmptyError(WorkflowRuntimeError, code="APPROVERS_EMPTY", sqlstate="CH051"):
    """An approval's approvers resolve to nobody, or to nobody who may approve it (the
    requester and the authors of the changes it covers never do), or its chain is not
    defined."""


class ApprovalVersionStaleError(ApprovalError, code="APPROVAL_VERSION_STALE", sqlstate="CH052"):
    """The decision is not for the version the request is pinned to, or the document moved on."""


class ApprovalNotApproverError(ApprovalError, code="APPROVAL_NOT_APPROVER", sqlstate="CH053"):
    """The actor is not an approver of the request."""


class ApprovalAlreadyDecidedError(ApprovalError, code="APPROVAL_ALREADY_DECIDED", sqlstate="CH054"):
    """The actor decided this request already."""


class ApprovalClosedError(ApprovalError, code="APPROVAL_CLOSED", sqlstate="CH055"):
    """The request is approved, rejected, cancelled or voided already."""


class ApprovalSelfApprovalError(ApprovalError, code="APPROVAL_SELF_APPROVAL", sqlstate="CH056"):
    """The requester may not approve their own request."""


class ApprovalApproverExcludedError(
    ApprovalError, code="APPROVAL_APPROVER_EXCLUDED", sqlstate="CH070"
):
    """Segregation of duties leaves the actor out of this request: they authored a change of
    the document since its last approved version, or decided an earlier stage of its chain."""


class ApprovalNotFoundError(ApprovalError, code="APPROVAL_NOT_FOUND", sqlstate="CH057"):
    """No such request in the org, or no such decision."""


class ApprovalChainInvalidError(
    ApprovalError, ValueError, code="APPROVAL_CHAIN_INVALID", sqlstate="CH058"
):
    """A chain's id or stages are not acceptable."""


class DeliveryFailedError(WorkflowRuntimeError, code="DELIVERY_FAILED", sqlstate="CH059"):
    """A side effect was dead-lettered and its node has no `failed` edge."""


class WebhookDestinationDeniedError(
    DeliveryFailedError, code="WEBHOOK_DESTINATION_DENIED", sqlstate="CH105"
):
    """A webhook's URL resolved to an address the destination policy refuses (loopback,
    link-local or the metadata address, private, multicast, reserved), in whatever spelling;
    it is dead-lettered at once. Send it somewhere public, or opt the network in with
    ``CHARTER_WEBHOOK_ALLOW`` (e.g. ``10.0.0.0/8``) in the worker's environment."""


class ChannelNotConfiguredError(
    DeliveryFailedError, code="CHANNEL_NOT_CONFIGURED", sqlstate="CH125"
):
    """A notification's channel is one no running worker can send (email without
    ``CHARTER_SMTP_URL``, SMS without ``CHARTER_SMS_URL``): it is dead-lettered at once
    rather than left pending. Configure the channel in a worker's environment, then re-drive
    the dead letter."""


class SideEffectInvalidError(
    CharterError, ValueError, code="SIDE_EFFECT_INVALID", sqlstate="CH060"
):
    """A side effect or task to enqueue is malformed (URL, method, type, payload)."""


class DeadLetterNotFoundError(CharterError, code="DEAD_LETTER_NOT_FOUND", sqlstate="CH061"):
    """No dead-lettered side effect with that id in the org."""


class NotificationNotFoundError(CharterError, code="NOTIFICATION_NOT_FOUND", sqlstate="CH062"):
    """No notification with that id for that user."""


class ApiKeyInvalidError(CharterError, ValueError, code="API_KEY_INVALID", sqlstate="CH063"):
    """An API key cannot be made for that actor (not in the org's directory, or malformed)."""


class StuckForceFailedError(WorkflowRuntimeError, code="STUCK_FORCE_FAILED", sqlstate="CH064"):
    """An admin failed an instance the stuck detector found (``retry_run`` resumes it)."""


class ArchiveDateInvalidError(
    CharterError, ValueError, code="ARCHIVE_DATE_INVALID", sqlstate="CH120"
):
    """``charter maintenance --archive-before`` needs a past day as YYYY-MM-DD (no later than
    today, UTC): months that ended on or before it are archived."""
