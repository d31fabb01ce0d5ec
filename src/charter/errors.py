"""Every error charter raises, with a stable machine-readable ``code``.

The tree::

    CharterError                      base; .code, .message (what was wrong and how to fix it)
    ├── ConfigurationError            CONFIG_INVALID: a setting or environment variable is wrong
    ├── DatabaseError                 anything about reaching or using PostgreSQL
    │   ├── DatabaseUnreachableError  DATABASE_UNREACHABLE
    │   ├── DatabaseVersionError      DATABASE_VERSION_UNSUPPORTED (older than PostgreSQL 15)
    │   ├── DatabaseBusyError         DATABASE_TOO_MANY_CONNECTIONS (no free connection slot)
    │   └── EmbeddedDatabaseError     EMBEDDED_DATABASE_FAILED (and the codes below)
    │       ├── DataDirectoryError    EMBEDDED_DATA_DIR_UNUSABLE
    │       ├── PortInUseError        EMBEDDED_PORT_IN_USE
    │       └── EmbeddedPortMismatchError EMBEDDED_PORT_MISMATCH (runs on another port)
    ├── MigrationError                MIGRATION_FAILED
    │   ├── MigrationChecksumError    MIGRATION_CHECKSUM_MISMATCH
    │   └── MigrationUnknownError     MIGRATION_UNKNOWN (database is newer than this charter)
    ├── CanonicalJsonError            JSON_NOT_STABLE
    ├── FlowDefinitionError           FLOW_* (a flow breaks a rule; the code names the rule)
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
    ├── ExpressionError               EXPR_* (the rule broken; .line and .column locate it)
    ├── ContractError                 CONTRACT_INVALID, and the envelope and slot rules:
    │                                 ENVELOPE_*, SLOT_*, NODE_*, EDGE_*, WORKFLOW_* (the code
    │                                 names the rule, e.g. SLOT_EDGE_OUT_OF_SCOPE for WF-06)
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

Errors raised inside SQL use SQLSTATE class ``CH`` (see ``charter.db.sqlstate``) and map
back to one subclass each, so callers match on ``code``, never on message text.
"""

from __future__ import annotations


class CharterError(Exception):
    """Base of all charter errors. ``code`` is stable; ``message`` is for people."""

    code: str = "CHARTER_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ConfigurationError(CharterError):
    code = "CONFIG_INVALID"


class DatabaseError(CharterError):
    code = "DATABASE_ERROR"


class DatabaseUnreachableError(DatabaseError):
    code = "DATABASE_UNREACHABLE"


class DatabaseVersionError(DatabaseError):
    code = "DATABASE_VERSION_UNSUPPORTED"


class EmbeddedDatabaseError(DatabaseError):
    code = "EMBEDDED_DATABASE_FAILED"


class DataDirectoryError(EmbeddedDatabaseError):
    code = "EMBEDDED_DATA_DIR_UNUSABLE"


class PortInUseError(EmbeddedDatabaseError):
    code = "EMBEDDED_PORT_IN_USE"


class MigrationError(CharterError):
    code = "MIGRATION_FAILED"


class MigrationChecksumError(MigrationError):
    code = "MIGRATION_CHECKSUM_MISMATCH"


class MigrationUnknownError(MigrationError):
    code = "MIGRATION_UNKNOWN"


class CanonicalJsonError(CharterError, ValueError):
    code = "JSON_NOT_STABLE"


class FlowDefinitionError(CharterError, ValueError):
    """A flow breaks a rule. ``code`` names the rule, e.g. ``FLOW_DEPENDENCY_UNKNOWN``."""

    code = "FLOW_DEFINITION_INVALID"


class FlowLoadError(CharterError):
    code = "FLOW_LOAD_FAILED"


class FlowShapeInvalidError(CharterError):
    code = "FLOW_SHAPE_INVALID"


class FlowShapeMismatchError(CharterError):
    code = "FLOW_SHAPE_MISMATCH"

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


class FlowNotFoundError(CharterError):
    code = "FLOW_NOT_FOUND"


class WorkflowVersionImmutableError(CharterError):
    code = "WORKFLOW_VERSION_IMMUTABLE"


class StepInputError(CharterError):
    code = "STEP_INPUT_INVALID"


class StepOutputError(CharterError):
    code = "STEP_OUTPUT_INVALID"


class RunNotFoundError(CharterError):
    code = "RUN_NOT_FOUND"


class RunIdConflictError(CharterError):
    code = "RUN_ID_CONFLICT"


class RunStateError(CharterError):
    code = "RUN_STATE_INVALID"


class RunInputError(CharterError):
    code = "RUN_INPUT_INVALID"


class ReadinessOverflowError(CharterError):
    code = "READINESS_OVERFLOW"


class RunWaitTimeoutError(CharterError, TimeoutError):
    code = "RUN_WAIT_TIMEOUT"


class RegistryError(CharterError):
    code = "REGISTRY_ERROR"


class WorkflowExistsError(RegistryError):
    code = "WORKFLOW_EXISTS"


class WorkflowNotFoundError(RegistryError):
    code = "WORKFLOW_NOT_FOUND"


class VersionExistsError(RegistryError):
    code = "VERSION_EXISTS"


class VersionIdTakenError(RegistryError):
    code = "VERSION_ID_TAKEN"


class VersionNotFoundError(RegistryError):
    code = "VERSION_NOT_FOUND"


class ParentVersionNotFoundError(RegistryError):
    code = "PARENT_VERSION_NOT_FOUND"


class InvocationIdRequiredError(RegistryError):
    code = "INVOCATION_ID_REQUIRED"


class InvocationExistsError(RegistryError):
    code = "INVOCATION_EXISTS"


class InvocationIdTakenError(RegistryError):
    code = "INVOCATION_ID_TAKEN"


class WorkflowMismatchError(RegistryError):
    code = "WORKFLOW_MISMATCH"


class RegistryInputError(RegistryError):
    code = "REGISTRY_INPUT_INVALID"


class ExpressionError(CharterError, ValueError):
    """An expression broke a rule; ``code`` names it (EXPR_SYNTAX, EXPR_UNKNOWN_VARIABLE,
    EXPR_TYPE_MISMATCH, EXPR_TOO_LONG, EXPR_TOO_DEEP, EXPR_TOO_MANY_DEREFERENCES,
    EXPR_FORBIDDEN) and ``line``/``column`` say where."""

    code = "EXPR_INVALID"
    line: int = 1
    column: int = 1


class ContractError(CharterError, ValueError):
    """An entity contract, envelope, org definition or slot patch breaks a rule; ``code``
    names it."""

    code = "CONTRACT_INVALID"


class DatabaseBusyError(DatabaseError):
    """The server refused a connection because every slot is taken (max_connections, or a
    database's or role's CONNECTION LIMIT)."""

    code = "DATABASE_TOO_MANY_CONNECTIONS"


class EmbeddedPortMismatchError(EmbeddedDatabaseError):
    """The embedded server already runs, listening elsewhere than CHARTER_EMBEDDED_PORT
    asks."""

    code = "EMBEDDED_PORT_MISMATCH"
