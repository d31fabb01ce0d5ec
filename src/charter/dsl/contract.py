"""Entity contracts: a document type's lifecycle, the source of its system envelope.

JSON form (the Python model reads and writes exactly this)::

    {"entityType": "invoice", "version": 1,
     "states": [{"id": "draft", "editWindow": "editable"}, ...],
     "transitions": [{"from": "draft", "to": "submitted", "gate": "submit"},
                     {"from": "submitted", "to": "draft", "gate": "approve", "label": "reject"}],
     "slots": [{"slotId": "slot:submitted_to_approved", "entryNodeId": "sys:state:submitted",
                "exitNodeId": "sys:gate:approve", "defaultEditWindow": "amend_only",
                "stableRegion": true}],
     "fields": {"grand_total": "number"},          # optional: the entity's declared fields
     "policies": {"create": {"roles": ["clerk"]},  # who may do what: every gate and
                  "cancel": {"rule": "actor.roles contains 'manager'"},  # action, or "*"
                  "*": {"roles": ["clerk", "manager"]}},
     "actions": [{"actionType": "invoice.post", "fields": ["posted_at"]}],  # optional
     "maxDocumentBytes": 65536,                    # optional: the data's size, as JSON
     "display": {"title": "Invoice {invoice_no} — {vendor}",  # optional: how people see
                 "columns": ["invoice_no", "vendor", "grand_total"],  # a document
                 "summary": ["vendor", "grand_total"]}}

The first state is where a document starts. A state with no transitions out ends the
lifecycle; ``"final": true`` marks one that may also end it while having transitions out
(an approved invoice that can still be amended). ``fields`` lets expressions be checked
against the entity's declared fields, and ``mutate()`` refuses undeclared fields and values
of the wrong type. ``policies`` say who may do what, keyed by ``create``, ``update``,
``amend``, a gate or an action type, or ``"*"`` for everything without a policy of its own:
``roles`` (any of them) and/or a ``rule`` (an expression over ``entity``, ``actor``, ``org``,
``context`` that must be true). Policies are closed by default: every gate and every
declared action needs a policy, or the ``"*"`` default (else CONTRACT_POLICY_MISSING);
``create``, ``update`` and ``amend`` without one (and no ``"*"``) stay open to the org's
actors (``amend`` falls back to ``update``). ``{"rule": "true"}`` grants everyone on
purpose. ``actions`` declare business mutations beyond field edits and the fields each may
set. ``maxDocumentBytes`` bounds a document's data as JSON text (else the database's
``charter.max_document_bytes``, else 1 MiB): larger is ``DOCUMENT_TOO_LARGE``.
``display`` names a document for people: ``title`` is a template of declared fields in
braces (and ``{entityType}``, ``{state}``; ``{{``/``}}`` for a literal brace) that the
database renders (``charter._document_title``; a missing value shows as "—", and with none
yet the title is the type and the id's first 8 characters), ``columns``
the fields a list shows, ``summary`` the (at most 6) fields an approver sees first. Each
names declared fields only, else ``DISPLAY_INVALID``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from charter.errors import (
    CharterError,
    ContractDisplayInvalidError,
    ContractError,
    ContractPolicyMissingError,
    ExpressionError,
)
from charter.expr import compile_expression

EditWindow = Literal["editable", "amend_only", "locked"]
STRICTNESS: dict[str, int] = {"editable": 0, "amend_only": 1, "locked": 2}
FieldType = Literal["number", "string", "boolean", "array", "object", "any"]
# \Z, not $: "$" also matches before a trailing newline.
NAME = re.compile(r"\A[a-z][a-z0-9_]*\Z")
SLOT_ID = re.compile(r"\Aslot:[a-z][a-z0-9_]*\Z")


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


ACTION_TYPE = re.compile(r"\A[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\Z")
BUILT_IN_POLICY_KEYS = ("create", "update", "amend")
# The policy of whatever has none of its own (create, update, amend, gates, actions).
DEFAULT_POLICY_KEY = "*"


class Policy(_Model):
    roles: list[str] | None = None
    rule: str | None = None


class Action(_Model):
    action_type: str = Field(alias="actionType")
    fields: list[str]


# A title template's pieces: a literal brace written twice, a placeholder, plain text. The
# database renders with the same pattern (charter._document_title).
TITLE_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[^{}]+")
TITLE_BUILT_INS = ("entityType", "state")
TITLE_MAX_CHARS = 200
SUMMARY_MAX_FIELDS = 6
COLUMNS_MAX = 12


def title_placeholders(template: str) -> list[str]:
    """The names a title template uses, or ValueError saying where it is malformed."""
    names: list[str] = []
    position = 0
    while position < len(template):
        match = TITLE_TOKEN.match(template, position)
        if match is None:
            brace = template[position]
            rest = template[position : position + 20]
            what = "is not closed or does not hold a name" if brace == "{" else "opens nothing"
            raise ValueError(
                f"the {brace!r} at character {position + 1} ({rest!r}) {what}: placeholders "
                "look like {invoice_no} (a declared field, {entityType} or {state}); write "
                "{{ or }} for a literal brace"
            )
        if match.group(1):
            names.append(match.group(1))
        position = match.end()
    return names


class Display(_Model):
    """How people see a document: its title, a list's columns, an approver's summary."""

    title: str | None = None
    columns: list[str] | None = None
    summary: list[str] | None = None


class EntityContract(_Model):
    entity_type: str = Field(alias="entityType")
    version: int = Field(ge=1)
    states: list[State]
    transitions: list[Transition]
    slots: list[BodySlot] = Field(default_factory=list)
    fields: dict[str, FieldType] | None = None
    policies: dict[str, Policy] | None = None
    actions: list[Action] | None = None
    # The largest a document's data may be, as JSON text, in place of the database's limit
    # (charter.max_document_bytes, default 1 MiB); published only by the platform.
    max_document_bytes: int | None = Field(alias="maxDocumentBytes", default=None, ge=1)
    display: Display | None = None

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
            if transition.gate in ("create", "update"):
                problems.append(
                    f"{where}: a gate cannot be called {transition.gate!r}, which names the "
                    "document's create and update"
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
        problems += self._action_problems()
        problems += self._policy_problems()
        display_problems = self._display_problems()
        if display_problems and not problems:
            raise ContractDisplayInvalidError(
                f"The {self.entity_type} contract's display is invalid: "
                + "; ".join(display_problems)
                + ". See docs/architecture.md § Contracted envelopes for the format."
            )
        problems += display_problems
        if problems:
            # pydantic carries the message as UTF-8: a lone surrogate from the input (an id
            # like "\ud800") is shown escaped instead of failing the validation itself.
            message = "; ".join(problems)
            raise ValueError(message.encode("utf-8", "backslashreplace").decode("utf-8"))
        self._check_policies_cover()
        return self

    def ungranted(self) -> list[str]:
        """The gates and declared actions no policy grants (none with a ``"*"`` default)."""
        policies = self.policies or {}
        if DEFAULT_POLICY_KEY in policies:
            return []
        keys = list(dict.fromkeys(t.gate for t in self.transitions))
        keys += [a.action_type for a in self.actions or []]
        return [key for key in keys if key not in policies]

    def _check_policies_cover(self) -> None:
        """Closed by default: a gate or action no policy grants would be refused to everyone
        at run time, so the contract is refused now, naming each and the fix."""
        missing = self.ungranted()
        if not missing:
            return
        gates = {t.gate for t in self.transitions}
        parts = []
        for kind, keys in (
            ("gate", [k for k in missing if k in gates]),
            ("action", [k for k in missing if k not in gates]),
        ):
            if keys:
                plural = "s" if len(keys) > 1 else ""
                parts.append(f"the {kind}{plural} {', '.join(repr(k) for k in keys)}")
        example = missing[0]
        raise ContractPolicyMissingError(
            f"The {self.entity_type} contract states no policy for {' and '.join(parts)}: what no "
            "policy grants is refused to every actor. Add a policy for each under "
            f'"policies" (e.g. "{example}": {{"roles": ["clerk"]}}), or a "*" default for '
            'whatever has none of its own (e.g. "*": {"roles": ["clerk"]}; '
            '{"rule": "true"} grants every actor of the org).'
        )

    def _action_problems(self) -> list[str]:
        problems = []
        types = [a.action_type for a in self.actions or []]
        gates = {t.gate for t in self.transitions}
        for action in self.actions or []:
            where = f"action {action.action_type!r}"
            if not ACTION_TYPE.match(action.action_type):
                problems.append(f"{where}: action types look like 'invoice.post'")
            if action.action_type in gates or action.action_type in BUILT_IN_POLICY_KEYS:
                problems.append(f"{where} has the name of a gate or of create/update/amend")
            if not action.fields:
                problems.append(f"{where} sets no fields; list the fields it may set")
            for field in action.fields:
                if self.fields is not None and field not in self.fields:
                    problems.append(f"{where} sets {field!r}, which is not a declared field")
        for duplicate in sorted({t for t in types if types.count(t) > 1}):
            problems.append(f"action {duplicate!r} is declared twice")
        return problems

    def _display_problems(self) -> list[str]:
        display = self.display
        if display is None:
            return []
        declared = list(self.fields or {})
        known = (
            f"the declared fields are {', '.join(declared)}"
            if declared
            else 'the contract declares no fields: declare them under "fields" first'
        )
        problems = []

        def unknown(where: str, names: list[str], extra: str = "") -> None:
            missing = [name for name in dict.fromkeys(names) if name not in declared]
            if missing:
                which = ", ".join(repr(name) for name in missing)
                are = "is not a declared field" if len(missing) == 1 else "are not declared fields"
                problems.append(f"{where} names {which}, which {are} ({known}{extra})")
            for name in sorted({n for n in names if names.count(n) > 1}):
                problems.append(f"{where} lists {name!r} twice")

        if display.title is not None:
            if not display.title.strip():
                problems.append("display.title is empty; leave it out for the default title")
            elif len(display.title) > TITLE_MAX_CHARS:
                problems.append(
                    f"display.title is {len(display.title)} characters; a title template "
                    f"has at most {TITLE_MAX_CHARS}"
                )
            try:
                used = title_placeholders(display.title)
            except ValueError as exc:
                problems.append(f"display.title {display.title[:60]!r}: {exc}")
            else:
                fields = list(dict.fromkeys(n for n in used if n not in TITLE_BUILT_INS))
                unknown("display.title", fields, "; {entityType} and {state} are always there")
        if display.columns is not None:
            if not display.columns:
                problems.append("display.columns is empty; leave it out or name some fields")
            if len(display.columns) > COLUMNS_MAX:
                problems.append(
                    f"display.columns lists {len(display.columns)} fields; a list shows at "
                    f"most {COLUMNS_MAX}"
                )
            unknown("display.columns", display.columns)
        if display.summary is not None:
            if len(display.summary) > SUMMARY_MAX_FIELDS:
                problems.append(
                    f"display.summary lists {len(display.summary)} fields; a summary shows at "
                    f"most {SUMMARY_MAX_FIELDS}: keep the ones an approver needs first"
                )
            unknown("display.summary", display.summary)
        return problems

    def _policy_problems(self) -> list[str]:
        known = set(BUILT_IN_POLICY_KEYS) | {t.gate for t in self.transitions}
        known |= {a.action_type for a in self.actions or []} | {DEFAULT_POLICY_KEY}
        problems = []
        for key, policy in (self.policies or {}).items():
            where = f"policies.{key}"
            if key not in known:
                problems.append(
                    f"{where}: {key!r} is neither create, update, amend, a gate, an action "
                    f'nor the "*" default (they are {", ".join(sorted(known))})'
                )
            if policy.roles is None and policy.rule is None:
                problems.append(f"{where} needs roles, a rule, or both")
            if policy.roles is not None and not policy.roles:
                problems.append(f"{where}: an empty list of roles would let nobody act")
            if policy.rule is not None:
                try:
                    compile_expression(policy.rule, self.expression_schema(), boolean=True)
                except ExpressionError as exc:
                    problems.append(f"{where}.rule: {exc.message}")
        return problems

    def expression_schema(self) -> dict[str, Any] | None:
        """What a policy rule may read about the entity: its declared fields."""
        return None if self.fields is None else {"entity": dict(self.fields)}

    def stored_json(self) -> dict[str, Any]:
        """The contract as the database keeps it: its JSON, with each policy rule compiled
        (mutate() evaluates the compiled form with charter.eval_expr)."""
        data = self.to_json()
        for key, policy in (self.policies or {}).items():
            if policy.rule is not None:
                data["policies"][key]["compiled"] = compile_expression(
                    policy.rule, self.expression_schema(), boolean=True
                )
        return data

    @property
    def initial_state(self) -> str:
        return self.states[0].id

    @classmethod
    def from_json(cls, data: Any) -> EntityContract:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            refusal = _refusal(exc)
            if refusal is not None:  # a rule with its own code (CONTRACT_POLICY_MISSING)
                raise refusal from None
            if all(error["loc"][:1] == ("display",) for error in exc.errors()):
                raise ContractDisplayInvalidError(
                    "The entity contract's display is invalid: "
                    + describe(exc)
                    + '. display takes "title" (a template like "Invoice {invoice_no}"), '
                    '"columns" and "summary" (lists of declared field names).'
                ) from None
            raise ContractError(
                "The entity contract is invalid: "
                + describe(exc)
                + ". See docs/architecture.md § Contracted envelopes for the format.",
                code="CONTRACT_INVALID",
            ) from None


def _refusal(exc: ValidationError) -> CharterError | None:
    """The charter error a validator raised, when it is the only problem."""
    if exc.error_count() != 1:
        return None
    cause = (exc.errors()[0].get("ctx") or {}).get("error")
    return cause if isinstance(cause, CharterError) else None


def describe(exc: ValidationError) -> str:
    """A pydantic error as one readable line: where, and what is wrong."""
    parts = []
    for error in exc.errors()[:8]:
        location = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{location}: {message}" if location else message)
    more = exc.error_count() - 8
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
