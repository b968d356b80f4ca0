"""A small language for rule tests: positions reached by playing KIF moves.

    >>> position = start("tictactoex9").then("(mark 1 1 2 3)")
    >>> position.mover
    'oplayer'
    >>> len(position.legal("oplayer"))
    9

``then`` takes the move of the player to move (the others play ``noop``);
``joint`` takes one move per role.  Positions that would take too long to play
out are built from their fluents with :func:`position`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from server.games import load_game
from server.gdl import Game, State
from server.gdl.parser import parse_term
from server.gdl.terms import to_kif

NOOP = "noop"


@cache
def game(name: str) -> Game:
    """A bundled game, loaded once per test run."""
    return load_game(name)


def kif(text: str) -> str:
    """KIF text in its one canonical spelling: ``( mark 1 2 )`` -> ``(mark 1 2)``."""
    return to_kif(parse_term(text))


@dataclass(frozen=True)
class Position:
    """A state of a bundled game, with questions worded as the rules are."""

    name: str
    state: State

    @property
    def game(self) -> Game:
        return game(self.name)

    def legal(self, role: str) -> set[str]:
        """The role's legal moves, as canonical KIF strings."""
        return {str(move) for move in self.game.legal_moves(self.state, role)}

    def is_legal(self, role: str, move: str) -> bool:
        return kif(move) in self.legal(role)

    @property
    def mover(self) -> str:
        """The one role that has a move other than noop."""
        movers = [role for role in self.game.roles if self.legal(role) - {NOOP}]
        assert len(movers) == 1, f"expected one player to move, found {movers}"
        return movers[0]

    @property
    def terminal(self) -> bool:
        return self.game.is_terminal(self.state)

    @property
    def goals(self) -> dict[str, int]:
        """The goal of every role whose goal is defined here."""
        return self.game.defined_goals(self.state)

    def holds(self, fluent: str) -> bool:
        """Whether the fluent, given as KIF, is true here."""
        return parse_term(fluent) in self.state

    def joint(self, *moves: str) -> Position:
        """The position after one joint move, one KIF move per role in role order."""
        return Position(self.name, self.game.next_state(self.state, [kif(m) for m in moves]))

    def then(self, *moves: str) -> Position:
        """The position after each move in turn, played by the player to move."""
        current = self
        for move in moves:
            mover = current.mover
            current = current.joint(*(move if role == mover else NOOP for role in self.game.roles))
        return current


def start(name: str) -> Position:
    """The initial position of a bundled game."""
    return Position(name, game(name).initial_state())


def position(name: str, fluents: Iterable[str]) -> Position:
    """A position given by its fluents (KIF), for states too long to play out."""
    return Position(name, State(parse_term(fluent) for fluent in fluents))


# A 3x3 board filled without three in a row, 5 x and 4 o: rows "xox", "xoo", "oxx".
DRAWN_BOARD = {(1, 1): "x", (1, 2): "o", (1, 3): "x",
               (2, 1): "x", (2, 2): "o", (2, 3): "o",
               (3, 1): "o", (3, 2): "x", (3, 3): "x"}  # fmt: skip

CELLS = [(row, column) for row in (1, 2, 3) for column in (1, 2, 3)]
