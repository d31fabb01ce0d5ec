"""A run input at the door: serialised as the flow's steps will read it, and refused early.

``client.start(flow, Order(...))`` takes a pydantic model (or anything the steps' type
hints accept): the input is validated against the hint of every step that takes ``run``
(and, for a map over the run, each element against the map's element hint) and serialised
to JSON the way the first such hint dumps it. An input a step could never accept is
``RUN_INPUT_INVALID`` before any run exists, instead of a failed step later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from charter.dsl.flow import Flow
from charter.dsl.handler import RUN, validation_summary
from charter.errors import RunInputError
from charter.payloads import json_array_text, json_text


def run_input_json(flow: Flow | str, value: Any) -> str:
    """The run input as JSON text for ``start_run``."""
    return json_text(_prepared(flow, value), "The run input")


def run_inputs_json(flow: Flow | str, values: Sequence[Any]) -> str:
    """Many run inputs as one JSON array for ``start_runs``, each checked as
    :func:`run_input_json` checks one (see :func:`json_array_text`); an input the flow's
    steps refuse is named by its index."""
    prepared = []
    for index, value in enumerate(values):
        try:
            prepared.append(_prepared(flow, value))
        except RunInputError as exc:
            raise RunInputError(f"The run input at index {index}: {exc.message}") from None
    return json_array_text(prepared, "The run input")


def _prepared(flow: Flow | str, value: Any) -> Any:
    if isinstance(flow, Flow):
        return _checked(flow, value)
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    return value


def _checked(flow: Flow, value: Any) -> Any:
    dumped: Any = None
    has_dump = False
    for step in flow.steps.values():
        if step.step_type == "map" and step.over == RUN and step.spec.item_param:
            elements = _elements(flow, step.slug, step.spec.adapter(step.spec.item_param), value)
            if not has_dump:
                dumped, has_dump = elements, True
            continue
        adapter = step.spec.adapter(RUN) if RUN in step.spec.params else None
        if adapter is None:
            continue
        try:
            validated = adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            raise RunInputError(
                f"The run input does not match what step '{step.slug}' of flow '{flow.slug}' "
                f"takes as run: {validation_summary(exc)}. Fix the input (nothing was started)."
            ) from None
        if not has_dump:
            dumped, has_dump = adapter.dump_python(validated, mode="json"), True
    if has_dump:
        return dumped
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    return value


def _elements(
    flow: Flow, slug: str, adapter: pydantic.TypeAdapter[Any] | None, value: Any
) -> list[Any]:
    if isinstance(value, pydantic.BaseModel) or not isinstance(value, list | tuple):
        raise RunInputError(
            f"Flow '{flow.slug}' maps step '{slug}' over the run input, so the input must be "
            f"a list, not {type(value).__name__}. Start the run with a list."
        )
    if adapter is None:
        return [
            e.model_dump(mode="json") if isinstance(e, pydantic.BaseModel) else e for e in value
        ]
    dumped = []
    for index, element in enumerate(value):
        try:
            dumped.append(adapter.dump_python(adapter.validate_python(element), mode="json"))
        except pydantic.ValidationError as exc:
            raise RunInputError(
                f"Element {index} of the run input does not match what step '{slug}' of flow "
                f"'{flow.slug}' takes: {validation_summary(exc)}. Fix the input (nothing was "
                "started)."
            ) from None
    return dumped
