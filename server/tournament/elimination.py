"""Single elimination: a seeded bracket of best-of-N series, two-role games only.

Seeds are the spec's player order (order them by rating first with
`server.tournament.ratings.order_by_rating` to seed from ratings). The bracket is the
standard one (1 against N, 2 against N-1, ... with 1 and 2 only meeting in the final);
when the field is not a power of two the top seeds get the byes. In a series the higher
seed plays the first role in matches 0, 2, 4, ... and the second role in the others.
A series is decided as soon as one side cannot be caught; a level series follows the
spec's tie-break (see `TournamentSpec`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .planned import PlannedMatch, match_key
from .results import MatchResult, match_points
from .spec import TournamentSpec


def bracket_order(size: int) -> list[int]:
    """Seed numbers (from 1) in bracket slot order: 1, size, ... for a power of two."""
    order = [1]
    while len(order) < size:
        mirror = 2 * len(order) + 1
        order = [seed for top in order for seed in (top, mirror - top)]
    return order


@dataclass(frozen=True)
class Series:
    """One tie of the bracket: the higher seed, the lower seed (None: a bye), the winner."""

    round: int
    table: int
    high: str
    low: str | None
    points: tuple[float, float]
    played: int
    winner: str | None
    next_match: PlannedMatch | None


@dataclass(frozen=True)
class EliminationPlan:
    """The bracket as far as results decide it."""

    rounds: list[list[Series]]
    matches: list[PlannedMatch]
    """Every match the series have needed so far, the next ones included."""
    champion: str | None


def elimination_plan(spec: TournamentSpec, results: Mapping[str, MatchResult]) -> EliminationPlan:
    """Replay the bracket from the results by slot."""
    size = 1
    while size < len(spec.players):
        size *= 2
    entrants: list[str | None] = [
        spec.players[seed - 1] if seed <= len(spec.players) else None
        for seed in bracket_order(size)
    ]
    rounds: list[list[Series]] = []
    matches: list[PlannedMatch] = []
    number = 1
    while len(entrants) > 1:
        series_list: list[Series] = []
        for table in range(len(entrants) // 2):
            top, bottom = entrants[2 * table], entrants[2 * table + 1]
            assert top is not None, "a bye only ever faces a seed in the top half"
            if bottom is None:
                series_list.append(Series(number, table, top, None, (0.0, 0.0), 0, top, None))
                continue
            high, low = sorted((top, bottom), key=lambda p: _seed(spec, p))
            series, needed = _series(spec, results, number, table, high, low)
            series_list.append(series)
            matches.extend(needed)
        rounds.append(series_list)
        winners = [series.winner for series in series_list]
        if any(w is None for w in winners):
            return EliminationPlan(rounds, matches, None)
        entrants = list(winners)
        number += 1
    return EliminationPlan(rounds, matches, entrants[0])


def _seed(spec: TournamentSpec, player: str) -> int:
    return spec.players.index(player)


def _series(
    spec: TournamentSpec,
    results: Mapping[str, MatchResult],
    number: int,
    table: int,
    high: str,
    low: str,
) -> tuple[Series, list[PlannedMatch]]:
    """The series' state and the matches it has needed, from the results of its matches."""
    length = spec.series_length
    extra = spec.max_extra_matches if spec.elimination_tiebreak == "extra_matches" else 0
    points = [0.0, 0.0]
    needed: list[PlannedMatch] = []
    for game_index in range(length + extra):
        match = _match(spec, number, table, game_index, high, low)
        needed.append(match)
        result = results.get(match.key)
        if result is None:
            return Series(number, table, high, low, _pair(points), game_index, None, match), needed
        gained = dict(zip(result.players, match_points(result, spec.points), strict=True))
        points[0] += gained[high]
        points[1] += gained[low]
        played = game_index + 1
        if played <= length:
            remaining = length - played
            if points[0] > points[1] + remaining or points[1] > points[0] + remaining:
                break
        elif gained[high] != gained[low]:
            break
    winner = high if points[0] >= points[1] else low
    return Series(number, table, high, low, _pair(points), len(needed), winner, None), needed


def _pair(points: list[float]) -> tuple[float, float]:
    return (points[0], points[1])


def _match(
    spec: TournamentSpec, number: int, table: int, game_index: int, high: str, low: str
) -> PlannedMatch:
    seating = (high, low) if game_index % 2 == 0 else (low, high)
    return PlannedMatch(
        key=match_key(number, table, game_index, [_seed(spec, p) for p in seating]),
        round=number,
        table=table,
        game_index=game_index,
        game=spec.game,
        players=list(seating),
        startclock=spec.startclock,
        playclock=spec.playclock,
    )
