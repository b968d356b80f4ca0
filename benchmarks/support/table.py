"""Printing a benchmark's table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def print_row(columns: Sequence[str], row: Mapping[str, Any]) -> None:
    """The column names, then the row's values, each column as wide as its widest cell."""
    print_rows(columns, [row])


def print_rows(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """The column names, then each row's values, each column as wide as its widest cell."""
    widths = [max([len(name), *(len(str(row[name])) for row in rows)]) for name in columns]
    print("  ".join(name.ljust(width) for name, width in zip(columns, widths, strict=True)))
    for row in rows:
        print(
            "  ".join(
                str(row[name]).ljust(width) for name, width in zip(columns, widths, strict=True)
            ),
            flush=True,
        )
