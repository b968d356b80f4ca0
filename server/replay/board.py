"""Drawing grid games in the terminal from their fluents.

A game is drawn as a board when a kind of fluent places a mark on small integer
coordinates: ``(cell 1 2 x)`` (row, column, mark) gives a plain grid, and
``(mark 1 2 3 3 o)`` (board row, board column, row, column, mark) gives nine-board
style boards of boards.  A game may have several boards (one per kind of fluent).
Every other fluent is listed under the boards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.gdl.terms import RawTerm, sort_key, to_kif

MAX_COORDINATE = 32
"""Coordinates above this are not taken for a board."""
MAX_SPAN = {2: 26, 4: 9}
"""Largest number of rows or columns drawn, per number of coordinates."""
BLANKS = frozenset({"b", "blank", "empty", "none", "_"})
"""Marks drawn as an empty square."""
EMPTY = "."


@dataclass(frozen=True)
class GridLayout:
    """Which fluents form the board, and the range of each coordinate."""

    functor: str
    ranges: tuple[tuple[int, int], ...]
    """``(lowest, highest)`` of each coordinate: two for a grid, four for nine-board."""

    def matches(self, fact: RawTerm) -> bool:
        return (
            _placement(fact) is not None
            and fact[0] == self.functor
            and (len(fact) - 2 == len(self.ranges))
        )


def _placement(fact: RawTerm) -> tuple[int, ...] | None:
    """The coordinates of ``(f c1 ... ck mark)`` with k in (2, 4), else None."""
    if not isinstance(fact, tuple) or len(fact) - 2 not in MAX_SPAN:
        return None
    *coordinates, mark = fact[1:]
    if not isinstance(mark, str):
        return None
    numbers = []
    for value in coordinates:
        if not isinstance(value, str) or not value.isdigit() or int(value) > MAX_COORDINATE:
            return None
        numbers.append(int(value))
    return tuple(numbers)


def detect_layouts(states: Iterable[Iterable[RawTerm]]) -> list[GridLayout]:
    """The boards shared by the states of a match, most used first (often none or one)."""
    counts: Counter[tuple[str, int]] = Counter()
    lows: dict[tuple[str, int], list[int]] = {}
    highs: dict[tuple[str, int], list[int]] = {}
    for facts in states:
        for fact in facts:
            place = _placement(fact)
            if place is None:
                continue
            kind = (fact[0], len(place))
            counts[kind] += 1
            low = lows.setdefault(kind, list(place))
            high = highs.setdefault(kind, list(place))
            for axis, value in enumerate(place):
                low[axis] = min(low[axis], value)
                high[axis] = max(high[axis], value)
    layouts = []
    for kind, _count in counts.most_common():
        ranges = tuple(zip(lows[kind], highs[kind], strict=True))
        if all(high - low < MAX_SPAN[kind[1]] for low, high in ranges):
            layouts.append(GridLayout(kind[0], ranges))
    return layouts


def _cells(facts: Iterable[RawTerm], layout: GridLayout) -> dict[tuple[int, ...], str]:
    cells: dict[tuple[int, ...], str] = {}
    for fact in sorted(facts, key=sort_key):
        if not layout.matches(fact):
            continue
        place = _placement(fact)
        assert place is not None
        mark = fact[-1]
        shown = EMPTY if mark.lower() in BLANKS else mark
        cells[place] = "+" if place in cells and cells[place] != shown else shown
    return cells


def _span(bounds: tuple[int, int]) -> range:
    return range(bounds[0], bounds[1] + 1)


def draw_board(facts: Iterable[RawTerm], layout: GridLayout) -> list[str]:
    """The board in a state as lines of text (without the other fluents)."""
    cells = _cells(facts, layout)
    width = max([1, *(len(mark) for mark in cells.values())])
    width = min(width, 4)

    def cell(place: tuple[int, ...]) -> str:
        return cells.get(place, EMPTY)[:width].ljust(width)

    if len(layout.ranges) == 2:
        rows, columns = (_span(bounds) for bounds in layout.ranges)
        label = max(len(str(row)) for row in rows)
        lines = [" " * label + "  " + " ".join(str(column).ljust(width) for column in columns)]
        for row in rows:
            squares = " ".join(cell((row, column)) for column in columns)
            lines.append(f"{str(row).rjust(label)}  {squares}")
        return [line.rstrip() for line in lines]

    big_rows, big_columns, rows, columns = (_span(bounds) for bounds in layout.ranges)
    lines = []
    separator = "-+-".join("-" * (len(columns) * (width + 1) - 1) for _ in big_columns)
    for index, big_row in enumerate(big_rows):
        if index:
            lines.append(separator)
        for row in rows:
            boards = (
                " ".join(cell((big_row, big_column, row, column)) for column in columns)
                for big_column in big_columns
            )
            lines.append(" | ".join(boards).rstrip())
    return lines


def other_fluents(facts: Iterable[RawTerm], layouts: Sequence[GridLayout] = ()) -> list[str]:
    """The fluents not drawn on a board, in KIF, in a fixed order."""
    rest = [fact for fact in facts if not any(layout.matches(fact) for layout in layouts)]
    return [to_kif(fact) for fact in sorted(rest, key=sort_key)]
