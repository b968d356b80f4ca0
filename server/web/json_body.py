"""Reading JSON sent to the service: any failure is a 400 naming the field, never a 500."""

from __future__ import annotations

import json
from typing import Any

from server.errors import InvalidInput


def parse_json(raw: bytes, *, field: str = "body", what: str = "the body") -> Any:
    """``raw`` read as JSON (empty is ``null``); :class:`InvalidInput` on ``field`` when it
    is not JSON, not UTF-8, or nested too deeply for the reader."""
    try:
        return json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidInput(f"{what} is not JSON: {error}", field=field) from None
    except RecursionError:
        raise InvalidInput(f"{what} is nested too deeply to be read", field=field) from None


def parse_json_object(raw: bytes, *, field: str = "body") -> dict[str, Any]:
    """``raw`` read as one JSON object; :class:`InvalidInput` otherwise."""
    data = parse_json(raw, field=field)
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object", field=field)
    return data
