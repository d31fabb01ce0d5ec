"""Hostile inputs for the fuzz tests, and the one rule they check: a bad input is a
``CharterError`` (a stable code and a message for people), never another exception."""

from __future__ import annotations

import datetime
import decimal
import math
import os
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from charter.errors import CharterError

T = TypeVar("T")

# Each test keeps its examples few, so the whole directory runs in well under a minute;
# CHARTER_FUZZ_SCALE=20 runs twenty times as many (a longer hunt, e.g. before a release).
SCALE = float(os.environ.get("CHARTER_FUZZ_SCALE") or 1)
FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


def settings_for(examples: int) -> settings:
    return settings(FAST, max_examples=max(1, round(examples * SCALE)))


def charter_error_or_result(call: Callable[[], T]) -> T | CharterError:
    """The call's result, or the CharterError it raised; any other exception fails the test."""
    try:
        return call()
    except CharterError as exc:
        error = exc
    assert error.code and error.message.strip(), f"an error without code or message: {error!r}"
    assert str(error).startswith(f"[{error.code}] ")
    return error


SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ANY_CHARACTER = st.characters(codec=None, exclude_categories=())  # surrogates included
PLAIN = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12)


NAME = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@st.composite
def spiked(draw: st.DrawFn, spikes: st.SearchStrategy[str]) -> str:
    """Plausible text with something hostile inserted somewhere."""
    text = draw(PLAIN)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(spikes) + text[at:]


NUL_TEXT = spiked(st.just("\x00"))
SURROGATE_TEXT = spiked(SURROGATE)
CONTROL_TEXT = spiked(st.sampled_from(["\n", "\r", "\t", "\x1b[31m", "\u2028", "\ufeff", "\x7f"]))

# Identifiers (run ids, slugs, cursors, version ids…) that no database should see as they are.
hostile_text = st.one_of(
    NUL_TEXT,
    SURROGATE_TEXT,
    CONTROL_TEXT,
    st.just(""),
    st.just(" "),
    st.sampled_from([201, 10_000, 1_000_000]).map(lambda n: Big("x" * n)),
    st.text(ANY_CHARACTER, max_size=30),
    NAME.map(lambda s: s + "\n"),  # '$' in a regex matches before a trailing newline
    st.sampled_from(["run", "ctx", "[red]x[/]", "%s", "{0}", "'; DROP TABLE x; --", "é" * 3]),
)


class Big(str):
    """A long string that hypothesis reports by its length, not its contents."""

    def __repr__(self) -> str:
        return f"Big({len(self)} chars)"


class Deep(list):  # type: ignore[type-arg]
    """A deeply nested (or cyclic) list that hypothesis reports by a label."""

    label = "deep"

    def __repr__(self) -> str:
        return f"Deep({self.label})"


class DeepDict(dict):  # type: ignore[type-arg]
    label = "deep"

    def __repr__(self) -> str:
        return f"DeepDict({self.label})"


def labelled(value: Any, label: str) -> Any:
    wrapped: Any = Deep(value) if isinstance(value, list) else DeepDict(value)
    wrapped.label = label
    return wrapped


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


wrong_type = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.builds(pow, st.just(10), st.just(5000)),  # str() of it raises ValueError
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
    st.builds(bytearray, st.binary(max_size=4)),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.text(max_size=3)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sets(st.integers(), max_size=3),
    st.just(object()),
    st.just(_Opaque()),
    st.just(decimal.Decimal("1.5")),
    st.just(datetime.datetime(2024, 1, 1)),
    st.just(uuid.UUID(int=1)),
    st.just(math.nan),
    st.just(str),  # a class
    st.just(print),  # a builtin function
)

hostile_argument = st.one_of(hostile_text, wrong_type)

# JSON-like values with something hostile inside (strings, keys, numbers, types).
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(ANY_CHARACTER, max_size=8),
    NUL_TEXT,
    SURROGATE_TEXT,
    st.just(decimal.Decimal("0.1")),
    st.just(datetime.date(2024, 1, 1)),
    st.just(b"bytes"),
    st.just(_Opaque()),
    st.just({1, 2}),
)
_key = st.one_of(st.text(ANY_CHARACTER, max_size=6), SURROGATE_TEXT, NUL_TEXT, st.integers())
hostile_json = st.recursive(
    _leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children),
        st.dictionaries(_key, children, max_size=4),
    ),
    max_leaves=12,
)


def nested(depth: int, kind: str = "list", leaf: Any = 1) -> Any:
    """A value nested ``depth`` levels deep, built without recursion."""
    value: Any = leaf
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"k": value}
    return labelled([value] if kind == "list" else {"k": value}, f"{kind} {depth} deep")


def cyclic(kind: str) -> Any:
    if kind == "list":
        items: list[Any] = Deep([1])
        items.label = "a list that contains itself"  # type: ignore[attr-defined]
        items.append(items)
        return items
    mapping: dict[str, Any] = DeepDict(a=1)
    mapping.label = "a dict that contains itself"  # type: ignore[attr-defined]
    mapping["self"] = {"inner": mapping}
    return mapping


monsters = st.one_of(
    st.sampled_from([101, 1_000, 5_000, 100_000]).flatmap(
        lambda depth: st.sampled_from(["list", "dict"]).map(lambda kind: nested(depth, kind))
    ),
    st.sampled_from(["list", "dict"]).map(cyclic),
    st.just([Big("x" * 1_000_000)]),  # big but legal
    st.just({str(n): n for n in range(10_000)}),  # wide but legal
)

hostile_value = st.one_of(hostile_json, monsters, wrong_type)

# Expressions: token soup, deep nesting near the limits, and hostile text.
_TOKENS = [
    "entity", "actor", "org", "context", "now", ".", "total", "roles", "x", "==", "!=", ">",
    ">=", "<", "<=", "in", "contains", "&&", "||", "!", "(", ")", "[", "]", ",", "1", "-1",
    "1.5e3", "1e999", "'a'", '"b"', "true", "false", "null", "+", "=~", "matches", "for",
    "f(", "'\\u0000'", "'\\ud800'", "'\\q'", "\x00", "\ud800", "\n", "'", '"', "\\",
]  # fmt: skip

expressions = st.one_of(
    st.lists(st.sampled_from(_TOKENS), max_size=25).map(" ".join),
    st.lists(st.sampled_from(_TOKENS), max_size=25).map("".join),
    st.text(ANY_CHARACTER, max_size=60),
    st.integers(1, 260).map(lambda n: "(" * n + "1" + ")" * n),
    st.integers(1, 499).map(lambda n: "!" * n + "true"),
    st.integers(1, 249).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 120).map(lambda n: " == ".join(["entity.a"] * n)),
    st.integers(1, 100).map(lambda n: " && ".join(["true"] * n)),
    st.integers(1, 30).map(lambda n: "entity" + ".a" * n + " == 1"),
    hostile_argument,
)
