"""What a step handler takes and returns, checked once at definition time.

A handler's parameters are bound by name: ``run`` is the run input, ``ctx`` the handler
context, any other name the output of the dependency of that name (``**inputs`` takes all
dependency outputs). A map handler takes the array element as its first parameter. Type
hints, when present, validate inputs and outputs at run time with pydantic.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pydantic

from charter.errors import FlowDefinitionError, StepInputError, StepOutputError

RUN = "run"
CTX = "ctx"
_NO_HINT = inspect.Parameter.empty


@dataclass(frozen=True)
class HandlerSpec:
    where: str  # "Step 'x' of flow 'y'", for messages
    handler: Callable[..., Any]
    is_async: bool
    params: tuple[str, ...]  # named parameters, in order
    item_param: str | None  # map steps: the parameter that receives the element
    takes_all_inputs: bool  # has **inputs
    hints: dict[str, Any]  # parameter name -> annotation, where resolvable
    returns: Any  # the return annotation, or None when absent

    @property
    def takes_ctx(self) -> bool:
        return CTX in self.params

    def bind(self, *, run_input: Any, inputs: dict[str, Any], ctx: Any = None) -> dict[str, Any]:
        """Keyword arguments for a single step's handler, validated against its hints."""
        kwargs: dict[str, Any] = {}
        for name in self.params:
            if name == CTX:
                kwargs[name] = ctx
            elif name == RUN:
                kwargs[name] = self._validated(name, run_input)
            elif name in inputs:
                kwargs[name] = self._validated(name, inputs[name])
        if self.takes_all_inputs:
            for name, value in inputs.items():
                kwargs.setdefault(name, value)
        return kwargs

    def bind_item(self, item: Any, *, ctx: Any = None) -> dict[str, Any]:
        """Keyword arguments for a map step's handler: the element (and the context)."""
        assert self.item_param is not None
        kwargs = {self.item_param: self._validated(self.item_param, item)}
        if self.takes_ctx:
            kwargs[CTX] = ctx
        return kwargs

    def output(self, value: Any) -> Any:
        """The handler's result as JSON-ready data, validated against the return hint."""
        adapter = self._adapters.get("return")
        try:
            if adapter is not None:
                return adapter.dump_python(adapter.validate_python(value), mode="json")
            if isinstance(value, pydantic.BaseModel):
                return value.model_dump(mode="json")
        except pydantic.ValidationError as exc:
            raise StepOutputError(
                f"{self.where} returned a value that does not match its return type "
                f"{_type_name(self.returns)}: {validation_summary(exc)}. Fix the handler or "
                "its hint."
            ) from None
        return value

    def adapter(self, name: str) -> pydantic.TypeAdapter[Any] | None:
        """The validator of parameter ``name`` (``"return"``: of the result), if hinted."""
        return self._adapters.get(name)

    def _validated(self, name: str, value: Any) -> Any:
        adapter = self._adapters.get(name)
        if adapter is None:
            return value
        try:
            return adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            source = "the run input" if name == RUN else f"the input '{name}'"
            raise StepInputError(
                f"{self.where}: {source} does not match the type hint "
                f"{_type_name(self.hints[name])}: {validation_summary(exc)}."
            ) from None

    @cached_property
    def _adapters(self) -> dict[str, pydantic.TypeAdapter[Any]]:
        adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
        for name, hint in self.hints.items():
            if name != CTX and hint is not Any:
                adapters[name] = pydantic.TypeAdapter(hint)
        if self.returns is not None and self.returns is not Any:
            adapters["return"] = pydantic.TypeAdapter(self.returns)
        return adapters


def inspect_handler(
    fn: Callable[..., Any], *, where: str, step_type: str, dependencies: tuple[str, ...]
) -> HandlerSpec:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise FlowDefinitionError(
            f"{where}: charter cannot read the handler's parameters; use a plain def or "
            "async def function.",
            code="FLOW_HANDLER_INVALID",
        ) from None
    params: list[str] = []
    takes_all = False
    for param in signature.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            raise FlowDefinitionError(
                f"{where}: *{param.name} cannot receive anything; inputs are passed by name. "
                "Remove it, or use **inputs to receive every dependency's output.",
                code="FLOW_HANDLER_INVALID",
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise FlowDefinitionError(
                f"{where}: parameter '{param.name}' is positional-only; inputs are passed by "
                "name, so remove the '/' from the signature.",
                code="FLOW_HANDLER_INVALID",
            )
        if param.kind is param.VAR_KEYWORD:
            takes_all = True
        else:
            params.append(param.name)

    item_param = None
    if step_type == "map":
        candidates = [p for p in params if p != CTX]
        if not candidates:
            raise FlowDefinitionError(
                f"{where}: a map handler receives one array element; give it a parameter "
                "for it, e.g. def handler(item): ...",
                code="FLOW_HANDLER_INVALID",
            )
        item_param, extra = candidates[0], candidates[1:]
        if extra or takes_all:
            names = ", ".join(extra) if extra else "**" + _var_keyword(signature)
            raise FlowDefinitionError(
                f"{where}: a map handler takes the element and optionally ctx, but also asks "
                f"for {names}. Map over a step that returns what each element needs.",
                code="FLOW_HANDLER_INVALID",
            )
    else:
        for name in params:
            if name not in (RUN, CTX) and name not in dependencies:
                listed = ", ".join(dependencies) or "nothing"
                raise FlowDefinitionError(
                    f"{where}: parameter '{name}' names no dependency (depends_on lists "
                    f"{listed}). Add '{name}' to depends_on or rename the parameter; 'run' "
                    "receives the run input and 'ctx' the handler context.",
                    code="FLOW_HANDLER_PARAMETER_UNKNOWN",
                )

    hints = _hints(fn)
    return HandlerSpec(
        where=where,
        handler=fn,
        is_async=inspect.iscoroutinefunction(fn),
        params=tuple(params),
        item_param=item_param,
        takes_all_inputs=takes_all,
        hints={name: hints[name] for name in params if name in hints},
        returns=hints.get("return"),
    )


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:
        # A hint that cannot be resolved (a forward reference to a name defined later, a
        # typo) is not validated rather than failing the whole flow definition.
        raw = getattr(fn, "__annotations__", {})
        return {k: v for k, v in raw.items() if not isinstance(v, str)}


def _var_keyword(signature: inspect.Signature) -> str:
    return next(p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD)


def validation_summary(exc: pydantic.ValidationError) -> str:
    """A pydantic error as one line: the first three problems, where and what."""
    parts = []
    for error in exc.errors()[:3]:
        location = ".".join(str(p) for p in error["loc"]) or "value"
        parts.append(f"{location}: {error['msg']}")
    more = exc.error_count() - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")
