"""The default step limit of a game, for games that may never end.

Rule: play up to 8 random playouts from the initial state (a fixed seed, so the
same game always gets the same bound), each cut at 1000 steps, within about 2 s.
The limit is four times the longest playout that reached a terminal state, at least
100; if any playout was cut, at least 1000.  Games that end quickly get a bound far
above any real match, and a game that can go on forever (noop loops) still ends.
The result is cached per :class:`~server.gdl.Game` object.
"""

from __future__ import annotations

import random
import time
import weakref

from server.gdl import Game, GdlError

PLAYOUTS = 8
PLAYOUT_CAP = 1000
MINIMUM = 100
FACTOR = 4
TIME_BUDGET = 2.0

_cache: weakref.WeakKeyDictionary[Game, int] = weakref.WeakKeyDictionary()


def default_step_limit(game: Game) -> int:
    """A generous step limit for ``game`` (see the module documentation for the rule)."""
    cached = _cache.get(game)
    if cached is not None:
        return cached
    rng = random.Random(20240601)
    deadline = time.monotonic() + TIME_BUDGET
    longest_finished = 0
    cut = False
    for _ in range(PLAYOUTS):
        steps = _playout(game, rng, deadline)
        if steps is None:
            cut = True
        else:
            longest_finished = max(longest_finished, steps)
        if time.monotonic() > deadline:
            cut = True
            break
    limit = max(MINIMUM, FACTOR * longest_finished, PLAYOUT_CAP if cut else 0)
    _cache[game] = limit
    return limit


def _playout(game: Game, rng: random.Random, deadline: float) -> int | None:
    """The length of one random playout, or ``None`` when it was cut or got stuck."""
    try:
        state = game.initial_state()
        steps = 0
        while not game.is_terminal(state):
            if steps >= PLAYOUT_CAP or time.monotonic() > deadline:
                return None
            moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, moves)
            steps += 1
    except (GdlError, IndexError):
        return None
    return steps
