"""The indented JSON text of match logs, as ``json.dumps(data, indent=1,
ensure_ascii=False, allow_nan=False)`` writes it, byte for byte, and faster.

Python's ``json`` module falls back to its pure-Python encoder whenever ``indent`` is
set, which costs about a millisecond per log of a short match; ``pydantic_core``
writes the same text in compiled code. It is used only for the values whose text
both write alike (objects with string keys, lists, strings, integers, booleans and
``null``); anything else, such as a float, takes the standard path.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

_PLAIN = frozenset({str, int, bool, type(None)})
"""The exact scalar types written alike (subclasses, such as enums, are not taken)."""


def _both_write_alike(data: Any) -> bool:
    """True when ``data`` holds only values that both encoders write the same way."""
    pending = [data]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is dict:
            if any(type(key) is not str for key in value):
                return False
            pending.extend(value.values())
        elif kind is list:
            pending.extend(value)
        elif kind not in _PLAIN:
            return False
    return True


def indented_json(data: Any, *, allow_nan: bool = False) -> str:
    """``data`` as ``json.dumps(data, indent=1, ensure_ascii=False, allow_nan=allow_nan)``."""
    if _both_write_alike(data):
        try:
            return pydantic_core.to_json(data, indent=1).decode("utf-8")
        except (ValueError, UnicodeError):  # a lone surrogate, for one
            pass
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=allow_nan)
