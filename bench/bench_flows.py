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
