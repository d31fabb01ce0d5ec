"""Flows and shapes that several tests share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from charter import Flow


def analyze_site() -> Flow:
    """The flow of the README and the issue, in its public spelling."""
    flow = Flow("analyze_site", max_attempts=3, base_delay=2, timeout=60)

    @flow.step
    def fetch(run: dict) -> list[str]:  # type: ignore[type-arg]
        return list(run["pages"])

    @flow.step(depends_on=[fetch])
    def summarize(fetch: list[str]) -> str:
        return f"{len(fetch)} pages"

    @flow.map(over=fetch)
    def score(item: str) -> float:
        return float(len(item))

    @flow.step(depends_on=[summarize, score])
    def report(run: dict, summarize: str, score: list[float]) -> dict:  # type: ignore[type-arg]
        return {"summary": summarize, "total": sum(score)}

    return flow


def flow_from_shape(slug: str, shape: dict[str, Any]) -> Flow:
    """A Flow with the given shape, its handlers taking every input by **inputs."""
    flow = Flow(slug, **_options(shape["options"]))
    for step in shape["steps"]:
        options = _options(step["options"])
        if step["stepType"] == "map":
            over = step["dependencies"][0] if step["dependencies"] else "run"
            flow.map(over=over, slug=step["slug"], **options)(lambda item: item)
        else:
            flow.step(depends_on=step["dependencies"], slug=step["slug"], **options)(
                lambda **inputs: inputs
            )
    return flow


def _options(shape_options: dict[str, int | None]) -> dict[str, int | None]:
    names = {
        "maxAttempts": "max_attempts",
        "baseDelay": "base_delay",
        "timeout": "timeout",
        "startDelay": "start_delay",
    }
    return {names[k]: v for k, v in shape_options.items()}


SLUGS = ["a", "b", "c", "d", "e", "fetch", "score"]

option_values = st.fixed_dictionaries(
    {
        "maxAttempts": st.none() | st.integers(1, 10),
        "baseDelay": st.none() | st.integers(0, 30),
        "timeout": st.none() | st.integers(1, 600),
        "startDelay": st.none() | st.integers(0, 60),
    }
)


@st.composite
def shapes(draw: st.DrawFn, *, sort_dependencies: bool = False) -> dict[str, Any]:
    """Valid flow shapes: steps in a topological order, maps with at most one source."""
    count = draw(st.integers(1, len(SLUGS)))
    slugs = draw(st.permutations(SLUGS))[:count]
    steps = []
    for index, slug in enumerate(slugs):
        earlier = slugs[:index]
        step_type = draw(st.sampled_from(["single", "map"]))
        limit = 1 if step_type == "map" else len(earlier)
        deps = (
            draw(st.lists(st.sampled_from(earlier), unique=True, max_size=limit)) if earlier else []
        )
        steps.append(
            {
                "slug": slug,
                "stepType": step_type,
                "dependencies": sorted(deps) if sort_dependencies else deps,
                "options": draw(option_values),
            }
        )
    return {"options": draw(option_values), "steps": steps}


def diamond(max_attempts: int = 2) -> Flow:
    """seed fans out to a map and a single step; total joins both."""
    flow = Flow("diamond", max_attempts=max_attempts, base_delay=0)

    @flow.step
    def seed(run: dict) -> list[int]:  # type: ignore[type-arg]
        return list(range(run["n"]))

    @flow.map(over=seed)
    def square(item: int) -> int:
        return item * item

    @flow.step(depends_on=[seed])
    def count(seed: list[int]) -> int:
        return len(seed)

    @flow.step(depends_on=[square, count])
    def total(square: list[int], count: int) -> dict:  # type: ignore[type-arg]
        return {"sum": sum(square), "count": count}

    return flow


def two_leaves() -> Flow:
    flow = Flow("two_leaves")
    a = flow.step(slug="a")(lambda run: run["x"])
    flow.step(slug="b", depends_on=[a])(lambda a: a + 1)
    flow.step(slug="c", depends_on=[a])(lambda a: a * 10)
    return flow
