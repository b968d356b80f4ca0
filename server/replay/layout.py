"""Board pictures for any game, from its fluents alone: pure functions, no game-specific code.

A kind of fluent ``(f c1 ... ck content)`` whose ``k`` (2, 3 or 4) coordinates are small
numbers or single letters is a grid: two coordinates give a plain board (``(cell 1 2 x)``),
three a row of boards (``(cell 2 1 3 b)``: board 2, row 1, column 3) and four a board of
boards (nine-board tic-tac-toe).  :func:`detect_grids` finds them over a sample of states
(a game whose first state has an empty board, such as connect four, still gets its grid
from later states); :func:`draw_state` places one state's fluents on them and lists the
rest as facts.  The drawing is plain data (``to_json``) that the pages render.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from server.gdl.terms import RawTerm, sort_key, to_kif

MAX_NUMBER = 32
"""Numeric coordinates above this are not taken for a board."""
MAX_SPAN = {2: 26, 3: 9, 4: 9}
"""Largest number of values of one coordinate, per number of coordinates."""
MIN_PLACES = 4
"""A grid needs at least this many distinct places over the sample."""
BLANKS = frozenset({"b", "blank", "empty", "none", "_", "e"})
"""Contents drawn as an empty square."""


def _coordinate(value: RawTerm) -> bool:
    if not isinstance(value, str):
        return False
    if value.isdigit():
        return int(value) <= MAX_NUMBER
    return len(value) == 1 and value.isalpha()


def _shape(fact: RawTerm) -> tuple[str, int] | None:
    """``(functor, number of coordinates)`` when ``fact`` places a content on a grid."""
    if not isinstance(fact, tuple) or len(fact) - 2 not in MAX_SPAN:
        return None
    functor, *coordinates, content = fact
    if not isinstance(functor, str) or not isinstance(content, str):
        return None
    if not all(_coordinate(value) for value in coordinates):
        return None
    return functor, len(coordinates)


def _ordered(values: Iterable[str]) -> tuple[str, ...]:
    """Coordinate values in order: numbers by value (gaps filled), letters alphabetically."""
    values = set(values)
    if all(value.isdigit() and value == str(int(value)) for value in values):
        numbers = [int(value) for value in values]
        return tuple(str(number) for number in range(min(numbers), max(numbers) + 1))
    return tuple(sorted(set(values), key=lambda value: (not value.isdigit(), _number(value))))


def _number(value: str) -> int | str:
    return int(value) if value.isdigit() else value


@dataclass(frozen=True)
class Grid:
    """One kind of fluent drawn as a grid: its functor and the values of each coordinate."""

    functor: str
    axes: tuple[tuple[str, ...], ...]
    """The ordered values of each coordinate, as the fluents write them."""

    @property
    def columns_first(self) -> bool:
        """Chess-like ``(cell a 1 wr)``: the letter coordinate is the column, rank 1 at the
        bottom."""
        first, second = self.axes[-2], self.axes[-1]
        return any(value.isalpha() for value in first) and all(v.isdigit() for v in second)

    def holds(self, fact: RawTerm) -> bool:
        return (
            isinstance(fact, tuple)
            and _shape(fact) == (self.functor, len(self.axes))
            and all(value in axis for value, axis in zip(fact[1:-1], self.axes, strict=False))
        )


def detect_grids(states: Iterable[Iterable[RawTerm]]) -> list[Grid]:
    """The grids of a game over a sample of its states, the one with most places first."""
    values: dict[tuple[str, int], list[set[str]]] = {}
    places: dict[tuple[str, int], set[tuple[RawTerm, ...]]] = defaultdict(set)
    for facts in states:
        for fact in facts:
            shape = _shape(fact)
            if shape is None:
                continue
            assert isinstance(fact, tuple)
            axes = values.setdefault(shape, [set() for _ in range(shape[1])])
            for axis, value in zip(axes, fact[1:-1], strict=False):
                assert isinstance(value, str)
                axis.add(value)
            places[shape].add(fact[1:-1])
    grids = []
    for shape, axes in values.items():
        if len(places[shape]) < MIN_PLACES:
            continue
        if any(len(axis) > MAX_SPAN[shape[1]] for axis in axes):
            continue
        grids.append((len(places[shape]), Grid(shape[0], tuple(_ordered(a) for a in axes))))
    grids.sort(key=lambda item: (-item[0], item[1].functor))
    return [grid for _, grid in grids]


@dataclass(frozen=True)
class Board:
    """One grid in one state: boards of rows of squares; ``""`` is an empty square.

    ``boards[i][j]`` is the small board at outer row ``i`` and column ``j`` (one for a
    plain grid, one row of them for three coordinates); each is a list of rows of squares.
    """

    functor: str
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    boards: tuple[tuple[tuple[tuple[str, ...], ...], ...], ...]
    places: tuple[tuple[tuple[tuple[tuple[str, ...], ...], ...], ...], ...]
    """The coordinates of each square as the fluents write them (to match moves)."""

    @property
    def size(self) -> tuple[int, int, int, int]:
        """Outer rows, outer columns, rows and columns of each small board."""
        return (
            len(self.boards),
            len(self.boards[0]),
            len(self.row_labels),
            len(self.column_labels),
        )

    def square(self, *index: int) -> str:
        """The content at ``(outer_row, outer_column, row, column)``."""
        outer_row, outer_column, row, column = index
        return self.boards[outer_row][outer_column][row][column]


@dataclass(frozen=True)
class Drawing:
    """A state as boards plus the facts that are on no board."""

    boards: tuple[Board, ...]
    facts: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "boards": [
                {
                    "functor": board.functor,
                    "rowLabels": list(board.row_labels),
                    "columnLabels": list(board.column_labels),
                    "boards": board.boards,
                    "places": board.places,
                }
                for board in self.boards
            ],
            "facts": list(self.facts),
        }


def _draw_grid(facts: Sequence[RawTerm], grid: Grid) -> Board:
    contents: dict[tuple[str, ...], str] = {}
    for fact in facts:
        if grid.holds(fact):
            assert isinstance(fact, tuple)
            place = tuple(str(value) for value in fact[1:-1])
            content = str(fact[-1])
            shown = "" if content.lower() in BLANKS else content
            old = contents.get(place)
            contents[place] = shown if old in (None, "", shown) else f"{old} {shown}"
    outer = list(grid.axes[:-2])
    rows, columns = grid.axes[-2], grid.axes[-1]
    swap = grid.columns_first
    if swap:
        rows, columns = tuple(reversed(columns)), rows
    outer_rows = outer[0] if len(outer) == 2 else ("",)
    outer_columns = outer[-1] if outer else ("",)

    def locate(outer_row: str, outer_column: str, row: str, column: str) -> tuple[str, ...]:
        inner = (column, row) if swap else (row, column)
        prefix = {0: (), 1: (outer_column,), 2: (outer_row, outer_column)}[len(outer)]
        return (*prefix, *inner)

    all_places = tuple(
        tuple(
            tuple(tuple(locate(orow, ocol, row, column) for column in columns) for row in rows)
            for ocol in outer_columns
        )
        for orow in outer_rows
    )
    boards = tuple(
        tuple(
            tuple(tuple(contents.get(square, "") for square in row) for row in small)
            for small in outer_row
        )
        for outer_row in all_places
    )
    return Board(grid.functor, rows, columns, boards, all_places)


def draw_state(facts: Iterable[RawTerm], grids: Sequence[Grid]) -> Drawing:
    """Draw one state on ``grids``; every fluent on no grid is listed in KIF, sorted."""
    ordered = sorted(facts, key=sort_key)
    boards = tuple(_draw_grid(ordered, grid) for grid in grids)
    rest = tuple(to_kif(fact) for fact in ordered if not any(g.holds(fact) for g in grids))
    return Drawing(boards, rest)


def move_places(move: RawTerm, board: Board) -> list[tuple[str, ...]]:
    """The squares of ``board`` that a move names by its arguments, in order.

    ``(mark 2 3)`` names the square (2, 3); ``(move 1 1 2 2)`` names two squares, its
    source and target; chess-like ``(move wp a 2 a 4)`` too.  Used to make squares clickable.
    """
    if not isinstance(move, tuple):
        return []
    arguments = [value for value in move[1:] if isinstance(value, str)]
    depth = len(board.places[0][0][0][0])
    wanted = {
        square for outer in board.places for small in outer for row in small for square in row
    }
    found = []
    index = 0
    while index + depth <= len(arguments):
        candidate = tuple(arguments[index : index + depth])
        if candidate in wanted:
            found.append(candidate)
            index += depth
        else:
            index += 1
    return found
