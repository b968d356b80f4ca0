"""The random player: a uniformly random legal move."""

from __future__ import annotations

from server.gdl import State
from server.gdl.terms import Term

from .base import Player
from .match import PlayerMatch


class RandomPlayer(Player):
    """Plays a legal move chosen uniformly at random (reproducibly when given a seed)."""

    name = "Random"

    def play(self, match: PlayerMatch, state: State) -> Term:
        return self.rng.choice(match.legal_moves(state))
