"""A batch's inputs are written as one JSON array and its run ids made up at once; both
must give what one value (or one ``uuid.uuid4()``) at a time gives, and a bad input in a
batch is named by its index."""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest

from charter.errors import RunInputError
from charter.ops.run_ids import new_run_ids
from charter.payloads import json_array_text, json_text

GOOD: list[Any] = [
    {"n": 1},
    "é ✓ 漢字",
    [1, [2, [3]]],
    None,
    1.5,
    {"nested": {"a": [True, False]}, "quote": 'say "hi"\\u0000'},  # an escaped backslash
]


def test_a_batch_is_written_as_each_value_is():
    assert json_array_text(GOOD, "The run input") == (
        "[" + ",".join(json_text(v, "The run input") for v in GOOD) + "]"
    )
    assert json_array_text([], "The run input") == "[]"


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _self_containing() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({1, 2}, "is not JSON"),
        (math.nan, "replace NaN with null"),
        ("a\x00b", "U\\+0000"),
        ("\ud800", "lone surrogate"),
        (_self_containing(), "contains itself"),
        (_deep(5000), "more than 100 levels deep"),
    ],
)
def test_a_bad_value_in_a_batch_is_named_by_its_index(bad, message):
    with pytest.raises(RunInputError, match=f"The run input at index 2 .*{message}"):
        json_array_text([{"ok": 1}, "fine", bad, {"ok": 2}], "The run input")


def test_run_ids_made_up_at_once_are_random_version_4_uuids():
    ids = new_run_ids(2000)
    assert len(set(ids)) == 2000
    for run_id in ids:
        parsed = uuid.UUID(run_id)
        assert str(parsed) == run_id  # the form str(uuid.uuid4()) has
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert new_run_ids(0) == []
    # Every random digit varies: none is stuck at one value across the batch.
    positions = [i for i in range(36) if i not in (8, 13, 14, 18, 23)]
    assert all(len({run_id[i] for run_id in ids}) > 1 for i in positions)
    assert {run_id[19] for run_id in ids} == set("89ab")
