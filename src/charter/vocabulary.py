"""The value sets charter's tables and Python share: statuses and failure kinds.

Each is one ``StrEnum`` here and one ``CHECK`` in SQL; a test requires them to be equal, so
neither side can grow a value the other does not know. Members compare equal to their
strings (``RunStatus.COMPLETED == "completed"``).
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


TERMINAL_RUN_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
