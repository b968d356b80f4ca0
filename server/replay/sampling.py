"""A few states of a game from seeded random playouts, for finding its boards."""

from __future__ import annotations

import random
import time

from server.gdl import Game
from server.gdl.terms import RawTerm


def sample_states(
    game: Game, *, seed: int = 0, playouts: int = 4, max_steps: int = 40, budget: float = 0.5
) -> list[frozenset[RawTerm]]:
    """The initial state and the states of short random playouts, within ``budget`` seconds.

    Deterministic for a seed but for where the time budget cuts it short.
    """
    rng = random.Random(seed)
    deadline = time.monotonic() + budget
    first = game.initial_state()
    states = [first.facts]
    for _ in range(playouts):
        state = first
        for _ in range(max_steps):
            if time.monotonic() > deadline or game.is_terminal(state):
                break
            moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, moves)
            states.append(state.facts)
    return states
