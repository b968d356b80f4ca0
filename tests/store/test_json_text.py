"""Values of json columns are written in compiled code and read back unchanged, with
json.dumps taking what the compiled writer cannot."""

from __future__ import annotations

import json

import pytest

from server.store.json_text import dump_json

VALUES = [
    {"moves": ["( mark 1 2 )", "noop"], "errors": ["", "IL ( MARK )"], "times": [3, None]},
    ['é€\u0000"\\\n', {"nested": [True, False, None, 2**70, -1.5, 1e300]}],
    "",
    [],
    {},
]


@pytest.mark.parametrize("value", VALUES)
def test_every_value_reads_back_unchanged(value: object) -> None:
    text = dump_json(value)
    assert json.loads(text) == value
    assert " " not in text.replace("( mark 1 2 )", "").replace("IL ( MARK )", "")


def test_a_lone_surrogate_takes_json_dumps() -> None:
    value = {"reply": "\ud800 lone"}
    assert dump_json(value) == json.dumps(value)
    assert json.loads(dump_json(value)) == value
