import datetime
import decimal
import hashlib
import json
import math
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import canonical_hash, canonical_json
from charter.errors import CanonicalJsonError


def test_key_order_does_not_change_the_hash():
    # The seed's CI test: canonicalJsonHash({b:1, a:2}) === canonicalJsonHash({a:2, b:1})
    assert canonical_hash({"b": 1, "a": 2}) == canonical_hash({"a": 2, "b": 1})
    assert canonical_json({"b": 1, "a": 2}) == '{"a":2,"b":1}'


def test_nested_objects_are_sorted_recursively_and_arrays_keep_their_order():
    value = {"z": [{"y": 1, "x": [3, 2, 1]}], "a": {"d": None, "c": {"f": True, "e": False}}}
    assert canonical_json(value) == (
        '{"a":{"c":{"e":false,"f":true},"d":null},"z":[{"x":[3,2,1],"y":1}]}'
    )


def test_hash_is_sha256_of_the_utf8_bytes():
    value = {"name": "Zoë", "tags": ["ß", "日本"]}
    text = canonical_json(value)
    assert text == '{"name":"Zoë","tags":["ß","日本"]}'
    assert canonical_hash(value) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_unicode_keys_sort_by_utf16_code_units_like_javascript():
    # U+FF5E (BMP, above the surrogates) sorts before U+1F600 in UTF-16 but after it in
    # code points; JavaScript's sort uses UTF-16, and so do we.
    value = {"\U0001f600": 1, "\uff5e": 2, "a": 3}
    assert canonical_json(value) == '{"a":3,"\U0001f600":1,"\uff5e":2}'


def test_none_is_kept_and_strings_escape_like_json_stringify():
    assert canonical_json({"a": None}) == '{"a":null}'
    assert canonical_json('q"\\\n\t\x01') == '"q\\"\\\\\\n\\t\\u0001"'


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (123.456, "123.456"),
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (-2.5e30, "-2.5e+30"),
        (100.0, "100"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
    ],
)
def test_numbers_are_written_as_ecmascript_writes_them(number, text):
    assert canonical_json(number) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_round_trips(number):
    assert float(canonical_json(number)) == number


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    )
)
def test_canonical_json_is_valid_json_that_parses_back_to_the_value(value):
    assert json.loads(canonical_json(value)) == value


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"a": [1, math.nan]}, "$.a[1]: nan"),
        ({"x": math.inf}, "$.x: inf"),
        ({1: "a"}, "key 1 is a int"),
        ({"s": {1, 2}}, "sorted list"),
        ({"when": datetime.datetime(2026, 1, 1)}, "ISO 8601"),
        ({"d": datetime.date(2026, 1, 1)}, "ISO 8601"),
        ({"amount": decimal.Decimal("1.10")}, "minor units"),
        ({"id": uuid.UUID(int=1)}, "str(value)"),
        ({"raw": b"abc"}, "base64"),
        ({"big": 2**53}, "outside"),
        ({"bad": "\ud800"}, "lone surrogate"),
        ({"obj": object()}, "type object"),
    ],
)
def test_values_that_are_not_json_stable_are_refused_with_their_path(value, fragment):
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json(value)
    assert caught.value.code == "JSON_NOT_STABLE"
    assert fragment in caught.value.message


def test_tuples_serialise_as_arrays():
    assert canonical_json({"t": (1, "a")}) == '{"t":[1,"a"]}'
