"""Canonical JSON, the signed content of a log: one text per content, whatever the key
order, the layout or the signature fields; the text reads back as the content."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.records.signing import PUBLIC_KEY_FIELD, SIGNATURE_FIELD, canonical_bytes

MODEST = settings(max_examples=100, deadline=None)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
"""Any JSON value a log can hold (NaN and infinities are refused, see below)."""

records = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON value with the keys of every object in another order."""
    if isinstance(value, dict):
        items = [(key, _shuffled(item, rng)) for key, item in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@MODEST
@given(records, st.randoms(use_true_random=False))
def test_key_order_at_any_depth_does_not_change_the_canonical_text(
    record: dict[str, Any], rng: random.Random
) -> None:
    assert canonical_bytes(_shuffled(record, rng)) == canonical_bytes(record)


@MODEST
@given(records)
def test_the_canonical_text_reads_back_as_the_content(record: dict[str, Any]) -> None:
    content = {k: v for k, v in record.items() if k not in (PUBLIC_KEY_FIELD, SIGNATURE_FIELD)}
    assert json.loads(canonical_bytes(record)) == content


@MODEST
@given(records, st.text(max_size=8), st.text(max_size=8))
def test_the_signature_fields_are_left_out(record: dict[str, Any], key: str, sig: str) -> None:
    signed = {**record, PUBLIC_KEY_FIELD: key, SIGNATURE_FIELD: sig}
    unsigned = {k: v for k, v in record.items() if k not in (PUBLIC_KEY_FIELD, SIGNATURE_FIELD)}
    assert canonical_bytes(signed) == canonical_bytes(unsigned)


def test_the_canonical_text_is_sorted_compact_utf8() -> None:
    record = {"b": [1, {"z": None, "a": "Zoë"}], "a": 1.5, "c": True}
    assert canonical_bytes(record) == '{"a":1.5,"b":[1,{"a":"Zoë","z":null}],"c":true}'.encode()


def test_the_signature_fields_are_dropped_only_at_the_top() -> None:
    record = {PUBLIC_KEY_FIELD: "k", "inner": {SIGNATURE_FIELD: "s"}}
    assert canonical_bytes(record) == ('{"inner":{"' + SIGNATURE_FIELD + '":"s"}}').encode()


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_numbers_json_cannot_hold_are_refused(number: float) -> None:
    with pytest.raises(ValueError):
        canonical_bytes({"goalValues": [number]})
