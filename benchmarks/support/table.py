"""Printing a benchmark's one-row table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def print_row(columns: Sequence[str], row: Mapping[str, Any]) -> None:
    """The column names, then the row's values, each column as wide as its widest cell."""
    widths = [max(len(name), len(str(row[name]))) for name in columns]
    print("  ".join(name.ljust(width) for name, width in zip(columns, widths, strict=True)))
    print(
        "  ".join(str(row[name]).ljust(width) for name, width in zip(columns, widths, strict=True))
    )
