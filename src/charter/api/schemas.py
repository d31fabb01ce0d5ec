"""The JSON API's bodies as pydantic models: each request body validates with its model and
each is described in OpenAPI from it. Strict: a field of the wrong JSON type is refused, not
converted ("3" is no version). Unknown fields are ignored; null is as if left out."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, RootModel

from charter.errors import ArgumentError
from charter.vocabulary import ApprovalDecision, RunStatus

INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # PostgreSQL's integer
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1  # and its bigint

Version = Annotated[int, Field(ge=INT_MIN, le=INT_MAX)]
BigId = Annotated[int, Field(ge=BIGINT_MIN, le=BIGINT_MAX)]


def out_of_range(field: str, where: tuple[Any, ...] = ()) -> ArgumentError:
    """A whole number past the column it is for, named as the body names it."""
    if field == "ids":
        return ArgumentError(
            f"{field!r} holds a number out of range (at {list(where)}): ids are whole numbers "
            f"from {BIGINT_MIN} to {BIGINT_MAX} (PostgreSQL's bigint). Send ids as listed."
        )
    return ArgumentError(
        f"{field!r} is out of range: versions are whole numbers from {INT_MIN} to {INT_MAX} "
        "(PostgreSQL's integer). Send the version the document or request has."
    )


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


Decision = ApprovalDecision  # an approver's decision (``approval_decisions.decision``)


# -- request bodies --------------------------------------------------------------------


class StartRun(Body):
    flow: str
    input: Any = None
    run_id: str | None = None


class Reason(Body):
    """A reason for the record; the body may be left out."""

    reason: str | None = None


class CreateDocument(Body):
    entity_type: str
    data: dict[str, Any]
    id: str | None = None
    reason: str | None = None


class Amend(Body):
    changes: dict[str, Any]
    reason: str | None = None


class Update(Amend):
    expected_version: Version | None = None


class Transition(Body):
    gate: str
    to: str | None = None
    expected_version: Version | None = None
    reason: str | None = None


class Mutate(Body):
    action: str
    changes: dict[str, Any] | None = None
    to: str | None = None
    expected_version: Version | None = None
    reason: str | None = None


class Decide(Body):
    decision: Annotated[Decision, Field(strict=False)]  # from its JSON string
    version: Version
    comment: str | None = None


class Publish(Body):
    contract: dict[str, Any]
    org_definition: dict[str, Any] | None = None


def _named(camel: str, snake: str) -> Any:
    """A field the workflow builder sends in camelCase; the snake_case name works too."""
    return Field(validation_alias=AliasChoices(camel, snake))


class OrgDefinitionBody(Body):
    """An org definition to compile or publish: ``{"orgDefinition": {"baseRef", "slots"}}``."""

    org_definition: dict[str, Any] = _named("orgDefinition", "org_definition")


class ExpressionCheck(Body):
    entity_type: str = _named("entityType", "entity_type")
    expression: str
    kind: Literal["condition", "script", "edge"] = "condition"


class Rollback(Body):
    version_id: str = _named("versionId", "version_id")


class AnyObject(RootModel[dict[str, Any]]):
    """Any JSON object: an inbound event's payload, a definition draft."""

    model_config = ConfigDict(strict=True)


class Ids(Body):
    ids: list[BigId]


class SomeIds(Body):
    """Ids to act on; left out: all of them."""

    ids: list[BigId] | None = None


# -- answers the API builds itself -------------------------------------------------------


class Started(BaseModel):
    id: str


class RunState(BaseModel):
    id: str
    status: RunStatus


class Retried(BaseModel):
    retried: list[int]


class Dropped(BaseModel):
    dropped: list[int]


class Read(BaseModel):
    read: list[int]


class OneRead(BaseModel):
    id: int
    read: bool


class ErrorDetail(BaseModel):
    code: str  # e.g. DOCUMENT_VERSION_CONFLICT; docs/errors.md lists them
    message: str  # what was wrong and how to fix it


class Error(BaseModel):
    """Every refusal: ``{"error": {"code": "…", "message": "…"}}``."""

    error: ErrorDetail
