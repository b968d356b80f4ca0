"""Tournaments in the hosting service: the driver that queues a tournament's matches
through the match queue, results read from stored matches, ratings kept up to date.

The rules live in ``server.tournament`` (pure functions); this package does the I/O.
"""

from .driver import TournamentDriver
from .ratings import RatingKeeper, recompute_stored_ratings
from .results import is_server_abort, match_result

__all__ = [
    "RatingKeeper",
    "TournamentDriver",
    "is_server_abort",
    "match_result",
    "recompute_stored_ratings",
]
