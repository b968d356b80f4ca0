"""Whole numbers read from a query string, bounded so that a database can hold them."""

from __future__ import annotations

MAX_QUERY_NUMBER = 1_000_000_000
"""The largest offset or version a request may ask for: far past any list or game, well
within a database integer."""


def whole_number(text: str, *, most: int) -> int | None:
    """``text`` as a whole number from 0 to ``most``; ``None`` when it is not one (signs,
    spaces, digits of other scripts such as ``²``, or a number past ``most``)."""
    if not text or len(text) > len(str(most)) or not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value <= most else None
