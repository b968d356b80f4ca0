"""Standings: points by the spec's rule, then the format's tie-breaks, best first.

Points per match (`TournamentSpec.points`): `outcome` gives 1 for a win, 0.5 for a
draw and 0 for a loss against each opponent, averaged over the opponents (so two-role
zero-sum games score win/draw/loss as usual); `goals` gives the goal over 100, for
games that are not zero-sum. A forfeit scores 0 for the failed player (the others win);
a Swiss bye scores as a win. Matches the server aborted count for nothing.

Tie-breaks, in order: Swiss uses Buchholz (the sum of the points of each round's
opponent), then head-to-head (points scored in matches among the tied players), then
wins; round robin and the ladder use head-to-head, then wins; single elimination ranks
by the round reached, then points, head-to-head and wins. The seed order settles what
is still level.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .elimination import elimination_plan
from .failures import failed_players
from .planned import PlayerStatus
from .results import ERROR_CODES, ErrorCode, MatchResult, match_points, outcomes, results_by_slot
from .spec import TournamentSpec

Status = Literal["active", "failed", "withdrawn", "eliminated", "winner"]


class Standing(BaseModel):
    """One player's line in the standings."""

    model_config = ConfigDict(frozen=True)

    player: str
    rank: int
    points: float
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    forfeits: int
    """Matches the player lost by forfeit."""
    tiebreaks: dict[str, float]
    """The format's tie-breaks, in the order they apply."""
    errors: dict[ErrorCode, int]
    status: Status


def standings(
    spec: TournamentSpec,
    results: Sequence[MatchResult],
    players: Mapping[str, PlayerStatus] | None = None,
) -> list[Standing]:
    """Every player of the spec, best first, from the tournament's results."""
    counted = list(results_by_slot(results).values())
    tally = _tally(spec, counted)
    failed = failed_players(spec.players, results, players or {})
    reached: dict[str, float] = {}
    eliminated: set[str] = set()
    champion = None
    if spec.format == "single_elimination":
        bracket = elimination_plan(spec, results_by_slot(results))
        champion = bracket.champion
        for series_round in bracket.rounds:
            for series in series_round:
                for player in (series.high, series.low):
                    if player is not None:
                        reached[player] = series.round
                if series.winner is not None and series.low is not None:
                    eliminated.add(series.low if series.winner == series.high else series.high)
        if champion is not None:
            reached[champion] = len(bracket.rounds) + 1

    def group_key(player: str) -> tuple[float, ...]:
        if spec.format == "swiss":
            return (tally.points[player], _buchholz(spec, counted, tally.points, player))
        if spec.format == "single_elimination":
            return (reached.get(player, 0), tally.points[player])
        return (tally.points[player],)

    groups: dict[tuple[float, ...], list[str]] = defaultdict(list)
    for player in spec.players:
        groups[group_key(player)].append(player)
    head_to_head = {
        player: _head_to_head(spec, counted, player, set(group))
        for group in groups.values()
        for player in group
    }
    order = sorted(
        spec.players,
        key=lambda p: (
            tuple(-v for v in group_key(p)),
            -head_to_head[p],
            -tally.wins[p],
            spec.players.index(p),
        ),
    )
    table = []
    for rank, player in enumerate(order, start=1):
        tiebreaks: dict[str, float] = {}
        if spec.format == "swiss":
            tiebreaks["buchholz"] = group_key(player)[1]
        if spec.format == "single_elimination":
            tiebreaks["round_reached"] = reached.get(player, 0)
        tiebreaks["head_to_head"] = head_to_head[player]
        tiebreaks["wins"] = tally.wins[player]
        status: Status = "active"
        if player == champion:
            status = "winner"
        elif tally.forfeits[player]:
            status = "withdrawn"
        elif player in eliminated:
            status = "eliminated"
        elif player in failed:
            status = "failed"
        table.append(
            Standing(
                player=player,
                rank=rank,
                points=tally.points[player],
                played=tally.played[player],
                wins=tally.wins[player],
                draws=tally.draws[player],
                losses=tally.losses[player],
                byes=tally.byes[player],
                forfeits=tally.forfeits[player],
                tiebreaks=tiebreaks,
                errors={code: tally.errors[player, code] for code in ERROR_CODES},
                status=status,
            )
        )
    return table


class _Tally:
    def __init__(self) -> None:
        self.points: defaultdict[str, float] = defaultdict(float)
        self.played: Counter[str] = Counter()
        self.wins: Counter[str] = Counter()
        self.draws: Counter[str] = Counter()
        self.losses: Counter[str] = Counter()
        self.byes: Counter[str] = Counter()
        self.forfeits: Counter[str] = Counter()
        self.errors: Counter[tuple[str, ErrorCode]] = Counter()


def _tally(spec: TournamentSpec, results: Sequence[MatchResult]) -> _Tally:
    tally = _Tally()
    for result in results:
        points = match_points(result, spec.points)
        for role, (player, outcome) in enumerate(
            zip(result.players, outcomes(result), strict=True)
        ):
            tally.points[player] += points[role]
            if result.bye:
                tally.byes[player] += 1
                continue
            tally.played[player] += 1
            {"win": tally.wins, "draw": tally.draws, "loss": tally.losses}[outcome][player] += 1
            tally.forfeits[player] += result.forfeited(role)
            for code in ERROR_CODES:
                tally.errors[player, code] += result.error_count(role, code)
    return tally


def _buchholz(
    spec: TournamentSpec, results: Sequence[MatchResult], points: Mapping[str, float], player: str
) -> float:
    """The sum of the points of the opponent of each round the player played."""
    opponents = {
        (result.key.split("/", 1)[0], other)
        for result in results
        if player in result.players and not result.bye
        for other in result.players
        if other != player
    }
    return sum(points[other] for _, other in opponents)


def _head_to_head(
    spec: TournamentSpec, results: Sequence[MatchResult], player: str, group: set[str]
) -> float:
    """Points the player scored in matches where every opponent is in its tied group."""
    if len(group) < 2:
        return 0.0
    total = 0.0
    for result in results:
        if player in result.players and not result.bye and set(result.players) <= group:
            total += match_points(result, spec.points)[result.players.index(player)]
    return total
