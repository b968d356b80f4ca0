"""Each seed game written a second time, in plain Python, straight from the rules text.

The GDL and these models are independent statements of the same rules; the tests play
random games through both and compare legal moves, termination and goals at every step.
A model's state is a plain dict; moves are canonical KIF strings.
"""

from __future__ import annotations

from itertools import product
from typing import Any

CELLS = [(row, column) for row in (1, 2, 3) for column in (1, 2, 3)]
LINES = (
    [[(row, column) for column in (1, 2, 3)] for row in (1, 2, 3)]
    + [[(row, column) for row in (1, 2, 3)] for column in (1, 2, 3)]
    + [[(1, 1), (2, 2), (3, 3)], [(1, 3), (2, 2), (3, 1)]]
)
NOOP = "noop"

State = dict[str, Any]


def line_owner(board: dict[tuple[int, int], str]) -> str | None:
    """The mark that has three in a row on a 3x3 board, if any."""
    for line in LINES:
        marks = {board.get(cell) for cell in line}
        if len(marks) == 1 and None not in marks:
            return marks.pop()
    return None


def sub_board(big: dict[tuple[int, int, int, int], str], i: int, j: int):
    return {(k, n): mark for (a, b, k, n), mark in big.items() if (a, b) == (i, j)}


def big_line_owner(big: dict[tuple[int, int, int, int], str]) -> str | None:
    """The mark with three in a row inside one sub-board of a nine-board, if any."""
    for i, j in CELLS:
        owner = line_owner(sub_board(big, i, j))
        if owner:
            return owner
    return None


def big_moves(big, current: tuple[int, int] | None) -> list[tuple[int, int, int, int]]:
    """Empty cells where a nine-board move may go, given the current sub-board."""
    empty = [cell for cell in product((1, 2, 3), repeat=4) if cell not in big]
    if current is not None and any(cell[:2] == current for cell in empty):
        return [cell for cell in empty if cell[:2] == current]
    return empty


class NineBoard:
    """002 nineBoardTicTacToe (and, with other move names, 001 tictactoex9)."""

    roles = ["xPlayer", "oPlayer"]
    marks = {"xPlayer": "x", "oPlayer": "o"}
    running_goal: int | None = 0

    def initial(self) -> State:
        return {"big": {}, "current": None, "mover": self.roles[0]}

    def move_text(self, cell, mark: str) -> str:
        return "(play {} {} {} {} {})".format(*cell, mark)

    def mark_of(self, state: State, role: str) -> str:
        return self.marks[role]

    def legal(self, state: State, role: str) -> set[str]:
        if role != state["mover"]:
            return {NOOP}
        mark = self.mark_of(state, role)
        return {self.move_text(cell, mark) for cell in big_moves(state["big"], state["current"])}

    def cell_of(self, move: str) -> tuple[int, int, int, int]:
        i, j, k, n = (int(part) for part in move.strip("()").split()[1:5])
        return i, j, k, n

    def apply(self, state: State, joint: list[str]) -> State:
        move = joint[self.roles.index(state["mover"])]
        cell = self.cell_of(move)
        big = {**state["big"], cell: self.mark_of(state, state["mover"])}
        other = self.roles[1 - self.roles.index(state["mover"])]
        return {**state, "big": big, "current": cell[2:], "mover": other}

    def terminal(self, state: State) -> bool:
        return big_line_owner(state["big"]) is not None or len(state["big"]) == 81

    def goals(self, state: State) -> dict[str, int]:
        owner = big_line_owner(state["big"])
        if owner:
            return {role: 100 if self.mark_of(state, role) == owner else 0 for role in self.roles}
        if len(state["big"]) == 81:
            return dict.fromkeys(self.roles, 50)
        return {} if self.running_goal is None else dict.fromkeys(self.roles, self.running_goal)


class BoardToPlay(NineBoard):
    """001 tictactoex9: the same game, (mark I J K L) moves, no goals while running."""

    roles = ["xplayer", "oplayer"]
    marks = {"xplayer": "x", "oplayer": "o"}
    running_goal = None

    def move_text(self, cell, mark: str) -> str:
        return "(mark {} {} {} {})".format(*cell)


class Pie(NineBoard):
    """003 nineBoardTicTacToePie: blue may swap marks on its first turn."""

    roles = ["red", "blue"]

    def initial(self) -> State:
        return {**super().initial(), "marks": {"red": "x", "blue": "o"}, "turns": 0}

    def mark_of(self, state: State, role: str) -> str:
        return state["marks"][role]

    def legal(self, state: State, role: str) -> set[str]:
        moves = super().legal(state, role)
        if role == "blue" and state["mover"] == "blue" and state["turns"] == 1:
            moves.add("swap")
        return moves

    def apply(self, state: State, joint: list[str]) -> State:
        if joint[1] == "swap":
            swapped = {"red": state["marks"]["blue"], "blue": state["marks"]["red"]}
            return {**state, "marks": swapped, "mover": "red", "turns": state["turns"] + 1}
        return {**super().apply(state, joint), "turns": state["turns"] + 1}


class Heaven:
    """000 ticTacHeaven: a small board and a nine-board; noop always legal."""

    roles = ["xplayer", "oplayer"]
    marks = {"xplayer": "x", "oplayer": "o"}

    def initial(self) -> State:
        return {"small": {}, "big": {}, "current": None, "mover": "xplayer"}

    def legal(self, state: State, role: str) -> set[str]:
        if role != state["mover"]:
            return {NOOP}
        mark = self.marks[role]
        small = {"(mark_small {} {})".format(*cell) for cell in CELLS if cell not in state["small"]}
        big = {
            "(play_large {} {} {} {} {})".format(*cell, mark)
            for cell in big_moves(state["big"], state["current"])
        }
        return {NOOP} | small | big

    def apply(self, state: State, joint: list[str]) -> State:
        mover = state["mover"]
        move = joint[self.roles.index(mover)]
        other = self.roles[1 - self.roles.index(mover)]
        after = {**state, "mover": other, "current": None}
        parts = move.strip("()").split()
        if parts[0] == "mark_small":
            after["small"] = {**state["small"], (int(parts[1]), int(parts[2])): self.marks[mover]}
        elif parts[0] == "play_large":
            cell = tuple(int(part) for part in parts[1:5])
            after["big"] = {**state["big"], cell: self.marks[mover]}
            after["current"] = cell[2:]
        return after

    def ended(self, state: State) -> dict[str, int] | None:
        """The goals from whichever board has ended, or None."""
        for owner, full in (
            (line_owner(state["small"]), len(state["small"]) == 9),
            (big_line_owner(state["big"]), len(state["big"]) == 81),
        ):
            if owner:
                return {role: 100 if self.marks[role] == owner else 0 for role in self.roles}
            if full:
                return dict.fromkeys(self.roles, 50)
        return None

    def terminal(self, state: State) -> bool:
        return self.ended(state) is not None

    def goals(self, state: State) -> dict[str, int]:
        return self.ended(state) or dict.fromkeys(self.roles, 50)


class Double:
    """004 double_tictactoe_dengji: two boards, the game ends when both are finished."""

    roles = ["xplayer", "oplayer"]
    marks = {"xplayer": "x", "oplayer": "o"}

    def initial(self) -> State:
        return {"boards": ({}, {}), "mover": "xplayer"}

    def finished(self, board) -> bool:
        return line_owner(board) is not None or len(board) == 9

    def legal(self, state: State, role: str) -> set[str]:
        if role != state["mover"]:
            return {NOOP}
        return {
            f"(mark{number} {row} {column})"
            for number, board in enumerate(state["boards"], 1)
            if not self.finished(board)
            for row, column in CELLS
            if (row, column) not in board
        }

    def apply(self, state: State, joint: list[str]) -> State:
        mover = state["mover"]
        name, row, column = joint[self.roles.index(mover)].strip("()").split()
        boards = list(state["boards"])
        number = int(name[-1]) - 1
        boards[number] = {**boards[number], (int(row), int(column)): self.marks[mover]}
        return {"boards": tuple(boards), "mover": self.roles[1 - self.roles.index(mover)]}

    def terminal(self, state: State) -> bool:
        return all(self.finished(board) for board in state["boards"])

    def goals(self, state: State) -> dict[str, int]:
        if not self.terminal(state):
            return {}
        owners = [line_owner(board) for board in state["boards"]]
        result = {}
        for role in self.roles:
            own = sum(owner == self.marks[role] for owner in owners)
            theirs = sum(owner not in (None, self.marks[role]) for owner in owners)
            result[role] = 50 + 25 * (own - theirs)
        return result


MODELS = {
    "ticTacHeaven": Heaven(),
    "tictactoex9": BoardToPlay(),
    "nineBoardTicTacToe": NineBoard(),
    "nineBoardTicTacToePie": Pie(),
    "double_tictactoe_dengji": Double(),
}
