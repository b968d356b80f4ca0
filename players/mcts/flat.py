"""Flat Monte Carlo: random playouts spread evenly over the root moves, no tree.

The baseline the ``mcts`` player is measured against: every role's moves at the root
are sampled in turn (the least-tried first), each sample plays the rest of the game
at random, and the move with the best average wins.
"""

from __future__ import annotations

import math
import random

from .model import Model
from .player import SearchPlayer
from .search import Search


class FlatSearch(Search):
    """Uniform sampling of the root moves; nothing is stored below the root."""

    def iterate(self, stop_at: float = math.inf) -> bool:
        root = self.root
        assert root is not None
        if root.solved is not None:
            return False
        joint = []
        for visits in root.visits:
            fewest = min(visits)
            joint.append(self.rng.choice([j for j, n in enumerate(visits) if n == fewest]))
        key = self.model.next(root.key, [root.legal[r][j] for r, j in enumerate(joint)])
        reward = self._leaf_value(key, stop_at)
        if reward is None:
            return False
        root.n += 1
        for r, j in enumerate(joint):
            root.visits[r][j] += 1
            root.totals[r][j] += reward[r]
        self.iterations += 1
        return True

    def best_move(self, role: int) -> object:
        root = self.root
        assert root is not None
        visits, totals = root.visits[role], root.totals[role]
        best = max(range(len(visits)), key=lambda j: totals[j] / max(visits[j], 1))
        return root.legal[role][best]


class MonteCarloPlayer(SearchPlayer):
    """Flat Monte Carlo on the whole clock (a baseline for the ``mcts`` player)."""

    name = "MonteCarlo"
    species = "flat-montecarlo"

    def new_search(self, model: Model, rng: random.Random) -> Search:
        return FlatSearch(model, rng, solver=False)
