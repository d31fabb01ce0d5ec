"""Entity contracts: a document type's lifecycle, the source of its system envelope.

JSON form (the Python model reads and writes exactly this)::

    {"entityType": "invoice", "version": 1,
     "states": [{"id": "draft", "editWindow": "editable"}, ...],
     "transitions": [{"from": "draft", "to": "submitted", "gate": "submit"},
                     {"from": "submitted", "to": "draft", "gate": "approve", "label": "reject"}],
     "slots": [{"slotId": "slot:submitted_to_approved", "entryNodeId": "sys:state:submitted",
                "exitNodeId": "sys:gate:approve", "defaultEditWindow": "amend_only",
                "stableRegion": true}],
     "fields": {"grand_total": "number"}}          # optional: the entity's declared fields

The first state is where a document starts. A state with no transitions out ends the
lifecycle; ``"final": true`` marks one that may also end it while having transitions out
(an approved invoice that can still be amended). ``fields`` lets expressions be checked
against the entity's declared fields.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from charter.errors import ContractError

EditWindow = Literal["editable", "amend_only", "locked"]
STRICTNESS: dict[str, int] = {"editable": 0, "amend_only": 1, "locked": 2}
FieldType = Literal["number", "string", "boolean", "array", "object", "any"]
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
SLOT_ID = re.compile(r"^slot:[a-z][a-z0-9_]*$")


def stricter(a: str, b: str) -> str:
    return a if STRICTNESS[a] >= STRICTNESS[b] else b


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class State(_Model):
    id: str
    edit_window: EditWindow = Field(alias="editWindow")
    # A document may rest here for good (the lifecycle can end): always true for a state
    # with no transitions out; set it for one that also has some (active, before amend).
    final: bool | None = None


class Transition(_Model):
    from_state: str = Field(alias="from")
    to_state: str = Field(alias="to")
    gate: str
    label: str | None = None


class BodySlot(_Model):
    slot_id: str = Field(alias="slotId")
    entry_node_id: str = Field(alias="entryNodeId")
    exit_node_id: str = Field(alias="exitNodeId")
    default_edit_window: EditWindow = Field(alias="defaultEditWindow")
    stable_region: bool = Field(alias="stableRegion", default=False)


class EntityContract(_Model):
    entity_type: str = Field(alias="entityType")
    version: int = Field(ge=1)
    states: list[State]
    transitions: list[Transition]
    slots: list[BodySlot] = Field(default_factory=list)
    fields: dict[str, FieldType] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> EntityContract:
        problems: list[str] = []
        if not NAME.match(self.entity_type):
            problems.append(
                f"entityType {self.entity_type!r} must be lower-case letters, digits and _"
            )
        if not self.states:
            problems.append("states: a contract needs at least one state")
        ids = [state.id for state in self.states]
        for state_id in ids:
            if not NAME.match(state_id):
                problems.append(f"state {state_id!r}: ids are lower-case letters, digits and _")
        for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
            problems.append(f"state {duplicate!r} is declared twice")
        for n, transition in enumerate(self.transitions):
            where = f"transitions[{n}] ({transition.from_state} -> {transition.to_state})"
            for end in (transition.from_state, transition.to_state):
                if end not in ids:
                    problems.append(f"{where}: {end!r} is not a declared state")
            if not NAME.match(transition.gate):
                problems.append(
                    f"{where}: gate {transition.gate!r} must be lower-case letters, digits and _"
                )
        seen = set()
        for transition in self.transitions:
            key = (transition.from_state, transition.to_state, transition.gate)
            if key in seen:
                problems.append(
                    f"the transition {key[0]} -> {key[1]} through gate {key[2]!r} is declared twice"
                )
            seen.add(key)
        slot_ids = [slot.slot_id for slot in self.slots]
        for slot in self.slots:
            if not SLOT_ID.match(slot.slot_id):
                problems.append(
                    f"slot {slot.slot_id!r}: slot ids look like 'slot:submitted_to_approved'"
                )
        for duplicate in sorted({s for s in slot_ids if slot_ids.count(s) > 1}):
            problems.append(f"slot {duplicate!r} is declared twice")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def initial_state(self) -> str:
        return self.states[0].id

    @classmethod
    def from_json(cls, data: Any) -> EntityContract:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ContractError(
                "The entity contract is invalid: "
                + describe(exc)
                + ". See docs/architecture.md § Contracted envelopes for the format.",
                code="CONTRACT_INVALID",
            ) from None


def describe(exc: ValidationError) -> str:
    """A pydantic error as one readable line: where, and what is wrong."""
    parts = []
    for error in exc.errors()[:8]:
        location = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{location}: {message}" if location else message)
    more = exc.error_count() - 8
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
