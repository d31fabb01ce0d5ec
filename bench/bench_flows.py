"""The flows the benchmark runs: no-op handlers, so charter's own cost is what is measured."""

from charter import Flow

one_step = Flow("bench_one_step")


@one_step.step
def only(run: dict) -> int:  # type: ignore[type-arg]
    return 1


chain3 = Flow("bench_chain3")


@chain3.step
def first(run: dict) -> int:  # type: ignore[type-arg]
    return 1


@chain3.step(depends_on=[first])
def second(first: int) -> int:
    return first + 1


@chain3.step(depends_on=[second])
def third(second: int) -> int:
    return second + 1


map10 = Flow("bench_map10")


@map10.step
def fan(run: dict) -> list[int]:  # type: ignore[type-arg]
    return list(range(10))


@map10.map(over=fan)
def each(item: int) -> int:
    return item * 2


@map10.step(depends_on=[each])
def gather(each: list[int]) -> int:
    return sum(each)


# The claim's limits, set so that they never bind: what is measured is what they cost.
keyed = Flow("bench_keyed", concurrency={"key": "run.k", "limit": 10_000})


@keyed.step
def keyed_only(run: dict) -> int:  # type: ignore[type-arg]
    return 1


rated = Flow("bench_rated")


@rated.step(rate_limit={"key": "bench_api", "per_second": 100_000, "burst": 100_000})
def rated_only(run: dict) -> int:  # type: ignore[type-arg]
    return 1
