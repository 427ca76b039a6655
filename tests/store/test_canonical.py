"""Canonical JSON: one byte form per document, and no value whose text form could drift."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.store import CanonicalJsonError, CanonicalText, canonical_digest, canonical_json, canonical_text
from factory_schedule.store.canonical import join_array, join_object


def test_keys_are_sorted_at_every_depth_whatever_the_insertion_order():
    first = {"b": 1, "a": {"z": [3, {"y": 1, "x": 2}], "c": None}}
    second = {"a": {"c": None, "z": [3, {"x": 2, "y": 1}]}, "b": 1}

    assert canonical_json(first) == canonical_json(second) == '{"a":{"c":null,"z":[3,{"x":2,"y":1}]},"b":1}'
    assert canonical_digest(first) == canonical_digest(second)


def test_there_is_no_insignificant_whitespace():
    assert canonical_json({"a": [1, 2], "b": "x y"}) == '{"a":[1,2],"b":"x y"}'


def test_non_ascii_text_stays_as_utf8_characters_not_escapes():
    assert canonical_json({"name": "Zoë ✓ 日本 🚀"}) == '{"name":"Zoë ✓ 日本 🚀"}'
    assert canonical_digest({"name": "é"}) == canonical_digest({"name": "\u00e9"})


def test_keys_sort_by_code_point_including_non_ascii_keys():
    assert canonical_json({"é": 1, "z": 2, "A": 3, "a": 4}) == '{"A":3,"a":4,"z":2,"é":1}'


def test_control_characters_and_quotes_are_escaped_by_json_rules():
    assert canonical_json({"s": 'a"b\\c\n\t\x00'}) == '{"s":"a\\"b\\\\c\\n\\t\\u0000"}'


def test_unicode_normal_forms_are_kept_distinct_not_silently_normalised():
    composed, decomposed = "\u00e9", "e\u0301"
    assert canonical_json(composed) != canonical_json(decomposed)


def test_integers_of_any_size_booleans_and_null_are_allowed():
    assert canonical_json([0, -1, 2**70, True, False, None]) == "[0,-1,1180591620717411303424,true,false,null]"


@pytest.mark.parametrize("value", [1.5, 1.0, -0.0, math.nan, math.inf, -math.inf], ids=repr)
def test_floats_including_whole_ones_nan_and_infinity_are_refused(value):
    with pytest.raises(CanonicalJsonError, match="float"):
        canonical_json({"deep": [{"value": value}]})


def test_a_refusal_names_where_the_bad_value_is():
    with pytest.raises(CanonicalJsonError, match=r"\$\.deep\[0\]\.value"):
        canonical_json({"deep": [{"value": 0.1}]})


@pytest.mark.parametrize("key", [1, None, True, (1, 2), 1.5], ids=repr)
def test_non_string_keys_are_refused(key):
    with pytest.raises(CanonicalJsonError, match="keys must be strings"):
        canonical_json({key: 1})


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object()], ids=["set", "bytes", "object"])
def test_values_with_no_json_form_are_refused(value):
    with pytest.raises(CanonicalJsonError):
        canonical_json({"v": value})


def test_a_lone_surrogate_is_refused_because_it_is_not_utf8():
    with pytest.raises(CanonicalJsonError, match="UTF-8"):
        canonical_json({"s": "\ud800"})


def test_the_digest_is_sha256_of_the_canonical_utf8_bytes():
    import hashlib

    document = {"b": "é", "a": 1}
    assert canonical_digest(document) == hashlib.sha256('{"a":1,"b":"é"}'.encode()).hexdigest()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_canonical_json_is_a_fixed_point_of_parsing_it_back(value):
    try:
        text = canonical_json(value)
    except CanonicalJsonError:
        return  # a generated string held a lone surrogate
    assert canonical_json(json.loads(text)) == text
    assert json.loads(text) == value


@given(st.dictionaries(st.text(alphabet=st.characters(exclude_categories=["Cs"])), st.integers(), max_size=8))
def test_equal_objects_built_in_any_order_serialise_identically(value):
    reordered = dict(reversed(list(value.items())))
    assert canonical_json(reordered) == canonical_json(value)


# -- composing canonical text from parts already encoded ----------------------------------------------


@given(st.dictionaries(st.text(alphabet=st.characters(exclude_categories=["Cs"])), json_values, max_size=6))
def test_an_object_joined_from_its_members_texts_is_its_canonical_text(value):
    try:
        members = {key: canonical_text(item) for key, item in value.items()}
    except CanonicalJsonError:
        return  # a generated string held a lone surrogate
    assert join_object(members) == canonical_json(value)


@given(st.lists(json_values, max_size=6))
def test_an_array_joined_from_its_items_texts_is_its_canonical_text(value):
    try:
        items = [canonical_text(item) for item in value]
    except CanonicalJsonError:
        return
    assert join_array(items) == canonical_json(value)


def test_joining_refuses_a_part_that_was_not_made_canonical():
    with pytest.raises(TypeError, match="canonical"):
        join_object({"a": '{"b": 1}'})
    with pytest.raises(TypeError, match="canonical"):
        join_array(["1.5"])


def test_canonical_text_is_the_same_text_as_canonical_json_and_marked_as_such():
    text = canonical_text({"b": [1, 2], "a": None})
    assert text == canonical_json({"b": [1, 2], "a": None})
    assert isinstance(text, CanonicalText)
    assert not isinstance(canonical_json({"a": 1}), CanonicalText)
