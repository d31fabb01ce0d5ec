"""The flow DSL: a DAG of Python step handlers.

>>> flow = Flow("greet")
>>> @flow.step
... def hello(run: dict) -> str:
...     return f"hello {run['name']}"
>>> @flow.step(depends_on=[hello])
... def shout(hello: str) -> str:
...     return hello.upper()
>>> sorted(flow.steps)
['hello', 'shout']

Every rule is checked when a step is defined, so a mistake fails at import time with an
error that names the step and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack, overload

from charter.dsl import waits
from charter.dsl.handler import CTX, RUN, HandlerSpec, inspect_handler
from charter.dsl.limits import claim_limits
from charter.errors import FlowDefinitionError
from charter.payloads import shown

# \Z, not $: '$' also matches before a trailing newline, which SQL's check refuses.
SLUG_PATTERN = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_SLUG_LENGTH = 128
RESERVED_SLUGS = frozenset({RUN, CTX})
WAIT_TYPES = ("sleep", "wait_event")
ExceptionTypes = type[BaseException] | tuple[type[BaseException], ...] | list[type[BaseException]]
OPTION_NAMES = ("max_attempts", "base_delay", "timeout", "start_delay")
# Bounds that keep retries and timers sane; SQL constraints enforce the same.
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "max_attempts": (1, 1000),
    "base_delay": (0, 86_400),
    "timeout": (1, 86_400),
    "start_delay": (0, 31_536_000),
}


@dataclass(frozen=True)
class StepOptions:
    """Retry, timing and claim options; None means "inherit" (from the flow, then SQL's
    default). ``limits`` holds the claim's limits in their shape spelling (``priority``,
    ``concurrency``, ``rateLimit``), only those that are set."""

    max_attempts: int | None = None
    base_delay: int | None = None
    timeout: int | None = None
    start_delay: int | None = None
    limits: dict[str, Any] = field(default_factory=dict)

    def as_shape(self) -> dict[str, Any]:
        return {
            "maxAttempts": self.max_attempts,
            "baseDelay": self.base_delay,
            "timeout": self.timeout,
            "startDelay": self.start_delay,
            **self.limits,
        }


Isolation = Literal["process"]


class StepArguments(TypedDict, total=False):
    """The keyword arguments :meth:`Flow.step` and :meth:`Flow.map` share. Options left out
    (or None) are inherited from the flow, then from SQL's defaults. ``priority``,
    ``concurrency`` and ``rate_limit`` limit the claim (see :mod:`charter.dsl.limits`);
    ``isolation``, ``retry_on`` and ``no_retry_on`` are :class:`ExecutionOptions`."""

    slug: str | None
    max_attempts: int | None
    base_delay: int | None
    timeout: int | None
    start_delay: int | None
    isolation: Isolation | None
    retry_on: ExceptionTypes | None
    no_retry_on: ExceptionTypes | None
    priority: int | None
    concurrency: dict[str, Any] | None
    rate_limit: dict[str, Any] | None


def _check_arguments(method: str, arguments: Mapping[str, object]) -> None:
    # **arguments takes any name at run time; an unknown one is refused as a signature would.
    for name in arguments:
        if name not in StepArguments.__annotations__:
            raise TypeError(f"Flow.{method}() got an unexpected keyword argument {name!r}")


@dataclass(frozen=True)
class ExecutionOptions:
    """How the worker runs a handler; Python-side only, not part of the shape.

    ``isolation="process"``: the handler runs in a child process that is killed when it
    overruns its timeout (for code that must be stoppable). ``retry_on``: only these
    exception types are retried; ``no_retry_on``: these fail the step at once.
    """

    isolation: Isolation | None = None
    retry_on: tuple[type[BaseException], ...] | None = None
    no_retry_on: tuple[type[BaseException], ...] = ()

    def is_retryable(self, exc: BaseException) -> bool:
        if getattr(exc, "permanent", False) is True:
            return False
        if isinstance(exc, self.no_retry_on):
            return False
        return self.retry_on is None or isinstance(exc, self.retry_on)


@dataclass(frozen=True)
class Step:
    """A step of a flow. Calling it calls the handler, so handlers stay easy to test."""

    flow_slug: str
    slug: str
    handler: Callable[..., Any]
    step_type: str  # "single" or "map"
    dependencies: tuple[str, ...]  # in the order given
    options: StepOptions
    spec: HandlerSpec = field(repr=False)
    over: str | None = None  # map steps: RUN or the slug of the array source
    execution: ExecutionOptions = field(default_factory=ExecutionOptions)
    # sleep: {"seconds"} or {"until"}; wait_event: {"key", "timeout"?}; a child step: {"child"}
    config: dict[str, Any] | None = None

    @property
    def child_flow(self) -> str | None:
        """The slug of the flow this step runs as its body, if it is a child step."""
        return (self.config or {}).get("child")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.handler(*args, **kwargs)

    @property
    def handler_name(self) -> str:
        return f"{self.handler.__module__}:{self.handler.__qualname__}"


class Flow:
    """A named DAG of steps. Steps are added with :meth:`step` and :meth:`map`."""

    def __init__(
        self,
        slug: str,
        *,
        max_attempts: int | None = None,
        base_delay: int | None = None,
        timeout: int | None = None,
        start_delay: int | None = None,
        description: str | None = None,
        priority: int | None = None,
        concurrency: dict[str, Any] | None = None,
    ) -> None:
        _check_slug(slug, what=f"Flow slug {shown(slug)}")
        self.slug = slug
        self.description = description
        self.options = _options(
            f"flow '{slug}'",
            claim_limits(f"Flow '{slug}'", priority=priority, concurrency=concurrency),
            max_attempts=max_attempts,
            base_delay=base_delay,
            timeout=timeout,
            start_delay=start_delay,
        )
        self.steps: dict[str, Step] = {}

    def __repr__(self) -> str:
        return f"Flow({self.slug!r}, steps={list(self.steps)})"

    @overload
    def step(self, handler: Callable[..., Any], /) -> Step: ...

    @overload
    def step(
        self,
        *,
        depends_on: Iterable[Step | str] = (),
        child: Flow | str | None = None,
        **arguments: Unpack[StepArguments],
    ) -> Callable[[Callable[..., Any]], Step]: ...

    def step(
        self,
        handler: Callable[..., Any] | None = None,
        *,
        depends_on: Iterable[Step | str] = (),
        child: Flow | str | None = None,
        **arguments: Unpack[StepArguments],
    ) -> Step | Callable[[Callable[..., Any]], Step]:
        """Add a step. Its dependencies' outputs arrive as parameters of the same name;
        a parameter ``run`` receives the run input and ``ctx`` the handler context.

        ``child=other_flow`` makes the step's body a child run of that flow: the handler's
        return value is the child's input, and the step completes with the child's output
        (or fails when the child fails) without holding a worker while the child runs.
        The other keyword arguments are :class:`StepArguments`."""
        _check_arguments("step", arguments)

        def add(fn: Callable[..., Any]) -> Step:
            config = None if child is None else {"child": _child_slug(self, fn, child)}
            return self._add(fn, "single", depends_on, arguments, over=None, config=config)

        return add(handler) if handler is not None else add

    @overload
    def map(
        self, handler: Callable[..., Any], *, over: Step | str, **arguments: Unpack[StepArguments]
    ) -> Step: ...

    @overload
    def map(
        self, *, over: Step | str, **arguments: Unpack[StepArguments]
    ) -> Callable[[Callable[..., Any]], Step]: ...

    def map(
        self,
        handler: Callable[..., Any] | None = None,
        *,
        over: Step | str,
        **arguments: Unpack[StepArguments],
    ) -> Step | Callable[[Callable[..., Any]], Step]:
        """Add a map step: one task per element of the array that ``over`` returned
        (``over="run"``: of the run input). Its output is the list of results, in order.
        The other keyword arguments are :class:`StepArguments`."""
        _check_arguments("map", arguments)

        def add(fn: Callable[..., Any]) -> Step:
            return self._add(fn, "map", (), arguments, over=over)

        return add(handler) if handler is not None else add

    def sleep(
        self,
        target: Callable[..., Any] | str | None = None,
        /,
        *,
        seconds: int | None = None,
        until: str | None = None,
        depends_on: Iterable[Step | str] = (),
        slug: str | None = None,
    ) -> Any:
        """Add a step that waits, holding no worker, for ``seconds`` or ``until`` a time
        (a template such as ``"{run.remind_at}"``, rendered to an ISO 8601 time when the
        step becomes ready). Decorate a function without parameters (it only names the
        step), or pass the slug: ``flow.sleep("cool_off", seconds=60, depends_on=[x])``."""
        where = f"Sleep step of flow '{self.slug}'"
        config = waits.sleep_config(where, seconds, until)
        return self._waiting(target, "sleep", config, depends_on, slug)

    def wait_event(
        self,
        target: Callable[..., Any] | str | None = None,
        /,
        *,
        key: str,
        depends_on: Iterable[Step | str] = (),
        timeout: int | None = None,
        slug: str | None = None,
    ) -> Any:
        """Add a step that waits, holding no worker, for ``client.events.send(key, ...)``.
        ``key`` is a template of the run input and dependencies' outputs
        (``"payment:{run.order_id}"``). Its output is the event's payload; after
        ``timeout`` seconds without one it is ``{"timedOut": True, ...}`` (see
        :func:`charter.timed_out`). An event sent before the wait began is kept and taken."""
        where = f"wait_event step of flow '{self.slug}'"
        config = waits.wait_config(where, key, timeout)
        return self._waiting(target, "wait_event", config, depends_on, slug)

    def _waiting(
        self,
        target: Callable[..., Any] | str | None,
        step_type: str,
        config: dict[str, Any],
        depends_on: Iterable[Step | str],
        slug: str | None,
    ) -> Any:
        def add(fn: Callable[..., Any], step_slug: str | None = slug) -> Step:
            return self._add(
                fn, step_type, depends_on, {"slug": step_slug}, over=None, config=config
            )

        if isinstance(target, str):
            return add(_named_placeholder(target), target)
        return add(target) if target is not None else add

    def _add(
        self,
        fn: Callable[..., Any],
        step_type: str,
        depends_on: Iterable[Step | str],
        arguments: StepArguments,
        *,
        over: Step | str | None,
        config: dict[str, Any] | None = None,
    ) -> Step:
        if isinstance(fn, Step):
            raise FlowDefinitionError(
                f"Step '{fn.slug}' is already a step of flow '{fn.flow_slug}'; decorate the "
                "plain function once, or wrap it in a new function for a second step.",
                code="FLOW_STEP_DUPLICATE",
            )
        if not callable(fn):
            raise FlowDefinitionError(
                f"Flow '{self.slug}': a step handler must be a function, got {shown(fn)}.",
                code="FLOW_STEP_INVALID",
            )
        slug = arguments.get("slug")
        step_slug = slug if slug is not None else getattr(fn, "__name__", None)
        if step_slug is None:
            raise FlowDefinitionError(
                f"Flow '{self.slug}': the handler {shown(fn)} has no __name__ to name its "
                "step; pass slug='a_name'.",
                code="FLOW_SLUG_INVALID",
            )
        where = f"Step {shown(step_slug)} of flow '{self.slug}'"
        _check_slug(step_slug, what=where)
        where = f"Step '{step_slug}' of flow '{self.slug}'"
        if step_slug in self.steps:
            raise FlowDefinitionError(
                f"{where} is defined twice. Step slugs must be unique within a flow: rename "
                "the function or pass slug='another_name'.",
                code="FLOW_STEP_DUPLICATE",
            )
        if step_type == "map":
            if isinstance(depends_on, Iterable) and list(depends_on):
                raise FlowDefinitionError(
                    f"{where}: a map step depends only on its array source; use over=.",
                    code="FLOW_MAP_SOURCE_INVALID",
                )
            source = self._map_source(where, over)
            dependencies: tuple[str, ...] = () if source == RUN else (source,)
        else:
            source = None
            dependencies = self._dependencies(where, depends_on)
        if step_type in WAIT_TYPES:
            spec = waits.placeholder_spec(fn, where=where, step_type=step_type)
        else:
            spec = inspect_handler(fn, where=where, step_type=step_type, dependencies=dependencies)
        names = (RUN, *dependencies)
        if config is not None and step_type in WAIT_TYPES:
            config = waits.checked_config(where, step_type, config, names)
        step = Step(
            flow_slug=self.slug,
            slug=step_slug,
            handler=fn,
            step_type=step_type,
            dependencies=dependencies,
            options=_options(
                where,
                claim_limits(
                    where,
                    names=names,
                    priority=arguments.get("priority"),
                    concurrency=arguments.get("concurrency"),
                    rate_limit=arguments.get("rate_limit"),
                ),
                max_attempts=arguments.get("max_attempts"),
                base_delay=arguments.get("base_delay"),
                timeout=arguments.get("timeout"),
                start_delay=arguments.get("start_delay"),
            ),
            spec=spec,
            over=source,
            execution=_execution(
                where,
                fn,
                arguments.get("isolation"),
                arguments.get("retry_on"),
                arguments.get("no_retry_on"),
            ),
            config=config,
        )
        self.steps[step_slug] = step
        return step

    def _dependencies(self, where: str, depends_on: Iterable[Step | str]) -> tuple[str, ...]:
        if isinstance(depends_on, str | Step):
            depends_on = [depends_on]
        if not isinstance(depends_on, Iterable):
            raise FlowDefinitionError(
                f"{where}: depends_on= takes a list of steps (or slugs), not {shown(depends_on)}.",
                code="FLOW_DEPENDENCY_UNKNOWN",
            )
        result: list[str] = []
        for dep in depends_on:
            dep_slug = self._resolve(where, dep, role="dependency")
            if dep_slug in result:
                raise FlowDefinitionError(
                    f"{where} lists the dependency '{dep_slug}' twice; list it once.",
                    code="FLOW_DEPENDENCY_DUPLICATE",
                )
            result.append(dep_slug)
        return tuple(result)

    def _map_source(self, where: str, over: Step | str | None) -> str:
        if over == RUN:
            return RUN
        if isinstance(over, list | tuple | set):
            raise FlowDefinitionError(
                f"{where}: over= takes one array source (a step or 'run'), not several. "
                "Add a step that combines them into one list and map over that.",
                code="FLOW_MAP_SOURCE_INVALID",
            )
        source = self._resolve(where, over, role="map source")
        returns = self.steps[source].spec.returns
        if returns is not None and _is_never_an_array(returns):
            raise FlowDefinitionError(
                f"{where} maps over step '{source}', which returns {_type_name(returns)}, "
                "not an array. Map over a step that returns a list (or 'run').",
                code="FLOW_MAP_SOURCE_INVALID",
            )
        return source

    def _resolve(self, where: str, ref: object, *, role: str) -> str:
        if isinstance(ref, Step):
            if ref.flow_slug != self.slug:
                raise FlowDefinitionError(
                    f"{where}: the {role} '{ref.slug}' belongs to flow '{ref.flow_slug}'; "
                    "steps can only depend on steps of the same flow.",
                    code="FLOW_DEPENDENCY_UNKNOWN",
                )
            slug = ref.slug
        elif isinstance(ref, str):
            slug = ref
        else:
            raise FlowDefinitionError(
                f"{where}: the {role} {shown(ref)} is neither a step of this flow nor a step slug. "
                "Pass the decorated step function or its slug string.",
                code="FLOW_DEPENDENCY_UNKNOWN",
            )
        if slug not in self.steps:
            known = ", ".join(sorted(self.steps)) or "none yet"
            raise FlowDefinitionError(
                f"{where}: the {role} {shown(slug)} is not a step of flow '{self.slug}' (steps "
                f"so far: {known}). Define {shown(slug)} above this step.",
                code="FLOW_DEPENDENCY_UNKNOWN",
            )
        return slug


def _named_placeholder(slug: str) -> Callable[[], None]:
    def placeholder() -> None:
        """Names a waiting step; never called."""

    placeholder.__qualname__ = placeholder.__name__ = slug
    return placeholder


def _child_slug(flow: Flow, fn: Callable[..., Any], child: object) -> str:
    slug = child.slug if isinstance(child, Flow) else child
    where = f"Step '{getattr(fn, '__name__', fn)}' of flow '{flow.slug}'"
    _check_slug(slug, what=f"{where}: child={shown(child)}")
    if slug == flow.slug:
        raise FlowDefinitionError(
            f"{where} names its own flow as its child; a flow cannot run itself as a step.",
            code="FLOW_OPTION_INVALID",
        )
    return str(slug)


def _check_slug(slug: object, *, what: str) -> None:
    if not isinstance(slug, str) or not SLUG_PATTERN.match(slug):
        raise FlowDefinitionError(
            f"{what} is not a valid slug: use letters, digits and _, not starting with a "
            "digit (like a Python name); for a step, pass slug='a_name' to choose one.",
            code="FLOW_SLUG_INVALID",
        )
    if len(slug) > MAX_SLUG_LENGTH:
        raise FlowDefinitionError(
            f"{what} is longer than {MAX_SLUG_LENGTH} characters; shorten it.",
            code="FLOW_SLUG_INVALID",
        )
    if slug in RESERVED_SLUGS:
        raise FlowDefinitionError(
            f"{what}: '{slug}' is reserved (run is the run input, ctx the handler "
            "context); choose another name, e.g. with slug=.",
            code="FLOW_SLUG_INVALID",
        )


def _options(where: str, limits: dict[str, Any], **values: int | None) -> StepOptions:
    for name, value in values.items():
        if value is None:
            continue
        low, high = OPTION_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            unit = "" if name == "max_attempts" else " seconds"
            raise FlowDefinitionError(
                f"{where}: {name}={shown(value)} is out of range; use a whole number from {low} "
                f"to {high}{unit}.",
                code="FLOW_OPTION_INVALID",
            )
    return StepOptions(**values, limits=limits)


def _execution(
    where: str, fn: Callable[..., Any], isolation: Any, retry_on: Any, no_retry_on: Any
) -> ExecutionOptions:
    if isolation not in (None, "process"):
        raise FlowDefinitionError(
            f"{where}: isolation={shown(isolation)} is not known; use isolation='process' to run "
            "the handler in a child process that is killed when it overruns its timeout, or "
            "leave it out.",
            code="FLOW_OPTION_INVALID",
        )
    if isolation == "process" and (
        "<locals>" in fn.__qualname__ or "." in fn.__qualname__ or not fn.__module__
    ):
        raise FlowDefinitionError(
            f"{where}: isolation='process' runs the handler in a child process that imports "
            f"it by name, but {fn.__qualname__} is not a module-level function. Define it at "
            "the top level of a module.",
            code="FLOW_OPTION_INVALID",
        )
    if retry_on is not None and no_retry_on is not None:
        raise FlowDefinitionError(
            f"{where}: give retry_on= (retry only these) or no_retry_on= (never retry these), "
            "not both.",
            code="FLOW_OPTION_INVALID",
        )
    return ExecutionOptions(
        isolation=isolation,
        retry_on=None if retry_on is None else _exception_types(where, "retry_on", retry_on),
        no_retry_on=()
        if no_retry_on is None
        else _exception_types(where, "no_retry_on", no_retry_on),
    )


def _exception_types(where: str, name: str, value: Any) -> tuple[type[BaseException], ...]:
    types = tuple(value) if isinstance(value, list | tuple | set | frozenset) else (value,)
    if not types or not all(isinstance(t, type) and issubclass(t, BaseException) for t in types):
        raise FlowDefinitionError(
            f"{where}: {name}= takes exception classes (one or a list), got {shown(value)}.",
            code="FLOW_OPTION_INVALID",
        )
    return types


_NEVER_ARRAYS = (str, bytes, int, float, bool, type(None))


def _is_never_an_array(annotation: Any) -> bool:
    return annotation in _NEVER_ARRAYS


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", repr(annotation))
