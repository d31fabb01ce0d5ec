"""charter's errors as HTTP answers: JSON ``{"error": {"code", "message"}}`` with the status
a client can act on — 404 for what the org does not have (another org's ids included),
409 for a version or state conflict, 422 for invalid input, 403 for what policy refuses.

:func:`error_of` is the one mapping: the JSON API answers with it and the dashboard shows
its status and message on the error page."""

from __future__ import annotations

from starlette.responses import JSONResponse

from charter import errors as e

_STATUS: dict[type[e.CharterError], int] = {
    e.RunNotFoundError: 404,
    e.DocumentNotFoundError: 404,
    e.ApprovalNotFoundError: 404,
    e.DeadLetterNotFoundError: 404,
    e.NotificationNotFoundError: 404,
    e.DefinitionNotFoundError: 404,
    e.TemplateNotFoundError: 404,
    e.FlowNotFoundError: 404,
    e.RuleNotFoundError: 404,
    e.EntityTypeUnknownError: 404,
    e.DocumentVersionConflictError: 409,
    e.ApprovalVersionStaleError: 409,
    e.ApprovalAlreadyDecidedError: 409,
    e.ApprovalClosedError: 409,
    e.RunIdConflictError: 409,
    e.RunStateError: 409,
    e.DocumentExistsError: 409,
    e.WorkflowGatePendingError: 409,
    e.DocumentAmendedError: 409,
    e.WorkflowPausedError: 409,
    e.DefinitionRollbackInvalidError: 409,
    e.PolicyDeniedError: 403,
    e.ContractPolicyMissingError: 403,  # a gate or action no policy grants: refused to all
    e.WorkflowEditLockedError: 403,
    e.ApprovalNotApproverError: 403,
    e.ApprovalSelfApprovalError: 403,
    e.PermissionDeniedError: 403,
    e.ActorUnknownError: 403,
    e.OrgMismatchError: 403,
    e.DocumentTooLargeError: 413,
    e.RunInputError: 422,
    e.DocumentInvalidError: 422,
    e.ContractError: 422,
}


def status_of(exc: e.CharterError) -> int:
    for cls in type(exc).__mro__:
        if cls in _STATUS:
            return _STATUS[cls]
    if isinstance(exc, ValueError):
        return 422
    if isinstance(exc, e.DatabaseUnreachableError | e.DatabaseConnectionLostError):
        return 503
    return 400


class Unauthenticated(Exception):
    """No key, or an unknown or revoked one (401 UNAUTHENTICATED)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RequestInvalid(Exception):
    """A request charter cannot read: no JSON, nested too deep, a field missing or of the
    wrong type (422 REQUEST_INVALID)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def error_of(exc: Exception) -> tuple[int, str, str] | None:
    """The status, code and message ``exc`` is answered with; None for an exception that is
    no refusal of the request (a bug: it propagates)."""
    if isinstance(exc, e.CharterError):
        return status_of(exc), exc.code, exc.message
    if isinstance(exc, Unauthenticated):
        return 401, "UNAUTHENTICATED", exc.message
    if isinstance(exc, RequestInvalid):
        return 422, "REQUEST_INVALID", exc.message
    return None


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def charter_error_response(exc: e.CharterError) -> JSONResponse:
    return error_response(status_of(exc), exc.code, exc.message)
