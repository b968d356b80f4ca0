"""The base of every player: four hooks a subclass fills in."""

from __future__ import annotations

import random

from server.gdl import State
from server.gdl.terms import Term

from .match import PlayerMatch


class Player:
    """A game-playing agent. Subclass it and implement :meth:`play`.

    The hooks run in a worker thread, one at a time per match, so a player may
    think with plain blocking code while its agent keeps answering INFO. A hook that
    is still running at the deadline is not interrupted, but the agent answers
    without it (``play`` then gets a random legal move sent in its place).
    """

    name: str = "Player"
    """The name the player gives in reply to INFO."""
    species: str | None = None
    """An optional species, also given in reply to INFO."""
    compiles_aside: bool = False
    """Whether the player wants a game its start clock could not compile compiled in
    another process while it plays (see :mod:`server.gdl.compile_aside`): search
    players do, as every transition they play faster is more search. The agent's
    ``compile_aside`` and ``GGP_COMPILE_ASIDE`` decide over it."""

    def __init__(self, *, name: str | None = None, seed: int | None = None) -> None:
        if name is not None:
            self.name = name
        self.seed = seed
        self.rng = random.Random(seed)

    def start(self, match: PlayerMatch) -> None:
        """A match begins; think about the game until ``match.time_left()`` runs out."""

    def play(self, match: PlayerMatch, state: State) -> Term:
        """Choose a legal move for ``match.role`` in ``state`` within ``match.time_left()``."""
        raise NotImplementedError

    def stop(self, match: PlayerMatch) -> None:
        """The match is over; ``match.state`` is the final state."""

    def abort(self, match: PlayerMatch) -> None:
        """The match was cancelled."""
