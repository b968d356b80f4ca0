"""JSON text of the values the store keeps in ``json`` columns, written in compiled code.

SQLAlchemy writes a ``json`` column's value with ``json.dumps``; pydantic_core's writer
gives the same value as compact JSON several times faster, which counts at a few values
per stored step.  Anything it cannot write (a lone surrogate, for one) takes
``json.dumps``, so every value is written as before.  The text may differ in form (no
spaces, characters beyond ASCII written as themselves), never in the value read back.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core


def dump_json(value: Any) -> str:
    """``value`` as compact JSON text."""
    try:
        return pydantic_core.to_json(value).decode("utf-8")
    except ValueError:  # pydantic_core.PydanticSerializationError is one
        return json.dumps(value)
