"""Search players: Monte Carlo tree search (``mcts``) and flat Monte Carlo (``montecarlo``)."""

from .flat import MonteCarloPlayer
from .player import MctsPlayer

__all__ = ["MctsPlayer", "MonteCarloPlayer"]
