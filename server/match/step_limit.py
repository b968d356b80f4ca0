"""The default step limit of a game, for games that may never end.

Rule: up to 8 random playouts from the initial state with a fixed seed, each cut
at 1000 steps, and 4000 steps in all.  The limit is four times the longest playout
that reached a terminal state, at least 100; if a playout reached 1000 steps or
got stuck (a rules error, a role without a legal move), at least 1000.  A playout that the 4000-step allowance cuts short counts for nothing
(and when no playout ended, the game counts as cut).  The bound depends on the game
and the seed only, never on the speed of the machine or its load; the time it may
take is bounded by the load budget of the rules worker that computes it
(:mod:`server.match.rules`).  The result is cached per :class:`~server.gdl.Game`.
"""

from __future__ import annotations

import random
import weakref

from server.gdl import Game, GdlError

SEED = 20240601
PLAYOUTS = 8
PLAYOUT_CAP = 1000
TOTAL_STEPS = 4000
MINIMUM = 100
FACTOR = 4

_cache: weakref.WeakKeyDictionary[Game, int] = weakref.WeakKeyDictionary()


def default_step_limit(game: Game) -> int:
    """A generous step limit for ``game`` (see the module documentation for the rule)."""
    cached = _cache.get(game)
    if cached is not None:
        return cached
    rng = random.Random(SEED)
    allowance = TOTAL_STEPS
    longest_finished = 0
    cut = False
    for _ in range(PLAYOUTS):
        if allowance <= 0:
            break
        steps, outcome = _playout(game, rng, min(PLAYOUT_CAP, allowance))
        allowance -= steps
        if outcome == "finished":
            longest_finished = max(longest_finished, steps)
        elif outcome == "stuck" or steps >= PLAYOUT_CAP:
            cut = True
    if longest_finished == 0 and allowance <= 0:
        cut = True
    limit = max(MINIMUM, FACTOR * longest_finished, PLAYOUT_CAP if cut else 0)
    _cache[game] = limit
    return limit


def _playout(game: Game, rng: random.Random, cap: int) -> tuple[int, str]:
    """The steps of one random playout, and ``finished``, ``cut`` or ``stuck``."""
    steps = 0
    try:
        state = game.initial_state()
        while not game.is_terminal(state):
            if steps >= cap:
                return steps, "cut"
            moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, moves)
            steps += 1
    except (GdlError, IndexError):
        return steps, "stuck"
    return steps, "finished"
