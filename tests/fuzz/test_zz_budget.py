"""Last in the fuzz suite (files run in name order): the run as a whole fed at least
``BUDGET`` bad inputs across the client, the command line and the HTTP API — each counted
where it is fed (``ledger.record``), so an example Hypothesis skipped or a test left out
does not count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.ledger import BUDGET, ENTRY_POINTS, fed, refused
from tests.fuzz.strategies import SCALE


def test_the_suite_fed_every_entry_point_its_share_of_650_bad_inputs(request):
    here = Path(__file__).parent
    modules = {p.name for p in here.glob("test_*.py")} - {Path(__file__).name}
    ran = {Path(str(item.path)).name for item in request.session.items}
    if not modules <= ran or request.config.option.keyword or request.config.option.markexpr:
        pytest.skip("only part of the fuzz suite was collected")
    if SCALE < 1:
        pytest.skip(f"CHARTER_FUZZ_SCALE={SCALE} asks for fewer examples")
    summary = {point: (fed[point], refused[point]) for point in ENTRY_POINTS}
    print(f"bad inputs fed (and refused) per entry point: {summary}")
    assert all(fed[point] > 0 for point in ENTRY_POINTS), summary
    assert sum(fed.values()) >= BUDGET, summary
