"""Match logs are written as indented JSON exactly as Python's ``json`` writes it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from server.records.json_text import indented_json

_CHARACTERS = [chr(code) for code in range(160)] + ["\u2028", "é", "中", "\U0001f600", "\ud800"]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-like value: nested objects and lists of strings (control characters,
    lone surrogates), big integers, booleans, null and now and then a float."""
    pick = rng.random()
    if depth > 4 or pick < 0.3:
        kind = rng.random()
        if kind < 0.4:
            return "".join(rng.choice(_CHARACTERS) for _ in range(rng.randint(0, 8)))
        if kind < 0.6:
            return rng.randint(-(10**30), 10**30)
        if kind < 0.75:
            return rng.choice([True, False, None])
        if kind < 0.8:
            return rng.choice([0.0, -0.0, 1.5, 1e16, 1e-7, 0.1, float("nan")])
        return rng.randint(-5, 5)
    if pick < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        "".join(rng.choice(_CHARACTERS) for _ in range(rng.randint(0, 5))): _random_value(
            rng, depth + 1
        )
        for _ in range(rng.randint(0, 4))
    }


def _standard(value: Any, allow_nan: bool) -> str:
    try:
        return json.dumps(value, indent=1, ensure_ascii=False, allow_nan=allow_nan)
    except ValueError as error:
        return f"error: {type(error).__name__}"


def _ours(value: Any, allow_nan: bool) -> str:
    try:
        return indented_json(value, allow_nan=allow_nan)
    except ValueError as error:
        return f"error: {type(error).__name__}"


@pytest.mark.parametrize("allow_nan", [False, True])
def test_the_text_is_that_of_the_json_module_for_every_value(allow_nan: bool) -> None:
    rng = random.Random(7)
    for _ in range(5000):
        value = _random_value(rng)
        assert _ours(value, allow_nan) == _standard(value, allow_nan), value


def test_a_match_log_is_written_as_the_json_module_writes_it() -> None:
    log = {
        "matchId": "m.1",
        "states": ["( ( cell 1 1 b ) ( control xplayer ) )"] * 3,
        "moves": [["( mark 1 1 )", "noop"], ["noop", "( mark 2 2 )"]],
        "errors": [["", ""], ["IL ( MARK 1 1 )", "TO"]],
        "errorDetails": [[None, {"kind": "illegal", "rawReply": '( MARK 1 1 )\n\t"x"'}]],
        "goalValues": [100, 0],
        "isCompleted": True,
        "note": "été 中 \U0001f600",
    }
    assert indented_json(log) == json.dumps(log, indent=1, ensure_ascii=False, allow_nan=False)


def test_values_the_fast_path_cannot_write_alike_take_the_standard_path() -> None:
    class Code(int):
        def __repr__(self) -> str:
            return "Code()"

    for value in ({"time": 1.5}, [1e16], {1: "a"}, ("a", "b"), {"code": Code(3)}):
        assert indented_json(value) == json.dumps(value, indent=1, ensure_ascii=False)
