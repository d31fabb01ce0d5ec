"""The flow DSL: its public spelling and every rule, checked at definition time."""

import asyncio

import pydantic
import pytest

from charter import Flow
from charter.errors import FlowDefinitionError, StepInputError, StepOutputError
from tests.flows_for_tests import analyze_site


def test_the_public_spelling_defines_steps_dependencies_and_a_map():
    flow = analyze_site()
    assert list(flow.steps) == ["fetch", "summarize", "score", "report"]
    steps = flow.steps
    assert steps["fetch"].dependencies == ()
    assert steps["summarize"].dependencies == ("fetch",)
    assert (steps["score"].step_type, steps["score"].over) == ("map", "fetch")
    assert steps["score"].dependencies == ("fetch",)
    assert steps["report"].dependencies == ("summarize", "score")
    assert flow.options.max_attempts == 3 and flow.options.timeout == 60
    assert flow.options.start_delay is None


def test_a_step_stays_callable_as_its_function():
    flow = analyze_site()
    assert flow.steps["summarize"](["a", "b"]) == "2 pages"


def test_slug_defaults_to_the_function_name_and_can_be_given():
    flow = Flow("f")

    @flow.step(slug="load_data")
    def load(run): ...

    @flow.step(depends_on=["load_data"])
    def use(load_data): ...

    assert list(flow.steps) == ["load_data", "use"]
    assert load.slug == "load_data"


def test_root_map_over_the_run_input_and_options_per_step():
    flow = Flow("f")

    @flow.map(over="run", max_attempts=5, timeout=10)
    def each(item: int) -> int:
        return item * 2

    assert each.dependencies == () and each.over == "run"
    assert each.options.max_attempts == 5 and each.options.timeout == 10


def test_handlers_may_be_async_and_take_ctx_run_and_all_inputs():
    flow = Flow("f")

    @flow.step
    async def first(run, ctx): ...

    @flow.step(depends_on=[first])
    def second(ctx, **inputs): ...

    assert first.spec.is_async and first.spec.takes_ctx
    assert not second.spec.is_async and second.spec.takes_all_inputs


def _rule(excinfo):
    return excinfo.value.code


@pytest.mark.parametrize("slug", ["1abc", "has-dash", "sp ace", "", "run", "ctx", "x" * 129])
def test_invalid_flow_slugs_are_refused(slug):
    with pytest.raises(FlowDefinitionError) as caught:
        Flow(slug)
    assert _rule(caught) == "FLOW_SLUG_INVALID"


@pytest.mark.parametrize("slug", ["9lives", "with-dash", "run", "ctx"])
def test_invalid_step_slugs_are_refused_naming_the_step(slug):
    flow = Flow("f")
    with pytest.raises(FlowDefinitionError) as caught:
        flow.step(slug=slug)(lambda run: None)
    assert _rule(caught) == "FLOW_SLUG_INVALID"
    assert "flow 'f'" in caught.value.message


def test_a_duplicate_step_slug_is_refused():
    flow = Flow("f")

    @flow.step
    def a(run): ...

    with pytest.raises(FlowDefinitionError) as caught:

        @flow.step(slug="a")
        def other(run): ...

    assert _rule(caught) == "FLOW_STEP_DUPLICATE"
    assert "Step 'a'" in caught.value.message


def test_an_unknown_dependency_names_the_step_and_the_known_ones():
    flow = Flow("f")

    @flow.step
    def a(run): ...

    with pytest.raises(FlowDefinitionError) as caught:

        @flow.step(depends_on=["missing"])
        def b(missing): ...

    assert _rule(caught) == "FLOW_DEPENDENCY_UNKNOWN"
    assert "Step 'b'" in caught.value.message and "'missing'" in caught.value.message
    assert "steps so far: a" in caught.value.message


def test_a_dependency_listed_twice_is_refused():
    flow = Flow("f")

    @flow.step
    def a(run): ...

    with pytest.raises(FlowDefinitionError) as caught:
        flow.step(depends_on=[a, "a"], slug="s")(lambda a: None)
    assert _rule(caught) == "FLOW_DEPENDENCY_DUPLICATE"


def test_a_dependency_on_a_step_of_another_flow_is_refused():
    other, flow = Flow("other"), Flow("f")

    @other.step
    def a(run): ...

    with pytest.raises(FlowDefinitionError) as caught:
        flow.step(depends_on=[a], slug="s")(lambda a: None)
    assert _rule(caught) == "FLOW_DEPENDENCY_UNKNOWN"
    assert "belongs to flow 'other'" in caught.value.message


def test_a_plain_function_as_dependency_is_refused():
    flow = Flow("f")

    def not_a_step(run): ...

    with pytest.raises(FlowDefinitionError) as caught:
        flow.step(depends_on=[not_a_step], slug="s")(lambda run: None)
    assert _rule(caught) == "FLOW_DEPENDENCY_UNKNOWN"


def test_a_parameter_that_names_no_dependency_fails_at_once():
    flow = Flow("f")

    @flow.step
    def fetch(run): ...

    with pytest.raises(FlowDefinitionError) as caught:

        @flow.step(depends_on=[fetch])
        def summarize(fetch, typo_here): ...

    assert _rule(caught) == "FLOW_HANDLER_PARAMETER_UNKNOWN"
    assert "parameter 'typo_here'" in caught.value.message
    assert "Step 'summarize'" in caught.value.message


@pytest.mark.parametrize(
    "handler", [lambda *args: None, eval("lambda run, /: None")], ids=["varargs", "posonly"]
)
def test_handlers_that_cannot_take_inputs_by_name_are_refused(handler):
    with pytest.raises(FlowDefinitionError) as caught:
        Flow("f").step(slug="s")(handler)
    assert _rule(caught) == "FLOW_HANDLER_INVALID"


def test_map_rules():
    flow = Flow("f")

    @flow.step
    def text(run) -> str: ...

    @flow.step
    def items(run) -> list[int]: ...

    with pytest.raises(FlowDefinitionError) as caught:
        flow.map(over=text, slug="m1")(lambda item: item)
    assert _rule(caught) == "FLOW_MAP_SOURCE_INVALID"
    assert "returns str, not an array" in caught.value.message

    with pytest.raises(FlowDefinitionError) as caught:
        flow.map(over=[items, text], slug="m2")(lambda item: item)
    assert _rule(caught) == "FLOW_MAP_SOURCE_INVALID"

    with pytest.raises(FlowDefinitionError) as caught:
        flow.map(over=42, slug="m3")(lambda item: item)
    assert _rule(caught) == "FLOW_DEPENDENCY_UNKNOWN"

    with pytest.raises(FlowDefinitionError) as caught:
        flow.map(over=items, slug="m4")(lambda: None)
    assert _rule(caught) == "FLOW_HANDLER_INVALID"

    with pytest.raises(FlowDefinitionError) as caught:
        flow.map(over=items, slug="m5")(lambda item, items: None)
    assert _rule(caught) == "FLOW_HANDLER_INVALID"

    ok = flow.map(over=items, slug="m6")(lambda item, ctx: item)
    assert ok.spec.item_param == "item" and ok.spec.takes_ctx


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_attempts", 0),
        ("max_attempts", True),
        ("base_delay", -1),
        ("timeout", 0),
        ("timeout", 1.5),
        ("start_delay", "10"),
        ("max_attempts", 10_000),
    ],
)
def test_options_out_of_range_are_refused_on_flows_and_steps(option, value):
    with pytest.raises(FlowDefinitionError) as caught:
        Flow("f", **{option: value})
    assert _rule(caught) == "FLOW_OPTION_INVALID"
    assert option in caught.value.message
    with pytest.raises(FlowDefinitionError) as caught:
        Flow("f").step(slug="s", **{option: value})(lambda run: None)
    assert "Step 's'" in caught.value.message


def test_step_and_map_refuse_an_argument_they_do_not_take():
    flow = Flow("f")
    with pytest.raises(
        TypeError, match=r"Flow\.step\(\) got an unexpected keyword argument 'max_atempts'"
    ):
        flow.step(max_atempts=3)
    with pytest.raises(TypeError, match="'depends_on'"):
        flow.map(over="run", depends_on=[])
    assert flow.steps == {}


def test_every_step_argument_reaches_the_step():
    flow = Flow("f")

    @flow.step(
        slug="s",
        max_attempts=2,
        base_delay=3,
        timeout=4,
        start_delay=5,
        no_retry_on=[KeyError],
        priority=7,
        concurrency={"key": "{run.k}", "limit": 2},
    )
    def handler(run): ...

    options = handler.options
    assert (handler.slug, options.max_attempts, options.base_delay) == ("s", 2, 3)
    assert (options.timeout, options.start_delay) == (4, 5)
    assert handler.execution.no_retry_on == (KeyError,)
    assert handler.execution.retry_on is None
    assert options.limits["priority"] == 7 and options.limits["concurrency"]["limit"] == 2


def test_decorating_a_step_again_is_refused():
    flow = Flow("f")

    @flow.step
    def a(run): ...

    with pytest.raises(FlowDefinitionError) as caught:
        flow.step(slug="b")(a)
    assert _rule(caught) == "FLOW_STEP_DUPLICATE"


class Page(pydantic.BaseModel):
    url: str
    size: int


def test_type_hints_validate_inputs_and_outputs_at_run_time():
    flow = Flow("f")

    @flow.step
    def fetch(run: dict[str, str]) -> list[Page]:
        return [Page(url=run["url"], size=3)]

    @flow.step(depends_on=[fetch])
    def total(fetch: list[Page]) -> int:
        return sum(p.size for p in fetch)

    kwargs = fetch.spec.bind(run_input={"url": "https://x"}, inputs={})
    out = fetch.spec.output(fetch(**kwargs))
    assert out == [{"url": "https://x", "size": 3}]  # pydantic models become JSON data
    bound = total.spec.bind(run_input=None, inputs={"fetch": out})
    assert bound["fetch"] == [Page(url="https://x", size=3)]
    assert total.spec.output(total(**bound)) == 3

    with pytest.raises(StepInputError) as caught:
        total.spec.bind(run_input=None, inputs={"fetch": [{"url": "x"}]})
    assert "input 'fetch'" in caught.value.message and "size" in caught.value.message
    with pytest.raises(StepInputError, match="the run input"):
        fetch.spec.bind(run_input=["not", "a", "dict"], inputs={})
    with pytest.raises(StepOutputError) as out_error:
        total.spec.output("many")
    assert "return type int" in out_error.value.message


def test_handlers_without_hints_are_not_validated():
    flow = Flow("f")
    step = flow.step(slug="s")(lambda run: run)
    assert step.spec.bind(run_input=object, inputs={}) == {"run": object}
    assert step.spec.output({"any": "thing"}) == {"any": "thing"}


def test_async_handlers_run_as_coroutines():
    flow = Flow("f")

    @flow.step
    async def hello(run: dict) -> str:  # type: ignore[type-arg]
        return f"hi {run['name']}"

    result = asyncio.run(hello(**hello.spec.bind(run_input={"name": "A"}, inputs={})))
    assert hello.spec.output(result) == "hi A"
