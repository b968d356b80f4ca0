"""The GDL rules engine: parse, validate and reason about games.

>>> from server.gdl import Game
>>> game = Game.from_text("(role r) (init p) (legal r go) (<= (next q) (true p)) "
...                       "(<= terminal (true q)) (goal r 100)")
>>> state = game.initial_state()
>>> [str(move) for move in game.legal_moves(state, "r")]
['go']
>>> game.is_terminal(game.next_state(state, ["go"]))
True
"""

from .errors import (
    GdlError,
    GdlSyntaxError,
    GdlValidationError,
    GoalError,
    IllegalMoveError,
    RulesTooLargeError,
)
from .game import DEFAULT_MAX_RULES_BYTES, Game
from .parser import Rule, parse_gdl
from .state import State
from .terms import Compound, Constant, Term, to_ggp, to_kif

__all__ = [
    "DEFAULT_MAX_RULES_BYTES",
    "Compound",
    "Constant",
    "Game",
    "GdlError",
    "GdlSyntaxError",
    "GdlValidationError",
    "GoalError",
    "IllegalMoveError",
    "Rule",
    "RulesTooLargeError",
    "State",
    "Term",
    "parse_gdl",
    "to_ggp",
    "to_kif",
]
