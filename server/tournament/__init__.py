"""Tournaments as pure functions: formats, the next matches to queue, standings, ratings.

No I/O: the hosting service stores the spec and the results, calls `next_matches` for
the matches to queue (and the byes and forfeits to record), and shows `standings`.
"""

from .elimination import EliminationPlan, Series, bracket_order, elimination_plan
from .failures import failed_players
from .planned import NextMatches, Pause, PlannedMatch, PlayerStatus, match_key
from .ratings import (
    Rating,
    RatingBook,
    RatingPoint,
    is_rated,
    order_by_rating,
    recompute_ratings,
    update_ratings,
)
from .results import ErrorCode, MatchResult, PointsRule, match_points, outcome_points
from .round_robin import round_robin_schedule
from .scheduler import next_matches
from .spec import TournamentSpec, TournamentSpecError, check_roles, parse_spec
from .standings import Standing, standings
from .statistics import PlayerFigures, player_figures
from .swiss import SwissPlan, SwissRound, swiss_plan

__all__ = [
    "EliminationPlan",
    "ErrorCode",
    "MatchResult",
    "NextMatches",
    "Pause",
    "PlannedMatch",
    "PlayerFigures",
    "PlayerStatus",
    "PointsRule",
    "Rating",
    "RatingBook",
    "RatingPoint",
    "Series",
    "Standing",
    "SwissPlan",
    "SwissRound",
    "TournamentSpec",
    "TournamentSpecError",
    "bracket_order",
    "check_roles",
    "elimination_plan",
    "failed_players",
    "is_rated",
    "match_key",
    "match_points",
    "next_matches",
    "order_by_rating",
    "outcome_points",
    "parse_spec",
    "player_figures",
    "recompute_ratings",
    "round_robin_schedule",
    "standings",
    "swiss_plan",
    "update_ratings",
]
