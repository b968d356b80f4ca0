"""The legal player: always the first legal move in the engine's fixed order."""

from __future__ import annotations

from server.gdl import State
from server.gdl.terms import Term

from .base import Player
from .match import PlayerMatch


class LegalPlayer(Player):
    """Plays the first legal move; the same position always gets the same move."""

    name = "Legal"

    def play(self, match: PlayerMatch, state: State) -> Term:
        return match.legal_moves(state)[0]
