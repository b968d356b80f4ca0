"""Skill ratings with uncertainty, over every match of every tournament.

Why Weng-Lin (OpenSkill's Plackett-Luce model): GGP games have any number of roles and
goals that need not be zero-sum, and Elo and Glicko only rate one-on-one wins and
losses. Weng-Lin's Bayesian approximation rates a match of any number of sides from
their finishing order (ties allowed), keeps each player's uncertainty (sigma) beside the
skill (mu), and is the open, unpatented counterpart of TrueSkill. The `openskill`
package implements it, tested against the paper. Each role is a side of one player and
the sides are ranked by goal (higher is better, equal goals tie), so the goals' order
counts, not their sum. Matches the server aborted, forfeits and byes are skipped;
matches with player errors count. A match where one player holds several roles says
nothing about relative skill and is skipped too. Per-game ratings come from the same
functions over one game's results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from openskill.models import PlackettLuce
from pydantic import BaseModel, ConfigDict, computed_field

from .results import MatchResult, chronological

_MODEL = PlackettLuce()


class Rating(BaseModel):
    """A skill estimate: mean `mu`, uncertainty `sigma`."""

    model_config = ConfigDict(frozen=True)

    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ordinal(self) -> float:
        """A conservative figure to rank by: mu minus three sigmas."""
        return self.mu - 3 * self.sigma


class RatingPoint(BaseModel):
    """A player's rating just after one match."""

    model_config = ConfigDict(frozen=True)

    key: str
    finished_at: datetime | None
    rating: Rating


class RatingBook(BaseModel):
    """Every player's current rating and its history, match by match."""

    model_config = ConfigDict(frozen=True)

    ratings: dict[str, Rating] = {}
    history: dict[str, list[RatingPoint]] = {}

    def rating(self, player: str) -> Rating:
        """The player's rating (the prior if it has not played a rated match)."""
        return self.ratings.get(player, Rating())


def is_rated(result: MatchResult) -> bool:
    """Whether a result moves ratings: played by two or more distinct players."""
    return result.played and len(set(result.players)) == len(result.players) >= 2


def update_ratings(book: RatingBook, result: MatchResult) -> RatingBook:
    """The book after one more match (the same book when the match is not rated)."""
    if not is_rated(result):
        return book
    before = [book.rating(p) for p in result.players]
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    rated = _MODEL.rate(teams, ranks=[float(-goal) for goal in result.goals])
    ratings = dict(book.ratings)
    history = dict(book.history)
    for player, (new,) in zip(result.players, rated, strict=True):
        rating = Rating(mu=new.mu, sigma=new.sigma)
        ratings[player] = rating
        point = RatingPoint(key=result.key, finished_at=result.finished_at, rating=rating)
        history[player] = [*history.get(player, []), point]
    return RatingBook(ratings=ratings, history=history)


def recompute_ratings(results: Iterable[MatchResult]) -> RatingBook:
    """Ratings from the whole archive, replayed in the order the matches finished."""
    book = RatingBook()
    for result in chronological(results):
        book = update_ratings(book, result)
    return book


def order_by_rating(players: Sequence[str], ratings: Mapping[str, Rating]) -> list[str]:
    """Players best first by ordinal (unrated players at the prior), for seeding."""
    return sorted(players, key=lambda p: -ratings.get(p, Rating()).ordinal)
