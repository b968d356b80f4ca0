"""What a tournament page draws, as plain data: the crosstable and the bracket.

Pure functions of the spec and the results (the same results the standings are made of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.tournament import MatchResult, TournamentSpec, elimination_plan
from server.tournament.results import match_points, results_by_slot


@dataclass(frozen=True)
class Cell:
    """What the row player scored against the column player: points out of matches."""

    points: float
    matches: int


def crosstable(spec: TournamentSpec, results: Sequence[MatchResult]) -> list[list[Cell | None]]:
    """Rows and columns in the spec's player order; the diagonal is None.

    Each counted match adds, for every pair of its players, what the row player scored
    against the column player: under the ``outcome`` rule 1 for a higher goal, 0.5 for
    the same goal, 0 for a lower one (a forfeit loses); under ``goals`` the row
    player's points of the match. In a two-role match that is the match's points.
    """
    index = {player: i for i, player in enumerate(spec.players)}
    size = len(spec.players)
    points = [[0.0] * size for _ in range(size)]
    counts = [[0] * size for _ in range(size)]
    for result in results_by_slot(results).values():
        if result.bye or result.aborted_by_server:
            continue
        scored = match_points(result, spec.points)
        for mine, player in enumerate(result.players):
            for theirs, other in enumerate(result.players):
                if theirs == mine or player not in index or other not in index:
                    continue
                if spec.points == "goals":
                    gained = scored[mine]
                else:
                    gained = _against(result, mine, theirs)
                points[index[player]][index[other]] += gained
                counts[index[player]][index[other]] += 1
    return [
        [None if r == c else Cell(points[r][c], counts[r][c]) for c in range(size)]
        for r in range(size)
    ]


def _against(result: MatchResult, mine: int, theirs: int) -> float:
    if result.forfeited(mine) or result.forfeited(theirs):
        return 0.0 if result.forfeited(mine) else 1.0
    difference = result.goals[mine] - result.goals[theirs]
    return 1.0 if difference > 0 else 0.5 if difference == 0 else 0.0


@dataclass(frozen=True)
class Tie:
    """One series of the bracket as drawn: two sides, their points, the winner."""

    high: str | None
    low: str | None
    points: tuple[float, float] | None
    winner: str | None
    bye: bool = False


def bracket(spec: TournamentSpec, results: Sequence[MatchResult]) -> list[list[Tie]]:
    """Every round of a single elimination, the undecided ones with empty sides."""
    size = 1
    while size < len(spec.players):
        size *= 2
    plan = elimination_plan(spec, results_by_slot(results))
    rounds: list[list[Tie]] = []
    for series_round in plan.rounds:
        rounds.append(
            [
                Tie(
                    s.high,
                    s.low,
                    None if s.low is None else s.points,
                    s.winner,
                    bye=s.low is None,
                )
                for s in series_round
            ]
        )
    ties = len(rounds[-1]) // 2 if rounds else size // 2
    while ties >= 1:
        previous = rounds[-1] if rounds else []
        drawn = []
        for table in range(ties):
            sides = [t.winner for t in previous[2 * table : 2 * table + 2]]
            sides += [None] * (2 - len(sides))
            drawn.append(Tie(sides[0], sides[1], None, None))
        rounds.append(drawn)
        ties //= 2
    return rounds


def round_name(number: int, count: int) -> str:
    """``Final``, ``Semi-finals``, ``Quarter-finals`` or ``Round N`` (from 1)."""
    from_last = count - number
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(from_last, f"Round {number}")
